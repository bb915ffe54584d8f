{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='change_id',
        on_schema_change='fail',
    )
}}

{#-
  Complete CES events as row changes in the unified silver shape: `data`
  parsed, then its row images (JSON strings again); `cols` gives each value's
  SQL Server type for the contract's text forms, `pkkey` the primary key.
  `quarantine_reason` says why an event cannot become a change.
  Incremental: a run parses only the events completed since its last run.
-#}

with

events as (
    select *
    from {{ ref('int_ces__events') }}
    where
        is_complete
        {% if is_incremental() -%}
            and staged_at > {{ last_staged_at() }}
        {%- endif %}
),

parsed as (
    select
        *,
        from_json(data_text, '{{ ces_data_schema() }}') as payload
    from events
),

imaged as (
    select
        *,
        payload.eventsource,
        from_json(payload.eventrow.old, 'map<string,string>') as old_image,
        from_json(payload.eventrow.current, 'map<string,string>') as current_image,
        map_from_entries(
            transform(payload.eventsource.cols, c -> struct(c.name, c.type))
        ) as column_types,
        split(logical_id, ':') as logical_id_parts
    from parsed
),

typed as (
    select
        *,
        transform_values(old_image, (k, v) -> {{ ces_value_text('v', 'column_types[k]') }}) as before_image,
        transform_values(current_image, (k, v) -> {{ ces_value_text('v', 'column_types[k]') }}) as after_image,
        upper(regexp_replace(coalesce(eventsource.transaction.commitlsn, logical_id_parts[1]), '^0[xX]|:', ''))
            as commit_lsn,
        coalesce(eventsource.transaction.sequencenumber, logical_id_parts[2]) as sequence_number
    from imaged
),

final as (
    select
        sha2(concat_ws('|', 'ces', event_key), 256) as change_id,
        'ces' as source_format,
        'sqlserver' as source_connector,
        eventsource.db as source_database,
        eventsource.schema as source_schema,
        eventsource.tbl as source_table,
        lower(concat_ws('.', nullif(eventsource.db, ''), nullif(eventsource.schema, ''), nullif(eventsource.tbl, '')))
            as table_id,
        case operation_code when 'INS' then 'insert' when 'UPD' then 'update' when 'DEL' then 'delete' end
            as operation,
        coalesce(to_timestamp(eventsource.transaction.committime), event_time) as commit_ts,
        concat(lpad(commit_lsn, 20, '0'), ':', lpad(sequence_number, 20, '0')) as sequence,
        commit_lsn as transaction_id,
        map_from_entries(
            transform(
                eventsource.pkkey,
                k -> struct(k.columnname, {{ ces_value_text('k.value', 'column_types[k.columnname]') }})
            )
        ) as primary_key,
        case when size(before_image) > 0 then before_image end as before,
        case when operation_code <> 'DEL' and size(after_image) > 0 then after_image end as after,
        case
            when operation_code = 'INS' then map_keys(after_image)
            when operation_code = 'UPD' and size(before_image) > 0
                then filter(map_keys(after_image), k -> not (before_image[k] <=> after_image[k]))
        end as changed_columns,
        ingested_at,
        event_key,
        transform(
            eventsource.cols,
            c -> struct(
                c.name as column_name,
                c.index + 1 as ordinal,
                c.type as source_type,
                {{ sqlserver_spark_type('c.type') | indent(16) }} as spark_type,
                array_contains(transform(eventsource.pkkey, k -> k.columnname), c.name) as is_primary_key
            )
        ) as source_columns,
        case
            when payload is null or eventsource is null
                then 'The data attribute (after joining its segments) is not JSON with an eventsource object.'
            when coalesce(eventsource.tbl, '') = ''
                then 'The eventsource names no table (tbl is missing or empty).'
            when coalesce(size(eventsource.pkkey), 0) = 0
                then concat(
                        'The table ', coalesce(eventsource.tbl, ''),
                        ' sent no primary key (pkkey is empty): its rows cannot be told apart. ',
                        'Give the table a primary key at the source.'
                    )
            when exists(eventsource.pkkey, k -> k.columnname is null or k.value is null)
                then 'A pkkey entry has no column name or no value.'
            when operation_code in ('INS', 'UPD') and (current_image is null or size(current_image) = 0)
                then 'The eventrow.current image is missing or not a JSON object, though the operation needs it.'
            when payload.eventrow.old is not null and old_image is null
                then 'The eventrow.old image is not a JSON object.'
            when commit_lsn is null or sequence_number is null
                then 'The event carries neither transaction.commitlsn/sequencenumber nor a logicalid to order it by.'
        end as quarantine_reason,
        false as is_duplicate,
        current_timestamp() as staged_at
    from typed
)

select * from final
