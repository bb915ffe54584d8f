{#-
  Canal DDL messages (CREATE, ALTER, ERASE, TRUNCATE, RENAME, CINDEX, DINDEX,
  QUERY) with their `sql`: its branch of silver.cdc_schema_changes (a producer
  step, macros/platform/producer_registry.sql).
-#}
{% macro canal_schema_changes() %}
    select
        message_id,
        'canal' as source_format,
        table_id,
        operation_code as ddl_operation,
        ddl_text,
        commit_ts,
        message_position as sequence,
        ingested_at
    from {{ ref('stg_canal__messages') }}
    where message_kind = 'ddl' and quarantine_reason is null
{% endmacro %}
