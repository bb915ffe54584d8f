{#-
  DataWorks DDL messages (CREATE, ALTER, TRUNCATE, RENAME, ERASE, index
  changes) with their text: its branch of silver.cdc_schema_changes.
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
