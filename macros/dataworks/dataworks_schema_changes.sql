{#-
  The dataworks producer's rows of silver.cdc_schema_changes (the producer step `schema_changes` of
  macros/platform/producers.sql, called by models/silver/cdc_schema_changes.sql).
-#}
{% macro dataworks_schema_changes() %}
    select
        message_id,
        'dataworks' as source_format,
        table_id,
        operation_code as ddl_operation,
        ddl_text,
        commit_ts,
        sequence,
        ingested_at
    from {{ ref('stg_dataworks__messages') }}
    where message_kind = 'ddl' and quarantine_reason is null
{% endmacro %}
