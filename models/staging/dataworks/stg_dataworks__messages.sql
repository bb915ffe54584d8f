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
  Every distinct DataWorks message ("sync whole database to Kafka") parsed:
  what kind it is (row change, DDL, control), its table, its key columns
  (`primaryKey`, else `#alibaba_rds_row_id#` on MySQL or `rowid` on Oracle),
  row images decoded by each column's `dataColumn` type, commit time and
  order, and the reason it cannot be used, if it cannot. Incremental: a run
  parses only the messages staged since its last run.
-#}

{%- set row_ops = ['INSERT', 'UPDATE_BEFOR', 'UPDATE_AFTER', 'DELETE'] %}
{%- set ddl_ops = ['CREATE', 'ALTER', 'ERASE', 'QUERY', 'TRUNCATE', 'RENAME', 'CINDEX', 'DINDEX'] %}
{%- set control_ops = ['MHEARTBEAT', 'TRANSACTION_BEGIN', 'TRANSACTION_END', 'GTID', 'XACOMMIT', 'XAROLLBACK'] %}

with

messages as (
    select
        message_id,
        message_value,
        headers,
        ingested_at
    from {{ ref('stg_bronze__messages') }}
    where
        source_format = 'dataworks'
        and {{ staged_after(ref('stg_bronze__messages'), last_staged_at(), condition="source_format = 'dataworks'") }}
),

parsed as (
    select
        *,
        from_json(message_value, '{{ dataworks_message_schema() }}') as message
    from messages
),

typed as (
    select
        *,
        message.payload.op as operation_code,
        message.schema.source,
        map_from_entries(
            transform(message.schema.datacolumn, c -> struct(c.name, upper(c.type)))
        ) as column_types,
        from_json(message.payload.before.datacolumn, 'map<string,string>') as before_raw,
        from_json(message.payload.after.datacolumn, 'map<string,string>') as after_raw
    from parsed
),

keyed as (
    select
        *,
        case
            when size(message.schema.primarykey) > 0 then message.schema.primarykey
            when array_contains(map_keys(column_types), '#alibaba_rds_row_id#') then array('#alibaba_rds_row_id#')
            when array_contains(map_keys(column_types), 'rowid') then array('rowid')
        end as key_columns,
        transform_values(before_raw, (k, v) -> {{ dataworks_value_text('v', 'column_types[k]') }}) as before_image,
        transform_values(after_raw, (k, v) -> {{ dataworks_value_text('v', 'column_types[k]') }}) as after_image
    from typed
),

final as (
    select
        message_id,
        case
            when operation_code in ('{{ row_ops | join("', '") }}') then 'row'  -- noqa: LT05
            when operation_code in ('{{ ddl_ops | join("', '") }}') then 'ddl'  -- noqa: LT05
            when operation_code in ('{{ control_ops | join("', '") }}') then 'control'  -- noqa: LT05
        end as message_kind,
        operation_code,
        lower(source.dbtype) as source_connector,
        nullif(source.dbname, '') as source_database,
        nullif(source.schemaname, '') as source_schema,
        nullif(source.tablename, '') as source_table,
        lower(concat_ws('.', nullif(source.dbname, ''), nullif(source.schemaname, ''), nullif(source.tablename, '')))
            as table_id,
        message.payload.sequenceid as sequence_id,
        {#- One logical change: the two halves of a paired update share it. -#}
        concat_ws(
            '|',
            lower(
                concat_ws('.', nullif(source.dbname, ''), nullif(source.schemaname, ''), nullif(source.tablename, ''))
            ),
            coalesce(message.payload.sequenceid, message_id),
            case when operation_code like 'UPDATE%' then 'UPDATE' else operation_code end
        ) as event_key,
        case
            when operation_code = 'UPDATE_BEFOR' then 'before'
            when operation_code = 'UPDATE_AFTER' and before_image is not null then 'both'
            when operation_code = 'UPDATE_AFTER' then 'after'
            else 'row'
        end as event_role,
        concat(
            lpad(coalesce(message.payload.sequenceid, ''), 20, '0'),
            ':',
            lpad(coalesce(message.payload.scn, ''), 20, '0')
        ) as sequence,
        timestamp_millis(message.payload.timestamp.eventtime) as commit_ts,
        key_columns,
        before_image,
        after_image,
        message.payload.ddl.text as ddl_text,
        transform(
            message.schema.datacolumn,
            (c, i) -> struct(
                c.name as column_name,
                i + 1 as ordinal,
                upper(c.type) as source_type,
                case upper(c.type)
                    when 'BOOLEAN' then 'boolean' when 'DOUBLE' then 'double' when 'DATE' then 'timestamp'
                    when 'BYTES' then 'binary' when 'LONG' then 'bigint' else 'string'
                end as spark_type,
                array_contains(key_columns, c.name) as is_primary_key
            )
        ) as source_columns,
        ingested_at,
        case
            when headers['x-cdc-encoding'] = 'base64'
                then 'The message is not UTF-8 text (landed as base64): DataWorks writes UTF-8 JSON.'
            when headers['x-cdc-ingest-error'] is not null
                then concat('The landing container record was malformed: ', headers['x-cdc-ingest-error'], '.')
            when message_value is null then 'The message has no value: DataWorks never sends an empty message.'
            when json_object_keys(message_value) is null or message.payload is null
                then 'The message is not a JSON object with a payload: not a DataWorks message.'
            when operation_code is null then 'The payload has no op: the kind of change is unknown.'
            when
                operation_code not in (
                    '{{ (row_ops + ddl_ops + control_ops) | join("', '") }}'  -- noqa: LT05
                )
                then concat(
                        "Unknown DataWorks op '", operation_code,
                        "' (ops are case-sensitive: INSERT, UPDATE_BEFOR, UPDATE_AFTER, DELETE, DDL and control ops)."
                    )
            when operation_code not in ('{{ row_ops | join("', '") }}', 'TRUNCATE') then null  -- noqa: LT05
            when coalesce(source.tablename, '') = '' then 'The schema.source block names no table.'
            when operation_code = 'TRUNCATE' then null
            when operation_code in ('INSERT', 'UPDATE_AFTER') and after_image is null
                then concat('A ', operation_code, ' without an after image: the new row is missing.')
            when operation_code in ('DELETE', 'UPDATE_BEFOR') and before_image is null
                then concat('A ', operation_code, ' without a before image: the old row is missing.')
            when key_columns is null
                then concat(
                        'The table ', source.tablename, ' has no primaryKey and no #alibaba_rds_row_id# or rowid ',
                        'column: its rows cannot be told apart.'
                    )
            when exists(key_columns, k -> coalesce(after_image, before_image)[k] is null)
                then concat('A key column (', array_join(key_columns, ', '), ') has no value in the row image.')
        end as quarantine_reason,
        current_timestamp() as staged_at
    from keyed
)

select * from final
