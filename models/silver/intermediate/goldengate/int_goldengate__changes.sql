{{ config(merge_keep_existing=true, unique_key=['message_id', 'operation']) }}

{#-
  GoldenGate operations as row changes in the unified silver shape, one per
  message: an insert, an update (its images as sent: a compressed update
  carries the key and the changed columns only, and gold keeps the others),
  a delete, or a truncate of the table. An update whose key values differ
  between its images is a delete of the old key and an insert of the new
  one; the insert names the old key's image as its before image, so gold
  carries the columns a compressed update did not send from the old key's
  row (docs/contract.md, "gold.cdc_history"). `change_id` comes from the
  table and `pos`, so a message delivered again (same or another offset) is
  a duplicate of its first landed copy. Incremental: a run takes the
  messages staged since its last run and compares them with the changes
  already held; its merge reads only this table's rows landed since the
  earliest of them (bound_merge_by_landing).
-#}

{%- set since = last_staged_at() %}
{%- set new_messages = "quarantine_reason is null and message_kind in ('row', 'truncate') and "
    ~ staged_after(ref('stg_goldengate__messages'), since) %}
{%- do bound_merge_by_landing(
    'select ingested_at from ' ~ ref('stg_goldengate__messages') ~ ' where ' ~ new_messages
) %}

with

messages as (
    select
        *,
        transform(key_columns, k -> before_image[k]) as before_key,
        {#- A column absent from the after image is unchanged: its value is the before image's. #}
        transform(
            key_columns,
            k -> case when map_contains_key(after_image, k) then after_image[k] else before_image[k] end
        ) as after_key
    from {{ ref('stg_goldengate__messages') }}
    where {{ new_messages }}
),

expanded as (
    select
        messages.*,
        change.operation,
        change.image as key_image
    from messages
        {{ explode_changes(
            [['I', 'insert', 'after_image'], ['D', 'delete', 'before_image'],
                ['T', 'truncate', 'cast(null as map <string, string>)']],
            key_kept='before_image is null or before_key = after_key',
            before_image='before_image', after_image='after_image'
        ) | indent(8) }}
),

changes as (
    select
        *,
        sha2(concat_ws('|', 'goldengate', table_id, sequence, operation), 256) as change_id
    from expanded
),

{{ change_copies('changes') }}

final as (
    select
        copies.message_id,
        copies.change_id,
        'goldengate' as source_format,
        'oracle' as source_connector,
        copies.source_database,
        copies.source_schema,
        copies.source_table,
        copies.table_id,
        copies.operation,
        copies.commit_ts,
        copies.sequence,
        cast(null as string) as transaction_id,
        case
            when copies.operation = 'truncate' then cast(map() as map <string, string>)
            when copies.operation = 'insert' and copies.operation_code = 'U'
                then map_from_arrays(copies.key_columns, copies.after_key)
            when copies.operation = 'delete' then map_from_arrays(copies.key_columns, copies.before_key)
            when copies.operation_code = 'I'
                then {{ map_of('copies.key_columns', 'map_item', 'copies.after_image[map_item]') }}
            else map_from_arrays(copies.key_columns, copies.after_key)
        end as primary_key,
        case
            when copies.operation in ('update', 'delete') then copies.before_image
            {#- The insert of a key change: the old key's image tells gold where the row came from. #}
            when copies.operation = 'insert' and copies.operation_code = 'U' then copies.before_image
        end as before,
        case when copies.operation in ('insert', 'update') then copies.after_image end as after,
        case
            when copies.operation = 'insert' then array_sort(map_keys(copies.after_image))
            when copies.operation = 'update' then {{ changed_keys('copies.before_image', 'copies.after_image') }}
        end as changed_columns,
        copies.ingested_at,
        copies.operation_code,
        copies.position,
        copies.source_columns,
        copies.is_duplicate,
        cast(null as string) as quarantine_reason,
        current_timestamp() as staged_at
    from copies
)

select * from final
