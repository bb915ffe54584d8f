{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every distinct Qlik Replicate message (Event Hubs or Kafka target) parsed,
  with or without the `atMSG` envelope: a metadata message (`MD`: schemaId,
  lineage, table structure) or a data message (`DT`: table, row images,
  headers), and the reason it cannot be used, if it cannot. Row images stay
  as sent here: decoding them needs the table's metadata, which may arrive
  later (int_qlik__changes). Incremental: a run parses only the messages
  staged since its last run.
-#}

{%- set operations = ['REFRESH', 'INSERT', 'UPDATE', 'DELETE'] %}

with

messages as (
    {{ new_bronze_messages('qlik', ['message_id', 'message_value', 'headers', 'ingested_at']) }}
),

parsed as (
    select
        *,
        from_json(
            {{ within_size('message_value') }}, '{{ qlik_message_schema() }}', {{ json_options() }}
        ) as parsed_message
    from messages
),

bodies as (
    select
        *,
        coalesce(parsed_message.magic = 'atMSG', false) as has_envelope,
        case
            when parsed_message.magic = 'atMSG' then parsed_message.message
            else struct(
                    parsed_message.schemaid as schemaid,
                    parsed_message.lineage as lineage,
                    parsed_message.tablestructure as tablestructure,
                    parsed_message.dataschema as dataschema,
                    parsed_message.schema as schema,
                    parsed_message.table as `table`,
                    parsed_message.data as data,
                    parsed_message.beforedata as beforedata,
                    parsed_message.headers as headers
                )
        end as body
    from parsed
),

kinds as (
    select
        *,
        case
            when has_envelope and parsed_message.type = 'MD' then 'metadata'
            when has_envelope and parsed_message.type = 'DT' then 'data'
            when has_envelope then null
            when body.tablestructure is not null and body.schemaid is not null then 'metadata'
            when body.headers.operation is not null then 'data'
        end as message_kind,
        map_values(body.tablestructure.tablecolumns) as metadata_columns
    from bodies
),

final as (
    select
        message_id,
        message_kind,
        has_envelope,
        case when message_kind = 'metadata' then body.schemaid end as schema_id,
        case when message_kind = 'metadata' then body.lineage.server end as replicate_server,
        case when message_kind = 'metadata' then body.lineage.task end as replicate_task,
        case when message_kind = 'metadata' then body.lineage.tableversion end as table_version,
        case
            when message_kind = 'metadata'
                then {{ calendar_timestamp("to_timestamp(nullif(body.lineage.timestamp, ''))") }}
        end
            as metadata_ts,
        case
            when message_kind = 'metadata'
                then array_sort(
                        transform(
                            map_entries(body.tablestructure.tablecolumns),
                            c -> struct(
                                c.value.ordinal as ordinal,
                                c.key as column_name,
                                upper(c.value.type) as source_type,
                                c.value.length as length,
                                c.value.precision as precision,
                                c.value.scale as scale,
                                coalesce(c.value.primarykeyposition, 0) as key_position
                            )
                        )
                    )
        end as table_columns,
        coalesce(
            case when message_kind = 'metadata' then body.lineage.schema else body.schema end, ''
        ) as source_schema,
        coalesce(case when message_kind = 'metadata' then body.lineage.table else body.table end, '') as source_table,
        case
            when message_kind = 'data'
                then nullif(coalesce(parsed_message.messageschemaid, body.headers.externalschemaid), '')
        end as referenced_schema_id,
        body.headers.operation as operation_code,
        nullif(body.headers.changesequence, '') as change_sequence,
        {{ calendar_timestamp("to_timestamp(nullif(body.headers.timestamp, ''))") }} as change_ts,
        nullif(body.headers.streamposition, '') as stream_position,
        nullif(body.headers.transactionid, '') as transaction_id,
        body.headers.transactioneventcounter as transaction_event_counter,
        body.headers.transactionlastevent as transaction_last_event,
        nullif(trim(body.headers.changemask), '') as change_mask,
        nullif(trim(body.headers.columnmask), '') as column_mask,
        body.data as data_raw,
        body.beforedata as before_raw,
        ingested_at,
        case
            {{ landing_quarantine_reasons(
                not_utf8_note="'Qlik Replicate writes UTF-8 JSON.'",
                no_value_reason="'The message has no value: Qlik Replicate never sends an empty message.'"
            ) | indent(12) }}
            when parsed_message is null or (not has_envelope and message_kind is null)
                then {{ unreadable_json_reason(
                    'message_value', "'The message'",
                    not_recognised="'Neither a metadata message (schemaId, tableStructure) nor a data message "
                        ~ "(headers.operation): not a Qlik Replicate message.'",
                    not_object="'The message is not a JSON object: not a Qlik Replicate message.'"
                ) | indent(16) }}
            when has_envelope and parsed_message.type is null
                then 'The atMSG envelope has no type: it should be MD (metadata) or DT (data).'
            when message_kind is null and has_envelope
                then concat(
                        "Unknown atMSG message type '", {{ shown("parsed_message.type") }},
                        "': Qlik sends MD (metadata) and DT (data)."
                    )
            when message_kind = 'metadata' and coalesce(body.schemaid, '') = ''
                then 'The metadata message has no schemaId: data messages could not refer to it.'
            when message_kind = 'metadata' and coalesce(body.lineage.table, '') = ''
                then 'The metadata message names no table (lineage.table).'
            when message_kind = 'metadata' and coalesce(size(body.tablestructure.tablecolumns), 0) < 1
                then concat(
                        'The metadata of ', {{ shown("body.lineage.table") }},
                        ' lists no columns (tableStructure.tableColumns).'
                    )
            when message_kind = 'metadata' and size(metadata_columns) > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason(
                    "'columns in tableStructure.tableColumns'",
                    'size(metadata_columns)',
                    'cdc_max_columns'
                ) }}
            when message_kind = 'metadata' and exists(metadata_columns, c -> c.ordinal is null)
                then concat('The metadata of ', {{ shown("body.lineage.table") }}, ' has a column without an ordinal.')
            when
                message_kind = 'metadata'
                and exists(metadata_columns, c -> c.ordinal not between 1 and {{ var('cdc_max_columns') }})
                then concat(
                        'The metadata of ', {{ shown("body.lineage.table") }},
                        ' gives a column an ordinal outside 1 to ',
                        {{ var('cdc_max_columns') }}, ' (dbt var cdc_max_columns).'
                    )
            when
                message_kind = 'metadata'
                and size(array_distinct(transform(metadata_columns, c -> c.ordinal))) < size(metadata_columns)
                then concat(
                        'The metadata of ', {{ shown("body.lineage.table") }}, ' gives two columns the same ordinal.'
                    )
            when
                message_kind = 'metadata'
                and exists(
                    metadata_columns,
                    c -> c.length < 0 or c.precision < 0 or c.scale not between 0 and 1000
                    or c.primarykeyposition < 0
                )
                then concat(
                        'The metadata of ', {{ shown("body.lineage.table") }},
                        ' gives a column a negative length, precision or ',
                        'primaryKeyPosition, or a scale outside 0 to 1000.'
                    )
            when
                message_kind = 'metadata'
                and size(filter(metadata_columns, c -> c.primarykeyposition > 0)) > {{ var('cdc_max_key_columns') }}
                then {{ over_limit_reason(
                    "'key columns (primaryKeyPosition) in tableStructure'",
                    'size(filter(metadata_columns, c -> c.primarykeyposition > 0))',
                    'cdc_max_key_columns'
                ) }}
            when message_kind = 'metadata' and coalesce(body.lineage.tableversion, -1) < 0
                then concat(
                        'The metadata of ', {{ shown("body.lineage.table") }},
                        ' has no tableVersion (lineage.tableVersion).'
                    )
            when message_kind = 'metadata' then null
            when body.headers.operation is null
                then 'The data message has no headers.operation: the kind of change is unknown.'
            when body.headers.operation not in ('{{ operations | join("', '") }}')  -- noqa: LT05
                then concat(
                        "Unknown Qlik operation '", {{ shown("body.headers.operation") }},
                        "' (expected REFRESH, INSERT, UPDATE or DELETE)."
                    )
            when body.data is null
                then concat('The ', {{ shown("body.headers.operation") }}, ' message has no data (row image).')
            when length(trim(body.headers.changemask)) > {{ var('cdc_max_mask_digits') }}
                then {{ over_limit_reason(
                    "'hex digits in headers.changeMask'",
                    'length(trim(body.headers.changemask))',
                    'cdc_max_mask_digits'
                ) }}
            when length(trim(body.headers.columnmask)) > {{ var('cdc_max_mask_digits') }}
                then {{ over_limit_reason(
                    "'hex digits in headers.columnMask'",
                    'length(trim(body.headers.columnmask))',
                    'cdc_max_mask_digits'
                ) }}
            when body.headers.changemask is not null and not {{ change_mask_is_valid('body.headers.changemask') }}
                then concat(
                        "The changeMask '", {{ shown("body.headers.changemask") }}, "' is not a hexadecimal string."
                    )
            when body.headers.columnmask is not null and not {{ change_mask_is_valid('body.headers.columnmask') }}
                then concat(
                        "The columnMask '", {{ shown("body.headers.columnmask") }}, "' is not a hexadecimal string."
                    )
            when body.headers.operation <> 'REFRESH' and coalesce(body.headers.changesequence, '') = ''
                then concat(
                        'The ', {{ shown("body.headers.operation") }}, ' message has no changeSequence: ',
                        'its place among the changes of the table is unknown.'
                    )
            when body.headers.operation <> 'REFRESH' and not {{ is_digits('body.headers.changesequence', 35) }}
                then concat(
                        "The changeSequence '", {{ shown("body.headers.changesequence") }},
                        "' is not a whole number of at most 35 ",
                        'digits: the change cannot be ordered.'
                    )
            when body.headers.operation <> 'REFRESH' and change_ts is null
                then concat(
                        'The ', {{ shown("body.headers.operation") }}, ' message has no usable headers.timestamp: ',
                        'the change has no commit time.'
                    )
            when
                coalesce(body.table, '') = ''
                and coalesce(parsed_message.messageschemaid, body.headers.externalschemaid, '') = ''
                then 'The data message names no table and no messageSchemaId: its table cannot be found.'
        end as quarantine_reason,
        current_timestamp() as staged_at
    from kinds
)

select * from final
