{#-
  Schema change events of Debezium's MySQL and MariaDB connectors, in binlog
  order (a snapshot's DDL shares one position: the offset orders it): its
  branch of silver.cdc_schema_changes (a producer step, macros/platform/producer_registry.sql).
-#}
{% macro debezium_schema_changes() %}
    select
        message_id,
        'debezium' as source_format,
        case when source_table is not null then table_id end as table_id,
        ddl_operation,
        ddl_text,
        commit_ts,
        {#- A snapshot's DDL shares one binlog position: the offset keeps it in order. -#}
        concat_ws(':', source_position, lpad(cast(source_offset as string), 20, '0')) as sequence,
        ingested_at
    from {{ ref('stg_debezium__messages') }}
    where message_kind = 'schema_change' and quarantine_reason is null
{% endmacro %}
