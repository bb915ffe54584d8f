{{ config(unique_key='message_id') }}

{#-
  What became of every distinct Debezium message: change, duplicate (a
  redelivered copy of a change already received), control (a tombstone, a
  logical decoding message, a transaction marker, a schema change event or
  a schema history record) or quarantined, with the reason. A row change
  not decoded yet is pending: the Python model int_debezium__decoded runs in
  session targets only, so a build through the SQL endpoint (`--target
  thrift --exclude tag:python`) leaves it for the next local build.
  Incremental: a run decides the messages staged since its last run, and the
  pending ones again. Their decoded changes were staged after them, so it
  reads only the changes staged since then, and those of the pending ones.
-#}

{%- set since = last_staged_at() %}

with

{% if is_incremental() -%}
    still_pending as (
        select message_id from {{ this }}
        where outcome = 'pending'
    ),
{%- endif %}

messages as (
    select *
    from {{ ref('stg_debezium__messages') }}
    where
        {{ staged_after(ref('stg_debezium__messages'), since) }}
        {% if is_incremental() -%}
            or message_id in (select still_pending.message_id from still_pending)
        {%- endif %}
),

changes as (
    select *
    from {{ ref('int_debezium__changes') }}
    where
        {{ staged_after(ref('int_debezium__changes'), since) }}
        {% if is_incremental() -%}
            or message_id in (select still_pending.message_id from still_pending)
        {%- endif %}
),

final as (
    select
        messages.message_id,
        'debezium' as source_format,
        case
            when messages.quarantine_reason is not null then 'quarantined'
            when
                messages.message_kind in (
                    'tombstone', 'logical_message', 'transaction', 'schema_change', 'schema_history'
                )
                then 'control'
            when changes.message_id is null then 'pending'
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
            when messages.message_kind = 'transaction'
                then concat(
                        'Transaction marker ', coalesce({{ shown("messages.transaction_status") }}, ''),
                        ' of transaction ', coalesce({{ shown("messages.transaction_id") }}, '(none)'),
                        ' (provide.transaction.metadata): kept in silver.cdc_control_events.'
                    )
            when messages.message_kind = 'schema_change'
                then concat(
                        'Schema change event (', coalesce({{ shown("messages.ddl_operation") }}, 'DDL'),
                        '): kept in silver.cdc_schema_changes; the row images of later changes carry the new columns.'
                    )
            when messages.message_kind = 'schema_history'
                then concat(
                        "A record of the connector's own schema history topic ",
                        '(schema.history.internal.kafka.topic), not a change: kept in silver.cdc_control_events. ',
                        'Landing that topic is not needed; the schema change topic reports the same DDL.'
                    )
            when changes.message_id is null
                then concat(
                        'Not decoded yet: the Python model int_debezium__decoded has not run since the ',
                        'message was staged (it runs in session targets, e.g. `dbt build` with the local target).'
                    )
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
