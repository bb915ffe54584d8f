{#-
  The metadata columns of gold.cdc_history, defined once. The fold's state
  takes their types (history_version_fields); a typed model may declare
  them next to its source columns (macros/gold/typed_tables.sql); and
  python_ingest/scaffold.py reads this file with plain Jinja (no dbt) to
  write them, with their types and descriptions, into the typed models'
  YAML. So this file holds this one macro, in plain Jinja only.
-#}

{% macro history_metadata_columns() -%}
    {#- In the typed history models' order: name, Spark type, description;
        `current_description` for those the typed live-row models have too. -#}
    {{ return([
        {
            "name": "version_number",
            "data_type": "int",
            "description": "1, 2, 3 … per key, in the source's commit order.",
        },
        {
            "name": "valid_from",
            "data_type": "timestamp",
            "description": "Commit time of the change that started this version (UTC).",
            "current_description": "Commit time of the change that started the live version (UTC).",
        },
        {
            "name": "valid_to",
            "data_type": "timestamp",
            "description": "valid_from of the next version; null while this version is open.",
        },
        {
            "name": "is_current",
            "data_type": "boolean",
            "description": "True on the last version of each key, and only there.",
        },
        {
            "name": "is_deleted",
            "data_type": "boolean",
            "description": "True on a version that records a delete or truncate.",
        },
        {
            "name": "is_active",
            "data_type": "boolean",
            "description": "True on the live version of a key: current and not deleted.",
        },
        {
            "name": "live_until",
            "data_type": "timestamp",
            "description": "The last instant this version was live: just before valid_to, 9999-12-31 while open, null on a delete. Rows live at t: where t between valid_from and live_until.",
        },
        {
            "name": "operation",
            "data_type": "string",
            "description": "The change that started this version: insert, update, delete, snapshot or truncate.",
        },
        {
            "name": "change_id",
            "data_type": "string",
            "description": "The silver change (silver.cdc_changes) that started this version.",
            "current_description": "The silver change (silver.cdc_changes) that started the live version.",
        },
        {
            "name": "sequence",
            "data_type": "string",
            "description": "The source position of the change that started this version: sorting a key's versions by it gives their commit order.",
        },
        {
            "name": "source_format",
            "data_type": "string",
            "description": "The producer of the change that started this version: a name of the producer registry (cdc_producers).",
        },
        {
            "name": "transaction_id",
            "data_type": "string",
            "description": "The source transaction of the change that started this version, where the producer sends one.",
        },
        {
            "name": "ingested_at",
            "data_type": "timestamp",
            "description": "When the message of the change that started this version was landed (UTC).",
        },
    ]) }}
{%- endmacro %}
