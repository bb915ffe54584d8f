{{ config(materialized='view') }}

{#-
  Messages that are not row changes but say something about the stream:
  Debezium tombstones (Kafka compaction markers after deletes), logical
  decoding messages (PostgreSQL pg_logical_emit_message: prefix and
  content), transaction markers (BEGIN / END on `<prefix>.transaction`) and
  schema history records (the connector's own DDL log), DataWorks
  heartbeats (MHEARTBEAT) and transaction markers.
  Each is `control` in cdc_message_outcomes. A view over the
  producers' incremental staging tables.
-#}

with

debezium as (
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
),

dataworks as (
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
),

final as (
    select * from debezium
    union all
    select * from dataworks
)

select * from final
