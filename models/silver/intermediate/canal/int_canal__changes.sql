{{ config(merge_keep_existing=true, unique_key=['message_id', 'row_index', 'operation']) }}

{#-
  Canal row messages and truncates as row changes in the unified silver
  shape, one per row of `data` (docs/producers/canal.md). The key is
  `pkNames`, else the key columns declared in seed cdc_tables; a row whose
  table has neither cannot be told apart and its message is quarantined. An
  UPDATE that changes the key is a delete of the old key and an insert of
  the new one; TRUNCATE is a truncate of the table. `sequence` is the
  message's place (`es`, partition, offset) then the row's index in `data`.
  A redelivered copy of a message (same fingerprint) gives the same
  change_ids, and only its first landed copy is applied. Incremental: a run
  takes the messages staged since its last run; its merge reads only this
  table's rows landed since the earliest of them (bound_merge_by_landing).
-#}

{%- set new_messages = "quarantine_reason is null and (message_kind = 'row' or operation_code = 'TRUNCATE') and "
    ~ staged_after(ref('stg_canal__messages'), last_staged_at()) %}
{%- do bound_merge_by_landing('select ingested_at from ' ~ ref('stg_canal__messages') ~ ' where ' ~ new_messages) %}

with

messages as (
    select *
    from {{ ref('stg_canal__messages') }}
    where {{ new_messages }}
),

declared_keys as (
    select
        table_id,
        {{ declared_list('key_columns') }} as key_columns
    from {{ ref('cdc_tables') }}
    where size({{ declared_list('key_columns') }}) > 0
),

message_rows as (
    select
        messages.*,
        case
            when size(messages.key_columns) > 0 then messages.key_columns else declared_keys.key_columns
        end as row_key_columns,
        message_row.row_index,
        message_row.data_image,
        message_row.before_image
    from messages
    left join declared_keys on messages.table_id = declared_keys.table_id
        lateral view explode(
            case
                when messages.operation_code = 'TRUNCATE'
                    then array(named_struct(
                            'row_index', 0,
                            'data_image', cast(null as map <string, string>),
                            'before_image', cast(null as map <string, string>)
                        ))
                else messages.row_images
            end
        ) as message_row
),

keyed as (
    select
        *,
        transform(row_key_columns, k -> before_image[k]) as before_key,
        transform(row_key_columns, k -> data_image[k]) as after_key
    from message_rows
),

expanded as (
    select
        keyed.*,
        change.operation,
        change.image as change_image
    from keyed
        {{ explode_changes(
            [['INSERT', 'insert', 'data_image'], ['DELETE', 'delete', 'data_image'],
                ['TRUNCATE', 'truncate', 'cast(null as map <string, string>)']],
            key_kept='before_key = after_key', before_image='before_image', after_image='data_image'
        ) | indent(8) }}
),

identified as (
    select
        *,
        case
            when operation = 'truncate' then cast(map() as map <string, string>)
            else {{ map_of('row_key_columns', 'map_item', 'change_image[map_item]') }}
        end as primary_key,
        case
            when operation = 'truncate' then null
            when coalesce(size(row_key_columns), 0) <= 0
                then concat(
                        'The table ', {{ shown("table_id") }},
                        ' has no primary key (pkNames is empty): its rows cannot be told apart. ',
                        'Give the table a primary key at the source, or declare its key columns ',
                        '(key_columns in seeds/cdc_tables.csv).'
                    )
            when exists(row_key_columns, k -> change_image[k] is null)
                then concat(
                        'Row ', row_index, ' of data has no value for a key column of ', {{ shown("table_id") }},
                        ' (', {{ shown("array_join(row_key_columns, ', ')") }}, ').'
                    )
        end as row_reason
    from expanded
),

changes as (
    select
        *,
        sha2(concat_ws('|', 'canal', fingerprint, cast(row_index as string), operation), 256) as change_id,
        {#- A message is applied whole or not at all: one row's reason is its message's. -#}
        max(row_reason) over (partition by message_id) as message_reason
    from identified
),

numbered_changes as (
    -- The first landed copy of a change is applied; of copies landed together, the one
    -- earliest in the stream, so that its place orders the change whichever run reads it.
    select
        *,
        row_number() over (
            partition by change_id order by ingested_at, message_position, message_id
        ) as copy_number
    from changes
),

{% if is_incremental() -%}
    held_changes as (
        select distinct change_id
        from {{ this }}
        where not is_duplicate
    ),

{% endif -%}
copies as (
    select
        numbered_changes.*,
        numbered_changes.copy_number > 1
        {%- if is_incremental() %} or held_changes.change_id is not null{% endif %} as is_duplicate
    from numbered_changes
    {% if is_incremental() -%}
        left join held_changes on numbered_changes.change_id = held_changes.change_id
    {%- endif %}
),

final as (
    select
        message_id,
        row_index,
        change_id,
        'canal' as source_format,
        source_connector,
        source_database,
        cast(null as string) as source_schema,
        source_table,
        table_id,
        operation,
        commit_ts,
        concat(message_position, ':', lpad(cast(row_index as string), 10, '0')) as sequence,
        gtid as transaction_id,
        primary_key,
        case
            when operation = 'update' then before_image
            when operation = 'delete' then change_image
            -- the insert of a key change names the old key: gold continues that key's row
            when operation = 'insert' and operation_code = 'UPDATE' then before_image
        end as before,
        case when operation in ('insert', 'update') then data_image end as after,
        case
            when operation = 'insert' then array_sort(map_keys(data_image))
            when operation = 'update' then {{ changed_keys('before_image', 'data_image') }}
        end as changed_columns,
        ingested_at,
        operation_code,
        source_columns,
        is_duplicate,
        message_reason as quarantine_reason,
        current_timestamp() as staged_at
    from copies
)

select * from final
