"""Tooling around the pipeline, not landing: nothing here runs in production ingest.

- :mod:`cdc_tools.generators`: traffic generators of CDC messages as CES, Debezium,
  DataWorks and Qlik send them, for the tests, the demos and the benchmarks.
- :mod:`cdc_tools.scaffold`: writes the typed gold models (``models/gold/published/``)
  and their seed rows from ``silver.cdc_table_columns``.

Both are reached through the command line (package ``cdc_cli``: ``python -m python_ingest
generate`` and ``python -m python_ingest scaffold``). They read the producer registry
(``cdc_registry``) and nothing of landing (docs/architecture.md, "Python packages").
"""
