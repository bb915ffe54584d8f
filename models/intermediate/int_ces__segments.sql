{#-
  Every usable CES message as a segment of its logical event (`logicalid`,
  else source + id), marked duplicate when it is a redelivered copy (same
  source + id) or repeats a segment already received.
-#}

with

usable as (
    select *
    from {{ ref('stg_ces__messages') }}
    where quarantine_reason is null
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

final as (
    select
        message_id,
        event_key,
        event_source,
        event_id,
        logical_id,
        operation_code,
        event_time,
        segment_number,
        segment_count,
        is_final_segment,
        data_text,
        ingested_at,
        copy_number > 1 or segment_copy_number > 1 as is_duplicate
    from numbered
)

select * from final
