{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every usable CES message as a segment of its logical event (`logicalid`,
  else source + id), marked duplicate when it is a redelivered copy (same
  source + id) or repeats a segment already received. Incremental: a run
  takes the messages staged since its last run and compares them with the
  segments already held, so a copy arriving runs later is still a duplicate.
  Its lookups of those messages in this table, and its merge, read only the
  rows landed since the earliest of them (bound_merge_by_landing).
-#}

{%- set since = last_staged_at() if is_incremental() else none %}
{%- set landed_since = bound_merge_by_landing(
    'select ingested_at from ' ~ ref('stg_ces__messages') ~ ' where quarantine_reason is null and '
    ~ staged_after(ref('stg_ces__messages'), since)
) if is_incremental() else none %}

with

usable as (
    select messages.*
    from {{ ref('stg_ces__messages') }} as messages
    {% if is_incremental() -%}
        {#- A message restaged upstream is not a copy of itself. -#}
        left anti join {{ this }} as held
            on
                messages.message_id = held.message_id
                and held.ingested_at >= {{ timestamp_literal(landed_since) }}
    {%- endif %}
    where
        messages.quarantine_reason is null
        {% if is_incremental() -%}
            and {{ staged_after(ref('stg_ces__messages'), since, 'messages') }}
        {%- endif %}
),

keyed as (
    select
        *,
        coalesce(logical_id, concat(event_source, '|', event_id)) as event_key,
        row_number() over (
            partition by event_source, event_id order by ingested_at, message_id
        ) as copy_number
    from usable
),

numbered as (
    select
        *,
        row_number() over (
            partition by event_key, segment_number, copy_number = 1 order by ingested_at, message_id
        ) as segment_copy_number
    from keyed
),

{% if is_incremental() -%}
    held_events as (
        select distinct
            event_source,
            event_id
        from {{ this }}
    ),

    held_segments as (
        select distinct
            event_key,
            segment_number
        from {{ this }}
        where not is_duplicate
    ),
{%- endif %}

final as (
    select
        numbered.message_id,
        numbered.event_key,
        numbered.event_source,
        numbered.event_id,
        numbered.logical_id,
        numbered.operation_code,
        numbered.event_time,
        numbered.segment_number,
        numbered.segment_count,
        numbered.is_final_segment,
        numbered.data_text,
        numbered.ingested_at,
        numbered.copy_number > 1 or numbered.segment_copy_number > 1
        {%- if is_incremental() %}
            or held_events.event_id is not null
            or held_segments.event_key is not null
        {%- endif %} as is_duplicate,
        current_timestamp() as staged_at
    from numbered
    {% if is_incremental() -%}
        left join held_events
            on
                numbered.event_source = held_events.event_source
                and numbered.event_id = held_events.event_id
        left join held_segments
            on
                numbered.event_key = held_segments.event_key
                and numbered.segment_number = held_segments.segment_number
    {%- endif %}
)

select * from final
