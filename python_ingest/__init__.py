"""Landing of raw CDC messages into the bronze tables of the lakehouse.

``python -m python_ingest land --format FORMAT --container CONTAINER PATH...``
reads files (JSON lines, kcat dumps, Event Hubs Capture Avro) and appends
their messages, undecoded, to ``bronze.raw_<format>``. Parsing happens in dbt.
This package holds landing only: the command line is package ``cdc_cli``, the continuous
pipeline ``cdc_pipeline``, the producer registry ``cdc_registry``, the traffic generators and
the gold scaffolding ``cdc_tools`` (docs/architecture.md, "Python packages").
"""
