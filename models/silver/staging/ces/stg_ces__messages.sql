{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every distinct CES message with its CloudEvents envelope parsed (both
  spellings of the segment attributes), and the reason it cannot be used, if
  it cannot. Incremental: a run parses only the messages staged since its
  last run.
-#}

with

messages as (
    {{ new_bronze_messages('ces', ['message_id', 'message_value', 'headers', 'source_offset', 'ingested_at']) }}
),

parsed as (
    select
        *,
        from_json({{ within_size('message_value') }}, '{{ ces_envelope_schema() }}', {{ json_options() }}) as envelope
    from messages
),

final as (
    select
        message_id,
        envelope.type as event_type,
        envelope.source as event_source,
        envelope.id as event_id,
        envelope.logicalid as logical_id,
        to_timestamp(envelope.time) as event_time,
        envelope.operation as operation_code,
        {#- At most 9 digits (checked below), so the casts cannot overflow. -#}
        cast(coalesce(envelope.segmentindex, envelope.splitindex, '0') as int) as segment_number,
        nullif(cast(envelope.splittotalcnt as int), 0) as segment_count,
        lower(envelope.finalsegment) = 'true' as is_final_segment,
        envelope.data as data_text,
        ingested_at,
        source_offset,
        case
            {{ landing_quarantine_reasons(
                not_utf8_note="'CES sends UTF-8 JSON; check the capture or the producer.'",
                no_value_reason="'The message has no value (a tombstone or empty body): "
                    ~ "CES never sends one; check the topic.'"
            ) | indent(12) }}
            when envelope is null or (envelope.type is null and envelope.id is null and envelope.data is null)
                then {{ unreadable_json_reason(
                    'message_value', "'The message'",
                    not_recognised="'The message is not a JSON object with CloudEvents attributes "
                        ~ "(type, source, id, data).'"
                ) | indent(16) }}
            when envelope.type is null or not startswith(envelope.type, 'com.microsoft.SQL.CES.DML.V')
                then concat(
                        'The CloudEvents type is ', coalesce(concat("'", {{ shown("envelope.type") }}, "'"), 'missing'),
                        ', not com.microsoft.SQL.CES.DML.V<n>: this is not a CES change event.'
                    )
            when envelope.source is null or envelope.id is null
                then 'The CloudEvents attributes source and id are required to identify the event and its redeliveries.'
            when envelope.operation is null or envelope.operation not in ('INS', 'UPD', 'DEL')
                then concat(
                        'Unknown operation ',
                        coalesce(concat("'", {{ shown("envelope.operation") }}, "'"), '(missing)'),
                        ': CES sends INS, UPD or DEL.'
                    )
            when envelope.data is null
                then 'The event has no data attribute: the change itself is missing.'
            when
                not {{ is_digits("coalesce(envelope.segmentindex, envelope.splitindex, '0')", 9) }}
                or not {{ is_digits("coalesce(envelope.splittotalcnt, '0')", 9) }}
                then concat(
                        'The segment attributes (segmentindex / splitindex / splittotalcnt) are not whole numbers ',
                        'of at most 9 digits.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from parsed
)

select * from final
