"""Tooling around the pipeline, not landing: nothing here runs in production ingest.

- :mod:`cdc_tools.generators`: traffic generators of CDC messages as CES, Debezium,
  DataWorks and Qlik send them, for the tests, the demos and the benchmarks.
- :mod:`cdc_tools.scaffold`: writes the typed gold models (``models/gold/published/``)
  and their seed rows from ``silver.cdc_table_columns``.

Both are reached through the one CLI, ``python -m python_ingest generate`` and
``python -m python_ingest scaffold``, which import them lazily; the landing package
``python_ingest`` never imports them otherwise.
"""
