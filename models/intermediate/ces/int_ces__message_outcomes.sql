{{ config(unique_key='message_id') }}

{#-
  What became of every distinct CES message: quarantined (with the reason),
  duplicate, pending (a segment of an event still incomplete) or change.
  Incremental: a run decides the messages staged since its last run and
  revisits the messages of events regrouped since then (a pending segment
  becomes part of a change when its event completes).
-#}

{%- set since = last_staged_at() %}

with

{% if is_incremental() -%}
    touched_messages as (
        select message_id
        from {{ ref('stg_ces__messages') }}
        where {{ staged_after(ref('stg_ces__messages'), since) }}
        union
        select segments.message_id
        from {{ ref('int_ces__segments') }} as segments
        left semi join {{ ref('int_ces__events') }} as events
            on segments.event_key = events.event_key and {{ staged_after(ref('int_ces__events'), since, 'events') }}
    ),
{%- endif %}

messages as (
    select messages.*
    from {{ ref('stg_ces__messages') }} as messages
    {% if is_incremental() -%}
        left semi join touched_messages on messages.message_id = touched_messages.message_id
    {%- endif %}
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
        messages.message_id,
        'ces' as source_format,
        case
            when messages.quarantine_reason is not null then 'quarantined'
            when segments.is_duplicate then 'duplicate'
            when not events.is_complete then 'pending'
            when changes.quarantine_reason is not null then 'quarantined'
            else 'change'
        end as outcome,
        case
            when messages.quarantine_reason is not null then messages.quarantine_reason
            when segments.is_duplicate
                then concat(
                        'A redelivered copy of event ', {{ shown("segments.event_source") }},
                        ' / ', {{ shown("segments.event_id") }},
                        ' (segment ', segments.segment_number, ').'
                    )
            when not events.is_complete
                then concat(
                        'Segment ', segments.segment_number, ' of split event ',
                        {{ shown("segments.event_key") }}, ': ',
                        events.segments_received, ' segment(s) received, waiting for the rest.'
                    )
            when changes.quarantine_reason is not null then changes.quarantine_reason
            else concat('Change ', changes.change_id, '.')
        end as detail,
        messages.ingested_at,
        current_timestamp() as staged_at
    from messages
    left join segments on messages.message_id = segments.message_id
    left join events on segments.event_key = events.event_key
    left join changes on segments.event_key = changes.event_key
)

select * from final
