{#-
  Debezium's messages about the stream: tombstones, logical decoding messages
  (prefix and content), transaction markers (BEGIN / END) and schema history
  records; its branch of silver.cdc_control_events (a producer step,
  macros/platform/producer_registry.sql).
-#}
{% macro debezium_control_events() %}
    select
        message_id,
        'debezium' as source_format,
        case
            when message_kind = 'transaction' then concat('transaction_', lower(transaction_status))
            else message_kind
        end as control_type,
        connector as source_connector,
        nullif(table_id, '') as table_id,
        commit_ts,
        transaction_id,
        key_text as message_key,
        message_prefix,
        message_content as content_base64,
        cast(unbase64(message_content) as string) as content_text,
        ingested_at
    from {{ ref('stg_debezium__messages') }}
    where
        message_kind in ('tombstone', 'logical_message', 'transaction', 'schema_history')
        and quarantine_reason is null
{% endmacro %}
