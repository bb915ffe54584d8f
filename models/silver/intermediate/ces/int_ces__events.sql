{{ config(unique_key='event_key') }}

{#-
  CES events reassembled from their messages: one row per logical event
  (`logicalid`, else source + id). Redelivered copies (same source + id) and
  repeated segments count once; a split event is complete once every segment
  up to the final one has arrived (segments numbered from 0 or 1, any order),
  and its `data` is the concatenation of the segments' data in order.
  Incremental: a run regroups only the events that received a new segment,
  from all their segments, whichever runs landed them.
-#}

with

{% if is_incremental() -%}
    touched_events as (
        select distinct event_key
        from {{ ref('int_ces__segments') }}
        where not is_duplicate and {{ staged_after(ref('int_ces__segments'), last_staged_at()) }}
    ),
{%- endif %}

segments as (
    select segments.*
    from {{ ref('int_ces__segments') }} as segments
    {{ only_touched('segments', 'event_key', 'touched_events') }}
    where not segments.is_duplicate
),

grouped as (
    select
        event_key,
        count(*) as segments_received,
        min(segment_number) as first_segment_number,
        max(segment_count) as segment_count,
        max(case when is_final_segment then segment_number end) as final_segment_number,
        coalesce(bool_or(is_final_segment is not null), false) as has_segment_flags,
        array_join(
            transform(
                array_sort(collect_list(struct(segment_number, data_text))),
                segment -> segment.data_text
            ),
            ''
        ) as data_text,
        min_by(event_source, segment_number) as event_source,
        min_by(event_id, segment_number) as event_id,
        min_by(logical_id, segment_number) as logical_id,
        min_by(operation_code, segment_number) as operation_code,
        min_by(event_time, segment_number) as event_time,
        max(ingested_at) as ingested_at
    from segments
    group by event_key
),

final as (
    select
        event_key,
        event_source,
        event_id,
        logical_id,
        operation_code,
        event_time,
        data_text,
        segments_received,
        ingested_at,
        case
            when segment_count is not null then segments_received = segment_count
            when final_segment_number is not null
                then segments_received
                    = final_segment_number - (case when first_segment_number = 0 then 0 else 1 end) + 1
            else segments_received = 1 and not has_segment_flags
        end as is_complete,
        current_timestamp() as staged_at
    from grouped
)

select * from final
