{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every distinct Canal flat message parsed: its kind (row changes or DDL), its
  table, key columns (`pkNames`), its rows (`data`, with each row's previous
  values of the changed columns from `old`, aligned by index) decoded by
  `mysqlType`, its commit time (`es`), its place in the stream, a fingerprint
  of its contents that redelivered copies share, and the reason it cannot be
  used, if it cannot. Incremental: a run parses only the messages staged
  since its last run.
-#}

{%- set row_ops = ['INSERT', 'UPDATE', 'DELETE'] %}
{%- set ddl_ops = ['CREATE', 'ALTER', 'ERASE', 'TRUNCATE', 'RENAME', 'CINDEX', 'DINDEX', 'QUERY'] %}
{%- set decoded_value = canal_value_text('image_value', 'lookup_value') %}

with

messages as (
    {{ new_bronze_messages(
        'canal',
        ['message_id', 'source_partition', 'source_offset', 'message_value', 'headers', 'ingested_at']
    ) }}
),

parsed as (
    select
        *,
        from_json({{ within_size('message_value') }}, '{{ canal_message_schema() }}', {{ json_options() }})
            as message
    from messages
),

typed as (
    select
        *,
        upper(message.type) as operation_code,
        {{ map_of('map_entries(message.mysqltype)', 'map_item.key', 'map_item.value') }} as column_types,
        {#- Key lookups cost the number of key columns each: only within that limit. -#}
        coalesce(size(message.pknames), 0) <= {{ var('cdc_max_key_columns') }} as keys_within_limit,
        {{ epoch_millis_timestamp('message.es') }} as commit_ts,
        {#- What a redelivered copy repeats: everything but Canal's batch id and handling time. -#}
        sha2(
            to_json(named_struct(
                'database', message.database, 'table', message.table, 'type', message.type,
                'isDdl', message.isddl, 'es', message.es, 'gtid', message.gtid, 'sql', message.sql,
                'pkNames', message.pknames, 'data', message.data, 'old', message.old
            )),
            256
        ) as fingerprint
    from parsed
),

decoded as (
    select
        *,
        transform(
            message.data,
            (data_row, row_index) -> named_struct(
                'row_index', row_index,
                'data_image', {{ map_join('data_row', 'column_types', 'string', decoded_value) | indent(16) }},
                'old_image', {{ map_join(
                    'try_element_at(message.old, row_index + 1)', 'column_types', 'string', decoded_value
                ) | indent(16) }}
            )
        ) as decoded_rows
    from typed
),

final as (
    select
        message_id,
        case
            when operation_code in ('{{ row_ops | join("', '") }}') then 'row'  -- noqa: LT05
            when operation_code in ('{{ ddl_ops | join("', '") }}') then 'ddl'  -- noqa: LT05
        end as message_kind,
        operation_code,
        message.isddl as is_ddl,
        'mysql' as source_connector,
        nullif(message.database, '') as source_database,
        nullif(message.table, '') as source_table,
        lower(concat_ws('.', nullif(message.database, ''), nullif(message.table, ''))) as table_id,
        message.gtid,
        message.es as event_ms,
        commit_ts,
        {#- The message's place: binlog event time, then its partition and offset (line of a file). -#}
        case
            when commit_ts is not null and message.es >= 0
                then concat(
                        lpad(cast(message.es as string), 20, '0'), ':',
                        lpad(cast(coalesce(source_partition, 0) as string), 10, '0'), ':',
                        lpad(cast(source_offset as string), 20, '0')
                    )
        end as message_position,
        fingerprint,
        case when keys_within_limit then message.pknames end as key_columns,
        transform(
            decoded_rows,
            decoded_row -> named_struct(
                'row_index', decoded_row.row_index,
                'data_image', decoded_row.data_image,
                'before_image', case
                    when operation_code = 'UPDATE'
                        then {{ canal_before_image('decoded_row.data_image', 'decoded_row.old_image') | indent(24) }}
                    when operation_code = 'DELETE' then decoded_row.data_image
                end
            )
        ) as row_images,
        message.sql as ddl_text,
        case
            when keys_within_limit and size(message.mysqltype) <= {{ var('cdc_max_columns') }}
                then transform(
                        map_entries(message.mysqltype),
                        (c, i) -> struct(
                            c.key as column_name,
                            i + 1 as ordinal,
                            c.value as source_type,
                            {{ canal_spark_type('c.value') }} as spark_type,
                            array_contains(coalesce(message.pknames, array()), c.key) as is_primary_key
                        )
                    )
        end as source_columns,
        ingested_at,
        case
            {{ landing_quarantine_reasons(
                not_utf8_note="'Canal writes UTF-8 JSON.'",
                no_value_reason="'The message has no value: Canal never sends an empty message.'"
            ) | indent(12) }}
            when message.type is null and message.data is null and message.database is null
                then {{ unreadable_json_reason(
                    'message_value', "'The message'",
                    not_recognised="'The message is not a JSON object with a type and data: not a Canal message.'"
                ) | indent(16) }}
            when message.type is null then 'The message has no type: the kind of change is unknown.'
            when operation_code not in ('{{ (row_ops + ddl_ops) | join("', '") }}')  -- noqa: LT05
                then concat(
                        "Unknown Canal type '", {{ shown("message.type") }},
                        "' (rows: INSERT, UPDATE, DELETE; DDL: ", '{{ ddl_ops | join(", ") }}', ').'
                    )
            when message.isddl is not null and message.isddl <> (operation_code in ('{{ ddl_ops | join("', '") }}'))  -- noqa: LT05
                then concat(
                        'isDdl is ', cast(message.isddl as string), ' but the type is ', {{ shown("message.type") }},
                        ': the message contradicts itself.'
                    )
            when operation_code not in ('{{ row_ops | join("', '") }}', 'TRUNCATE') then null  -- noqa: LT05
            when coalesce(message.table, '') = '' then 'The message names no table.'
            when commit_ts is null or message.es < 0
                then concat(
                        'The message has no usable es (',
                        coalesce({{ shown("cast(message.es as string)") }}, 'missing'),
                        '; epoch milliseconds between 1970 and the year 9999): the change has no commit time.'
                    )
            when operation_code = 'TRUNCATE' then null
            when message.data is null or size(message.data) = 0
                then concat('A ', operation_code, ' without rows: data is missing, empty or not an array of objects.')
            when exists(message.data, data_row -> data_row is null)
                then 'A row of data is null or not a JSON object.'
            when size(message.mysqltype) > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason("'columns in mysqlType'", 'size(message.mysqltype)', 'cdc_max_columns') }}
            when {{ repeated_name('map_keys(message.mysqltype)') }} is not null
                then concat(
                        'mysqlType names the column ', {{ shown(repeated_name('map_keys(message.mysqltype)')) }},
                        ' twice.'
                    )
            when not keys_within_limit
                then {{ over_limit_reason(
                    "'key columns in pkNames'", 'size(message.pknames)', 'cdc_max_key_columns'
                ) }}
            when exists(message.pknames, k -> k is null) then 'pkNames lists a null column name.'
            when {{ repeated_name('message.pknames') }} is not null
                then concat('pkNames names the column ', {{ shown(repeated_name('message.pknames')) }}, ' twice.')
            when operation_code = 'UPDATE' and message.old is not null and size(message.old) <> size(message.data)
                then concat(
                        'old has ', size(message.old), ' entries for ', size(message.data),
                        ' rows of data: they are aligned by index.'
                    )
            when exists(message.data, data_row -> exists(message.pknames, k -> data_row[k] is null))
                then concat(
                        'A row of data has no value for a key column (',
                        {{ shown("array_join(message.pknames, ', ')") }},
                        '): Canal needs binlog_row_image FULL or NOBLOB to send the key.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from decoded
)

select * from final
