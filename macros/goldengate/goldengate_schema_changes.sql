{#-
  The JSON schema documents GoldenGate's Kafka handler publishes to its schema topic
  (one when a table is first seen and again after its definition changed: the trail's
  metadata, after DDL on the source), with the table's columns: its branch of
  silver.cdc_schema_changes (a producer step, macros/platform/producer_registry.sql).
  The JSON formatter sends no DDL statement itself (docs/producers/goldengate.md).
-#}
{% macro goldengate_schema_changes() %}
    select
        message_id,
        'goldengate' as source_format,
        table_id,
        'JSON_SCHEMA' as ddl_operation,
        schema_text as ddl_text,
        commit_ts,
        sequence,
        ingested_at
    from {{ ref('stg_goldengate__messages') }}
    where message_kind = 'schema' and quarantine_reason is null
{% endmacro %}
