{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='message_id',
        on_schema_change='fail',
    )
}}

{#-
  What became of every distinct Debezium message: change, duplicate (a
  redelivered copy of a change already received), control (a tombstone or
  a logical decoding message) or quarantined, with the reason. Nothing is
  pending: every Debezium message is complete in itself. Incremental: a run
  decides the messages staged since its last run. Their decoded changes
  were staged after them, so it reads only the changes staged since then too.
-#}

{%- set since = last_staged_at() %}

with

messages as (
    select *
    from {{ ref('stg_debezium__messages') }}
    where {{ staged_after(ref('stg_debezium__messages'), since) }}
),

changes as (
    select *
    from {{ ref('int_debezium__changes') }}
    where {{ staged_after(ref('int_debezium__changes'), since) }}
),

final as (
    select
        messages.message_id,
        'debezium' as source_format,
        case
            when messages.quarantine_reason is not null then 'quarantined'
            when messages.message_kind in ('tombstone', 'logical_message') then 'control'
            when changes.message_id is null then 'quarantined'
            when changes.quarantine_reason is not null then 'quarantined'
            when changes.is_duplicate then 'duplicate'
            else 'change'
        end as outcome,
        case
            when messages.quarantine_reason is not null then messages.quarantine_reason
            when messages.message_kind = 'tombstone'
                then concat(
                        'Tombstone (null value) for key ', coalesce({{ shown("messages.key_text") }}, '(none)'),
                        ': Kafka log compaction marker after a delete, not a change of its own.'
                    )
            when messages.message_kind = 'logical_message'
                then concat(
                        "Logical decoding message with prefix '", coalesce({{ shown("messages.message_prefix") }}, ''),
                        "': kept in silver.cdc_control_events."
                    )
            when changes.message_id is null then 'The message was not decoded (internal error: no decoded row).'
            when changes.quarantine_reason is not null then changes.quarantine_reason
            when changes.is_duplicate
                then concat('A redelivered copy of change ', changes.change_id, '.')
            else concat('Change ', changes.change_id, '.')
        end as detail,
        messages.ingested_at,
        current_timestamp() as staged_at
    from messages
    left join changes on messages.message_id = changes.message_id
)

select * from final
