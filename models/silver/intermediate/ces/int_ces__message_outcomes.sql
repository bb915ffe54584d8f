{{ config(unique_key='message_id') }}

{#-
  What became of every distinct CES message: quarantined (with the reason),
  duplicate, pending (a segment of an event still incomplete) or change.
  Incremental: a run decides the messages staged since its last run and
  revisits the messages of events regrouped since then (a pending segment
  becomes part of a change when its event completes).
-#}

{%- set since = last_staged_at() %}

{%- set redelivered_segment -%}
    concat(
        'A redelivered copy of event ', {{ shown("segments.event_source") }},
        ' / ', {{ shown("segments.event_id") }},
        ' (segment ', segments.segment_number, ').'
    )
{%- endset %}
{%- set waiting_segments -%}
    concat(
        'Segment ', segments.segment_number, ' of split event ',
        {{ shown("segments.event_key") }}, ': ',
        events.segments_received, ' segment(s) received, waiting for the rest.'
    )
{%- endset %}

with

{{ touched_messages(
    ref('stg_ces__messages'), since,
    revisited=ref('int_ces__events'), members=ref('int_ces__segments'), key='event_key'
) }}

messages as (
    select messages.*
    from {{ ref('stg_ces__messages') }} as messages
    {{ only_touched('messages') }}
),

segments as (
    select * from {{ ref('int_ces__segments') }}
),

events as (
    select * from {{ ref('int_ces__events') }}
),

changes as (
    select * from {{ ref('int_ces__changes') }}
),

final as (
    select
        {{ message_outcome('ces', [
            {'when': 'segments.is_duplicate', 'outcome': 'duplicate', 'detail': redelivered_segment},
            {'when': 'not events.is_complete', 'outcome': 'pending', 'detail': waiting_segments},
        ]) | indent(8) }}
    from messages
    left join segments on messages.message_id = segments.message_id
    left join events on segments.event_key = events.event_key
    left join changes on segments.event_key = changes.event_key
)

select * from final
