{#-
  DataWorks heartbeats (MHEARTBEAT) and transaction markers: its branch of
  silver.cdc_control_events (a producer step, macros/platform/producer_registry.sql).
-#}
{% macro dataworks_control_events() %}
    select
        message_id,
        'dataworks' as source_format,
        lower(operation_code) as control_type,
        source_connector,
        nullif(table_id, '') as table_id,
        commit_ts,
        sequence_id as transaction_id,
        cast(null as string) as message_key,
        cast(null as string) as message_prefix,
        cast(null as string) as content_base64,
        cast(null as string) as content_text,
        ingested_at
    from {{ ref('stg_dataworks__messages') }}
    where message_kind = 'control' and quarantine_reason is null
{% endmacro %}
