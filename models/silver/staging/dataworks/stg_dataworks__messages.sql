{{ config(merge_keep_existing=true, unique_key='message_id') }}

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
    {{ new_bronze_messages('dataworks', ['message_id', 'message_value', 'headers', 'ingested_at']) }}
),

parsed as (
    select
        *,
        from_json({{ within_size('message_value') }}, '{{ dataworks_message_schema() }}', {{ json_options() }})
            as message
    from messages
),

typed as (
    select
        *,
        message.payload.op as operation_code,
        message.schema.source,
        {{ map_of('message.schema.datacolumn', 'map_item.name', 'upper(map_item.type)') }} as column_types,
        {#- Key lookups cost the number of key columns each: only within that limit. -#}
        coalesce(size(message.schema.primarykey), 0) <= {{ var('cdc_max_key_columns') }} as keys_within_limit,
        from_json(message.payload.before.datacolumn, 'map<string,string>', {{ json_options() }}) as before_raw,
        from_json(message.payload.after.datacolumn, 'map<string,string>', {{ json_options() }}) as after_raw
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
        {{ map_join('before_raw', 'column_types', 'string', dataworks_value_text('image_value', 'lookup_value')) }}
            as before_image,
        {{ map_join('after_raw', 'column_types', 'string', dataworks_value_text('image_value', 'lookup_value')) }}
            as after_image
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
        {{ epoch_millis_timestamp('message.payload.timestamp.eventtime') }} as commit_ts,
        key_columns,
        before_image,
        after_image,
        message.payload.ddl.text as ddl_text,
        case
            when keys_within_limit
                then transform(
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
                    )
        end as source_columns,
        ingested_at,
        case
            {{ landing_quarantine_reasons(
                not_utf8_note="'DataWorks writes UTF-8 JSON.'",
                no_value_reason="'The message has no value: DataWorks never sends an empty message.'"
            ) | indent(12) }}
            when message.payload is null
                then {{ unreadable_json_reason(
                    'message_value', "'The message'",
                    not_recognised="'The message is not a JSON object with a payload: not a DataWorks message.'"
                ) | indent(16) }}
            when operation_code is null then 'The payload has no op: the kind of change is unknown.'
            when
                operation_code not in (
                    '{{ (row_ops + ddl_ops + control_ops) | join("', '") }}'  -- noqa: LT05
                )
                then concat(
                        "Unknown DataWorks op '", {{ shown("operation_code") }},
                        "' (ops are case-sensitive: INSERT, UPDATE_BEFOR, UPDATE_AFTER, DELETE, DDL and control ops)."
                    )
            when operation_code not in ('{{ row_ops | join("', '") }}', 'TRUNCATE') then null  -- noqa: LT05
            when coalesce(source.tablename, '') = '' then 'The schema.source block names no table.'
            when not {{ is_digits('message.payload.sequenceid', 20) }}
                then concat(
                        'The payload.sequenceId ',
                        coalesce(concat("'", {{ shown("message.payload.sequenceid") }}, "'"), '(missing)'),
                        ' is not a whole number of at most 20 digits: the change cannot be ordered.'
                    )
            when coalesce(message.payload.scn, '') <> '' and not {{ is_digits('message.payload.scn', 20) }}
                then concat(
                        "The payload.scn '", {{ shown("message.payload.scn") }},
                        "' is not a whole number of at most 20 digits ",
                        '(an Oracle SCN): the change cannot be ordered.'
                    )
            when commit_ts is null
                then concat(
                        'The payload has no usable timestamp.eventTime (epoch milliseconds between the years 1 ',
                        'and 9999): the change has no commit time.'
                    )
            when operation_code = 'TRUNCATE' then null
            when size(message.schema.datacolumn) > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason(
                    "'columns in schema.dataColumn'",
                    'size(message.schema.datacolumn)',
                    'cdc_max_columns'
                ) }}
            when exists(message.schema.datacolumn, c -> c.name is null)
                then 'A column of schema.dataColumn has no name.'
            when {{ repeated_name('transform(message.schema.datacolumn, c -> c.name)') }} is not null
                then concat(
                        'schema.dataColumn names the column ',
                        {{ shown(repeated_name('transform(message.schema.datacolumn, c -> c.name)')) }}, ' twice.'
                    )
            when not keys_within_limit
                then {{ over_limit_reason(
                    "'key columns in schema.primaryKey'",
                    'size(message.schema.primarykey)',
                    'cdc_max_key_columns'
                ) }}
            when exists(message.schema.primarykey, k -> k is null) then 'schema.primaryKey lists a null column name.'
            when {{ repeated_name('message.schema.primarykey') }} is not null
                then concat(
                        'schema.primaryKey names the column ',
                        {{ shown(repeated_name('message.schema.primarykey')) }}, ' twice.'
                    )
            when operation_code in ('INSERT', 'UPDATE_AFTER') and after_image is null
                then concat('A ', {{ shown("operation_code") }}, ' without an after image: the new row is missing.')
            when operation_code in ('DELETE', 'UPDATE_BEFOR') and before_image is null
                then concat('A ', {{ shown("operation_code") }}, ' without a before image: the old row is missing.')
            when key_columns is null
                then concat(
                        'The table ', {{ shown("source.tablename") }},
                        ' has no primaryKey and no #alibaba_rds_row_id# or rowid ',
                        'column: its rows cannot be told apart.'
                    )
            when exists(key_columns, k -> coalesce(after_image, before_image)[k] is null)
                then concat(
                        'A key column (', {{ shown("array_join(key_columns, ', ')") }},
                        ') has no value in the row image.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from keyed
)

select * from final
