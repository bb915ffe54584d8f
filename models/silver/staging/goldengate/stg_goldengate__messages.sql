{{
    config(
        merge_keep_existing=true,
        unique_key='message_id',
        pre_hook="{{ create_cdc_function('cdc_json_numbers_as_text') }}",
    )
}}

{#-
  Every distinct Oracle GoldenGate message (JSON formatter, one operation per
  message) parsed: its kind (row change, truncate, or a JSON schema document
  of the Kafka handler's schema topic), table (`SCHEMA.TABLE` or
  `CATALOG.SCHEMA.TABLE`), key columns (`primary_keys`, else every column of
  the row image), row images as sent (a compressed update carries only the key
  and the changed columns), `pos` as the order, `op_ts` as the commit time,
  and the reason it cannot be used, if it cannot. A value the JSON sends as a
  number keeps the digits it was sent with (`17520.00`): the message is read
  through the lakehouse function cdc_json_numbers_as_text, since from_json
  alone would read a number through a double. Incremental: a run parses only
  the messages staged since its last run.
-#}

{%- set row_ops = ['I', 'U', 'D'] %}

with

messages as (
    {{ new_bronze_messages('goldengate', ['message_id', 'message_value', 'headers', 'ingested_at']) }}
),

parsed as (
    select
        *,
        from_json(
            cdc_json_numbers_as_text({{ within_size('message_value') }}),
            '{{ goldengate_message_schema() }}',
            {{ json_options() }}
        ) as message
    from messages
),

typed as (
    select
        *,
        message.op_type as operation_code,
        split(message.table, '[.]') as table_parts,
        {#- An empty `before` ({}) is no before image. #}
        case when size(message.before) > 0 then message.before end as before_image,
        message.after as after_image,
        {{ goldengate_timestamp('message.op_ts') }} as commit_ts,
        coalesce(size(message.primary_keys), 0) <= {{ var('cdc_max_key_columns') }} as keys_within_limit
    from parsed
),

named as (
    select
        *,
        {{ goldengate_name_part('table_parts', 3) }} as source_database,
        {{ goldengate_name_part('table_parts', 2) }} as source_schema,
        {{ goldengate_name_part('table_parts', 1) }} as source_table,
        case
            {#- A table without a declared key: its rows are told apart by all their columns. #}
            when size(message.primary_keys) > 0 then message.primary_keys
            else array_sort(map_keys(coalesce(before_image, after_image)))
        end as key_columns,
        size(message.primary_keys) > 0 as has_declared_key
    from typed
),

final as (
    select
        message_id,
        case
            when message.op_type in ('{{ row_ops | join("', '") }}') then 'row'  -- noqa: LT05
            when message.op_type = 'T' then 'truncate'
            when message.op_type is null and message.`$schema` is not null and message.title is not null
                then 'schema'
        end as message_kind,
        operation_code,
        message.table as table_name,
        source_database,
        source_schema,
        coalesce(source_table, case when message.op_type is null then message.title end) as source_table,
        lower(
            case
                when message.op_type is null and message.title is not null then message.title
                else concat_ws('.', source_database, source_schema, source_table)
            end
        ) as table_id,
        message.pos as position,
        {#- `pos` is digits (trail sequence number, then offset): padded, it sorts as text. #}
        lpad(message.pos, 40, '0') as sequence,
        commit_ts,
        {{ goldengate_timestamp('message.current_ts') }} as formatted_at,
        key_columns,
        has_declared_key,
        before_image,
        after_image,
        message.tokens,
        case
            when message.op_type is null and message.`$schema` is not null
                then concat(
                        'JSON schema of ', {{ shown("message.title") }}, ', columns: ',
                        coalesce(array_join(json_object_keys(message.definitions.row.properties), ', '), '(none)')
                    )
        end as schema_text,
        case
            {#- Inserts carry the whole row: their columns, in the order sent, describe the table. #}
            when message.op_type = 'I' and keys_within_limit and size(after_image) <= {{ var('cdc_max_columns') }}
                then transform(
                        map_keys(after_image),
                        (c, i) -> struct(
                            c as column_name,
                            i + 1 as ordinal,
                            'json' as source_type,
                            'string' as spark_type,
                            array_contains(key_columns, c) as is_primary_key
                        )
                    )
        end as source_columns,
        ingested_at,
        case
            {{ landing_quarantine_reasons(
                not_utf8_note="'GoldenGate writes UTF-8 JSON.'",
                no_value_reason="'The message has no value: GoldenGate never sends an empty message.'"
            ) | indent(12) }}
            when message is null or (message.op_type is null and message.table is null and message.title is null)
                then {{ unreadable_json_reason(
                    'message_value', "'The message'",
                    not_recognised="'The message is not a JSON object with a table and an op_type: not a GoldenGate message.'"
                ) | indent(16) }}
            when message.op_type is null and message.`$schema` is not null and message.title is not null then null
            when message.op_type is null then 'The message has no op_type: the kind of operation is unknown.'
            when message.op_type not in ('{{ (row_ops + ['T']) | join("', '") }}')  -- noqa: LT05
                then concat(
                        "Unknown GoldenGate op_type '", {{ shown("message.op_type") }},
                        "' (I insert, U update, D delete, T truncate)."
                    )
            when coalesce(message.table, '') = '' then 'The message names no table.'
            when size(table_parts) > 3 or source_table is null or (size(table_parts) > 1 and source_schema is null)
                or (size(table_parts) > 2 and source_database is null)
                then concat(
                        "The table '", {{ shown("message.table") }},
                        "' is not SCHEMA.TABLE or CATALOG.SCHEMA.TABLE."
                    )
            when not {{ is_digits('message.pos', 40) }}
                then concat(
                        'The pos ', coalesce(concat("'", {{ shown("message.pos") }}, "'"), '(missing)'),
                        ' is not a whole number of at most 40 digits (trail sequence number and offset): ',
                        'the operation cannot be ordered.'
                    )
            when commit_ts is null
                then concat(
                        'The op_ts ', coalesce(concat("'", {{ shown("message.op_ts") }}, "'"), '(missing)'),
                        ' is not a time YYYY-MM-DD HH:MM:SS.ffffff between the years 1 and 9999: ',
                        'the operation has no commit time.'
                    )
            when message.op_type = 'T' then null
            when not keys_within_limit
                then {{ over_limit_reason(
                    "'key columns in primary_keys'",
                    'size(message.primary_keys)',
                    'cdc_max_key_columns'
                ) }}
            when
                greatest(coalesce(size(before_image), 0), coalesce(size(after_image), 0))
                > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason(
                    "'columns in a row image'",
                    'greatest(coalesce(size(before_image), 0), coalesce(size(after_image), 0))',
                    'cdc_max_columns'
                ) }}
            when exists(message.primary_keys, k -> k is null) then 'primary_keys lists a null column name.'
            when {{ repeated_name('message.primary_keys') }} is not null
                then concat(
                        'primary_keys names the column ', {{ shown(repeated_name('message.primary_keys')) }}, ' twice.'
                    )
            when {{ repeated_name('map_keys(after_image)') }} is not null
                then concat(
                        'The after image names the column ', {{ shown(repeated_name('map_keys(after_image)')) }},
                        ' twice.'
                    )
            when {{ repeated_name('map_keys(before_image)') }} is not null
                then concat(
                        'The before image names the column ', {{ shown(repeated_name('map_keys(before_image)')) }},
                        ' twice.'
                    )
            when message.op_type in ('I', 'U') and after_image is null
                then concat('An op_type ', message.op_type, ' without an after image: the new row is missing.')
            when message.op_type = 'D' and before_image is null
                then 'An op_type D without a before image: the deleted row is missing.'
            when not has_declared_key and size(key_columns) > {{ var('cdc_max_key_columns') }}
                then concat(
                        'The table ', {{ shown("message.table") }}, ' has no primary_keys, and its ', size(key_columns),
                        ' columns are more than the {{ var("cdc_max_key_columns") }} that can tell its rows apart ',
                        '(dbt var cdc_max_key_columns).'
                    )
            when exists(
                    key_columns,
                    k -> case
                        when message.op_type = 'D' then before_image[k]
                        when map_contains_key(after_image, k) then after_image[k]
                        else before_image[k]
                    end is null
                )
                then concat(
                        'A key column (', {{ shown("array_join(key_columns, ', ')") }},
                        ') has no value in the row image.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from named
)

select * from final
