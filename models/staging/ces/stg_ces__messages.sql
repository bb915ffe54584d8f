{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every distinct CES message with its CloudEvents envelope parsed (both
  spellings of the segment attributes), and the reason it cannot be used, if
  it cannot. Incremental: a run parses only the messages staged since its
  last run.
-#}

with

messages as (
    select
        message_id,
        message_value,
        headers,
        source_offset,
        ingested_at
    from {{ ref('stg_bronze__messages') }}
    where
        source_format = 'ces'
        and {{ staged_after(ref('stg_bronze__messages'), last_staged_at(), condition="source_format = 'ces'") }}
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
            when headers['x-cdc-encoding'] = 'base64'
                then concat(
                        'The message is not UTF-8 text (landed as base64): ',
                        'CES sends UTF-8 JSON; check the capture or the producer.'
                    )
            when headers['x-cdc-ingest-error'] is not null
                then concat('The landing container record was malformed: ', headers['x-cdc-ingest-error'], '.')
            when message_value is null
                then 'The message has no value (a tombstone or empty body): CES never sends one; check the topic.'
            when octet_length(message_value) > {{ var('cdc_max_message_bytes') }}
                then {{ over_size_reason('message_value') }}
            when envelope is null or (envelope.type is null and envelope.id is null and envelope.data is null)
                then case
                        when {{ json_shape('message_value') }} = 'too_deep' then {{ too_deep_reason("'The message'") }}
                        else 'The message is not a JSON object with CloudEvents attributes (type, source, id, data).'
                    end
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
