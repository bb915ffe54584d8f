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

{%- set control_detail -%}
    concat({{ shown("ranked.operation_code") }}, ': a control message, not a change.')
{%- endset %}
{%- set ddl_detail -%}
    concat({{ shown("ranked.operation_code") }}, ' (DDL), kept in silver.cdc_schema_changes.')
{%- endset %}
{%- set redelivered_detail -%}
    concat(
        'A redelivered copy of ', {{ shown("ranked.operation_code") }}, ' ',
        {{ shown("ranked.event_key") }}, '.'
    )
{%- endset %}
{%- set half_update_detail -%}
    concat(
        {{ shown("ranked.operation_code") }}, ' of sequenceId ', {{ shown("ranked.sequence_id") }},
        ': half of an update, waiting for its other half.'
    )
{%- endset %}

with

messages as (
    select * from {{ ref('stg_dataworks__messages') }}
),

{{ touched_messages(
    ref('stg_dataworks__messages'), since,
    revisited=ref('int_dataworks__events'), members=ref('stg_dataworks__messages'), key='event_key'
) }}

{% if is_incremental() -%}
    touched_events as (
        select distinct messages.event_key
        from messages
        left semi join touched on messages.message_id = touched.message_id
    ),
{%- endif %}

events as (
    select events.*
    from {{ ref('int_dataworks__events') }} as events
    {{ only_touched('events', 'event_key', 'touched_events') }}
),

ranked as (
    select
        messages.*,
        row_number() over (
            partition by messages.event_key, messages.event_role, messages.quarantine_reason is null
            order by messages.ingested_at, messages.message_id
        ) as copy_number
    from messages
    {{ only_touched('messages', 'event_key', 'touched_events') }}
),

final as (
    select
        {{ message_outcome(
            'dataworks',
            [
                {'when': "ranked.message_kind = 'control'", 'outcome': 'control', 'detail': control_detail},
                {
                    'when': "ranked.message_kind = 'ddl' and ranked.operation_code <> 'TRUNCATE'",
                    'outcome': 'control', 'detail': ddl_detail,
                },
                {'when': 'ranked.copy_number > 1', 'outcome': 'duplicate', 'detail': redelivered_detail},
                {'when': 'not events.is_complete', 'outcome': 'pending', 'detail': half_update_detail},
            ],
            messages='ranked', changes=none,
            change_detail="concat('Change event ', " ~ shown("ranked.event_key") ~ ", '.')",
        ) | indent(8) }}
    from ranked
    {{ only_touched('ranked') }}
    left join events on ranked.event_key = events.event_key
)

select * from final
