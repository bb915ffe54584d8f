{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        merge_keep_existing=true,
        unique_key='message_id',
        on_schema_change='fail',
    )
}}

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
    select
        message_id,
        message_value,
        headers,
        ingested_at
    from {{ ref('stg_bronze__messages') }}
    where
        source_format = 'qlik'
        and {{ staged_after(ref('stg_bronze__messages'), last_staged_at(), condition="source_format = 'qlik'") }}
),

parsed as (
    select
        *,
        coalesce(get_json_object(message_value, '$.magic') = 'atMSG', false) as has_envelope,
        from_json(message_value, '{{ qlik_envelope_schema() }}') as envelope,
        from_json(message_value, '{{ qlik_body_schema() }}') as bare
    from messages
),

bodies as (
    select
        *,
        case when has_envelope then envelope.message else bare end as body,
        case
            when has_envelope and envelope.type = 'MD' then 'metadata'
            when has_envelope and envelope.type = 'DT' then 'data'
            when has_envelope then null
            when bare.tablestructure is not null and bare.schemaid is not null then 'metadata'
            when bare.headers.operation is not null then 'data'
        end as message_kind
    from parsed
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
        case when message_kind = 'metadata' then to_timestamp(nullif(body.lineage.timestamp, '')) end
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
                then nullif(coalesce(envelope.messageschemaid, body.headers.externalschemaid), '')
        end as referenced_schema_id,
        body.headers.operation as operation_code,
        nullif(body.headers.changesequence, '') as change_sequence,
        to_timestamp(nullif(body.headers.timestamp, '')) as change_ts,
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
            when headers['x-cdc-encoding'] = 'base64'
                then 'The message is not UTF-8 text (landed as base64): Qlik Replicate writes UTF-8 JSON.'
            when headers['x-cdc-ingest-error'] is not null
                then concat('The landing container record was malformed: ', headers['x-cdc-ingest-error'], '.')
            when message_value is null then 'The message has no value: Qlik Replicate never sends an empty message.'
            when json_object_keys(message_value) is null
                then 'The message is not a JSON object: not a Qlik Replicate message.'
            when has_envelope and envelope.type is null
                then 'The atMSG envelope has no type: it should be MD (metadata) or DT (data).'
            when message_kind is null and has_envelope
                then concat(
                        "Unknown atMSG message type '", envelope.type, "': Qlik sends MD (metadata) and DT (data)."
                    )
            when message_kind is null
                then concat(
                        'Neither a metadata message (schemaId, tableStructure) nor a data message ',
                        '(headers.operation): not a Qlik Replicate message.'
                    )
            when message_kind = 'metadata' and coalesce(body.schemaid, '') = ''
                then 'The metadata message has no schemaId: data messages could not refer to it.'
            when message_kind = 'metadata' and coalesce(body.lineage.table, '') = ''
                then 'The metadata message names no table (lineage.table).'
            when message_kind = 'metadata' and coalesce(size(body.tablestructure.tablecolumns), 0) < 1
                then concat('The metadata of ', body.lineage.table, ' lists no columns (tableStructure.tableColumns).')
            when
                message_kind = 'metadata'
                and exists(map_values(body.tablestructure.tablecolumns), c -> c.ordinal is null)
                then concat('The metadata of ', body.lineage.table, ' has a column without an ordinal.')
            when
                message_kind = 'metadata'
                and size(array_distinct(transform(map_values(body.tablestructure.tablecolumns), c -> c.ordinal)))
                < size(body.tablestructure.tablecolumns)
                then concat('The metadata of ', body.lineage.table, ' gives two columns the same ordinal.')
            when message_kind = 'metadata' then null
            when body.headers.operation is null
                then 'The data message has no headers.operation: the kind of change is unknown.'
            when body.headers.operation not in ('{{ operations | join("', '") }}')  -- noqa: LT05
                then concat(
                        "Unknown Qlik operation '", body.headers.operation,
                        "' (expected REFRESH, INSERT, UPDATE or DELETE)."
                    )
            when body.data is null
                then concat('The ', body.headers.operation, ' message has no data (row image).')
            when body.headers.changemask is not null and not {{ change_mask_is_valid('body.headers.changemask') }}
                then concat("The changeMask '", body.headers.changemask, "' is not a hexadecimal string.")
            when body.headers.columnmask is not null and not {{ change_mask_is_valid('body.headers.columnmask') }}
                then concat("The columnMask '", body.headers.columnmask, "' is not a hexadecimal string.")
            when body.headers.operation <> 'REFRESH' and coalesce(body.headers.changesequence, '') = ''
                then concat(
                        'The ', body.headers.operation, ' message has no changeSequence: ',
                        'its place among the changes of the table is unknown.'
                    )
            when
                coalesce(body.table, '') = ''
                and coalesce(envelope.messageschemaid, body.headers.externalschemaid, '') = ''
                then 'The data message names no table and no messageSchemaId: its table cannot be found.'
        end as quarantine_reason,
        current_timestamp() as staged_at
    from bodies
)

select * from final
