{{ config(merge_keep_existing=true, unique_key='change_id') }}

{#-
  Complete DataWorks events as row changes in the unified silver shape. An
  update that changes the row's key (its key columns differ between the two
  images) is a delete of the old key and an insert of the new one; a
  TRUNCATE is a truncate of the table. Incremental: a run takes the events
  completed since its last run; an event's changes are emitted once.
-#}

with

events as (
    select
        events.*,
        transform(events.key_columns, k -> events.before_image[k]) as before_key,
        transform(events.key_columns, k -> events.after_image[k]) as after_key
    from {{ ref('int_dataworks__events') }} as events
    {% if is_incremental() -%}
        {#- Emitted once: a copy arriving after its event completed changes nothing. -#}
        left anti join {{ this }} as emitted on events.event_key = emitted.event_key
    {%- endif %}
    where events.is_complete and {{ staged_after(ref('int_dataworks__events'), last_staged_at(), 'events') }}
),

expanded as (
    select
        events.*,
        change.operation as change_operation,
        change.image as change_image
    from events
        {{ explode_changes(
            [['INSERT', 'insert', 'after_image'], ['DELETE', 'delete', 'before_image'],
                ['TRUNCATE', 'truncate', 'cast(null as map <string, string>)']],
            key_kept='before_key = after_key', before_image='before_image', after_image='after_image'
        ) | indent(8) }}
),

final as (
    select
        sha2(concat_ws('|', 'dataworks', event_key, change_operation), 256) as change_id,
        'dataworks' as source_format,
        source_connector,
        source_database,
        source_schema,
        source_table,
        table_id,
        change_operation as operation,
        commit_ts,
        sequence,
        cast(null as string) as transaction_id,
        case
            when change_operation = 'truncate' then cast(map() as map <string, string>)
            else {{ map_of('key_columns', 'map_item', 'change_image[map_item]') }}
        end as primary_key,
        case when change_operation in ('update', 'delete') then before_image end as before,
        case when change_operation in ('update', 'insert') then after_image end as after,
        case
            when change_operation = 'insert' then array_sort(map_keys(after_image))
            when change_operation = 'update' then {{ changed_keys('before_image', 'after_image') }}
        end as changed_columns,
        ingested_at,
        event_key,
        source_columns,
        false as is_duplicate,
        cast(null as string) as quarantine_reason,
        current_timestamp() as staged_at
    from expanded
)

select * from final
