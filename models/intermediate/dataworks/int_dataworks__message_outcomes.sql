{{ config(unique_key='message_id') }}

{#-
  What became of every distinct DataWorks message: change, pending (half of
  an update pair whose other half has not arrived), duplicate (a redelivered
  copy of a message already received: same event, same role), control
  (heartbeats, transaction markers, DDL other than TRUNCATE) or quarantined.
  Incremental: a run decides the messages staged since its last run and
  revisits the messages of events regrouped since then, reading only the
  messages and events of the events they belong to.
-#}

{%- set since = last_staged_at() %}

with

messages as (
    select * from {{ ref('stg_dataworks__messages') }}
),

{% if is_incremental() -%}
    touched as (
        select message_id
        from messages
        where {{ staged_after(ref('stg_dataworks__messages'), since) }}
        union
        select messages.message_id
        from messages
        left semi join {{ ref('int_dataworks__events') }} as events
            on
                messages.event_key = events.event_key
                and {{ staged_after(ref('int_dataworks__events'), since, 'events') }}
    ),

    touched_events as (
        select distinct messages.event_key
        from messages
        left semi join touched on messages.message_id = touched.message_id
    ),
{%- endif %}

events as (
    select events.*
    from {{ ref('int_dataworks__events') }} as events
    {% if is_incremental() -%}
        left semi join touched_events on events.event_key = touched_events.event_key
    {%- endif %}
),

ranked as (
    select
        messages.*,
        row_number() over (
            partition by messages.event_key, messages.event_role, messages.quarantine_reason is null
            order by messages.ingested_at, messages.message_id
        ) as copy_number
    from messages
    {% if is_incremental() -%}
        left semi join touched_events on messages.event_key = touched_events.event_key
    {%- endif %}
),

final as (
    select
        ranked.message_id,
        'dataworks' as source_format,
        case
            when ranked.quarantine_reason is not null then 'quarantined'
            when ranked.message_kind = 'control' then 'control'
            when ranked.message_kind = 'ddl' and ranked.operation_code <> 'TRUNCATE' then 'control'
            when ranked.copy_number > 1 then 'duplicate'
            when not events.is_complete then 'pending'
            else 'change'
        end as outcome,
        case
            when ranked.quarantine_reason is not null then ranked.quarantine_reason
            when ranked.message_kind = 'control'
                then concat({{ shown("ranked.operation_code") }}, ': a control message, not a change.')
            when ranked.message_kind = 'ddl' and ranked.operation_code <> 'TRUNCATE'
                then concat({{ shown("ranked.operation_code") }}, ' (DDL), kept in silver.cdc_schema_changes.')
            when ranked.copy_number > 1
                then concat(
                        'A redelivered copy of ', {{ shown("ranked.operation_code") }}, ' ',
                        {{ shown("ranked.event_key") }}, '.'
                    )
            when not events.is_complete
                then concat(
                        {{ shown("ranked.operation_code") }}, ' of sequenceId ', {{ shown("ranked.sequence_id") }},
                        ': half of an update, waiting for its other half.'
                    )
            else concat('Change event ', {{ shown("ranked.event_key") }}, '.')
        end as detail,
        ranked.ingested_at,
        current_timestamp() as staged_at
    from ranked
    {% if is_incremental() -%}
        left semi join touched on ranked.message_id = touched.message_id
    {%- endif %}
    left join events on ranked.event_key = events.event_key
)

select * from final
