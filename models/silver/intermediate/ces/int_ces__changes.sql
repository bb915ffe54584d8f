{{ config(merge_keep_existing=true, unique_key='change_id') }}

{#-
  Complete CES events as row changes in the unified silver shape: `data`
  parsed, then its row images (JSON strings again); `cols` gives each value's
  SQL Server type for the contract's text forms, `pkkey` the primary key
  (for a table without one, the key columns declared in seed cdc_tables).
  `quarantine_reason` says why an event cannot become a change.
  Incremental: a run parses only the events completed since its last run.
-#}

with

events as (
    select *
    from {{ ref('int_ces__events') }}
    where
        is_complete
        and {{ staged_after(ref('int_ces__events'), last_staged_at()) }}
),

parsed as (
    select
        *,
        from_json(data_text, '{{ ces_data_schema() }}', {{ json_options() }}) as payload
    from events
),

imaged as (
    select
        *,
        payload.eventsource,
        from_json(payload.eventrow.old, 'map<string,string>', {{ json_options() }}) as old_image,
        from_json(payload.eventrow.current, 'map<string,string>', {{ json_options() }}) as current_image,
        {{ map_of('payload.eventsource.cols', 'map_item.name', 'map_item.type') }} as column_types,
        {#- Key lookups cost the number of key columns each: only within that limit. -#}
        coalesce(size(payload.eventsource.pkkey), 0) <= {{ var('cdc_max_key_columns') }} as keys_within_limit,
        split(logical_id, ':') as logical_id_parts
    from parsed
),

typed as (
    select
        *,
        {{ map_join('old_image', 'column_types', 'string', ces_value_text('image_value', 'lookup_value')) }}
            as before_image,
        {{ map_join('current_image', 'column_types', 'string', ces_value_text('image_value', 'lookup_value')) }}
            as after_image,
        upper(
            regexp_replace(
                coalesce(eventsource.transaction.commitlsn, try_element_at(logical_id_parts, 2)), '^0[xX]|:', ''
            )
        ) as commit_lsn,
        coalesce(eventsource.transaction.sequencenumber, try_element_at(logical_id_parts, 3)) as sequence_number,
        lower(concat_ws('.', nullif(eventsource.db, ''), nullif(eventsource.schema, ''), nullif(eventsource.tbl, '')))
            as table_id
    from imaged
),

declared_keys as (
    select
        table_id,
        {{ declared_list('key_columns') }} as key_columns
    from {{ ref('cdc_tables') }}
    where size({{ declared_list('key_columns') }}) > 0
),

keyed as (
    select
        typed.*,
        case
            when not typed.keys_within_limit or exists(typed.eventsource.pkkey, k -> k.columnname is null)
                then cast(null as map <string, string>)
            when coalesce(size(typed.eventsource.pkkey), 0) > 0
                then {{ map_of(
                    'typed.eventsource.pkkey',
                    'map_item.columnname',
                    ces_value_text('map_item.value', 'typed.column_types[map_item.columnname]')
                ) }}
            when declared_keys.key_columns is not null
                then map_from_arrays(
                        declared_keys.key_columns,
                        transform(
                            declared_keys.key_columns,
                            c -> coalesce(typed.after_image[c], typed.before_image[c])
                        )
                    )
        end as key_values,
        declared_keys.key_columns as declared_key_columns
    from typed
    left join declared_keys on typed.table_id = declared_keys.table_id
),

final as (
    select
        sha2(concat_ws('|', 'ces', event_key), 256) as change_id,
        'ces' as source_format,
        'sqlserver' as source_connector,
        eventsource.db as source_database,
        eventsource.schema as source_schema,
        eventsource.tbl as source_table,
        table_id,
        case operation_code when 'INS' then 'insert' when 'UPD' then 'update' when 'DEL' then 'delete' end
            as operation,
        {{ calendar_timestamp('coalesce(to_timestamp(eventsource.transaction.committime), event_time)') }}
            as commit_ts,
        concat(lpad(commit_lsn, 20, '0'), ':', lpad(sequence_number, 20, '0')) as sequence,
        commit_lsn as transaction_id,
        key_values as primary_key,
        case when size(before_image) > 0 then before_image end as before,
        case when operation_code <> 'DEL' and size(after_image) > 0 then after_image end as after,
        case
            when operation_code = 'INS' then array_sort(map_keys(after_image))
            when operation_code = 'UPD' and size(before_image) > 0
                then {{ changed_keys('before_image', 'after_image') }}
        end as changed_columns,
        ingested_at,
        event_key,
        case
            when keys_within_limit
                then transform(
                        eventsource.cols,
                        c -> struct(
                            c.name as column_name,
                            try_add(c.index, 1) as ordinal,
                            c.type as source_type,
                            {{ sqlserver_spark_type('c.type') | indent(28) }} as spark_type,
                            array_contains(map_keys(key_values), c.name) as is_primary_key
                        )
                    )
        end as source_columns,
        case
            when payload is null or eventsource is null
                then {{ unreadable_json_reason(
                    'data_text', "'The data attribute (after joining its segments)'",
                    not_recognised="'The data attribute (after joining its segments) is not JSON "
                        ~ "with an eventsource object.'"
                ) | indent(16) }}
            when size(eventsource.cols) > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason(
                    "'columns in eventsource.cols'",
                    'size(eventsource.cols)',
                    'cdc_max_columns'
                ) }}
            when not keys_within_limit
                then {{ over_limit_reason(
                    "'key columns in eventsource.pkkey'",
                    'size(eventsource.pkkey)',
                    'cdc_max_key_columns'
                ) }}
            when exists(eventsource.cols, c -> c.name is null) then 'A column of eventsource.cols has no name.'
            when {{ repeated_name('transform(eventsource.cols, c -> c.name)') }} is not null
                then concat(
                        'eventsource.cols names the column ',
                        {{ shown(repeated_name('transform(eventsource.cols, c -> c.name)')) }}, ' twice.'
                    )
            when {{ repeated_name('transform(eventsource.pkkey, k -> k.columnname)') }} is not null
                then concat(
                        'eventsource.pkkey names the column ',
                        {{ shown(repeated_name('transform(eventsource.pkkey, k -> k.columnname)')) }}, ' twice.'
                    )
            when coalesce(eventsource.tbl, '') = ''
                then 'The eventsource names no table (tbl is missing or empty).'
            when exists(eventsource.pkkey, k -> k.columnname is null or k.value is null)
                then 'A pkkey entry has no column name or no value.'
            when key_values is null
                then concat(
                        'The table ', {{ shown("table_id") }},
                        ' sent no primary key (pkkey is empty): its rows cannot be told apart. ',
                        'Give the table a primary key at the source, or declare its key columns ',
                        '(key_columns in seeds/cdc_tables.csv).'
                    )
            when exists(map_values(key_values), v -> v is null)
                then concat(
                        'The event lacks a value for a declared key column of ', {{ shown("table_id") }},
                        ' (', array_join(declared_key_columns, ', '), ').'
                    )
            when payload.eventrow.current is not null and current_image is null
                and {{ json_shape('payload.eventrow.current') }} = 'too_deep'
                then {{ too_deep_reason("'The eventrow.current image'") }}
            when operation_code in ('INS', 'UPD') and (current_image is null or size(current_image) = 0)
                then 'The eventrow.current image is missing or not a JSON object, though the operation needs it.'
            when payload.eventrow.old is not null and old_image is null
                then {{ unreadable_json_reason(
                    'payload.eventrow.old', "'The eventrow.old image'",
                    not_recognised="'The eventrow.old image is not a JSON object.'"
                ) | indent(16) }}
            when commit_lsn is null or sequence_number is null
                then 'The event carries neither transaction.commitlsn/sequencenumber nor a logicalid to order it by.'
            when not coalesce(commit_lsn rlike '^[0-9A-F]{1,20}$', false)
                then concat(
                        "The commit position '", {{ shown("commit_lsn") }},
                        "' (transaction.commitlsn, else the logicalid) ",
                        'is not a SQL Server LSN (at most 20 hexadecimal digits).'
                    )
            when not {{ is_digits('sequence_number', 20) }}
                then concat(
                        "The sequence number '", {{ shown("sequence_number") }},
                        "' (transaction.sequencenumber, else the logicalid) ",
                        'is not a whole number of at most 20 digits.'
                    )
            when commit_ts is null
                then 'The event has no usable commit time (transaction.committime, else the CloudEvents time).'
        end as quarantine_reason,
        false as is_duplicate,
        current_timestamp() as staged_at
    from keyed
)

select * from final
