{#-
  Type-2 history of every source row (CONTRACT §5): one version per change
  of a key, in the source's commit order (`sequence`), whatever the arrival
  order. Each version's row image is the previous one with the change's
  columns laid over it, so columns a change did not carry keep their value;
  a delete keeps the last image before it; an insert after a delete starts
  afresh. A truncate closes every key of its table that is live at that
  point with a deleted version.
-#}

with

row_changes as (
    select
        *,
        {{ key_hash('table_id', 'primary_key') }} as key_hash
    from {{ ref('cdc_changes') }}
    where operation <> 'truncate' and primary_key is not null
),

table_keys as (
    select
        key_hash,
        first(table_id) as table_id,
        first(primary_key) as primary_key,
        min(sequence) as first_sequence
    from row_changes
    group by key_hash
),

truncated_keys as (
    -- A truncate reaches every key of its table seen before it; the fold skips
    -- the keys that are not live at that point.
    select
        truncates.change_id,
        truncates.source_format,
        truncates.source_connector,
        truncates.source_database,
        truncates.source_schema,
        truncates.source_table,
        truncates.table_id,
        truncates.operation,
        truncates.commit_ts,
        truncates.sequence,
        truncates.transaction_id,
        table_keys.primary_key,
        truncates.before,
        truncates.after,
        truncates.changed_columns,
        truncates.ingested_at,
        table_keys.key_hash
    from {{ ref('cdc_changes') }} as truncates
    inner join table_keys
        on truncates.table_id = table_keys.table_id and truncates.sequence > table_keys.first_sequence
    where truncates.operation = 'truncate'
),

changes as (
    select * from row_changes
    union all
    select * from truncated_keys
),

numbered as (
    select
        *,
        cast(row_number() over (partition by key_hash order by sequence, change_id) as int) as version_number
    from changes
),

per_key as (
    select
        key_hash,
        first(table_id) as table_id,
        first(primary_key) as primary_key,
        array_sort(
            collect_list(struct(version_number, change_id, operation, commit_ts, before, after)),
            (l, r)
            -> case
                when l.version_number < r.version_number then -1 when l.version_number > r.version_number then 1 else 0
            end
        ) as versions
    from numbered
    group by key_hash
),

folded as (
    select
        key_hash,
        table_id,
        primary_key,
        aggregate(
            versions,
            {{ empty_history() }},
            (acc, change) -> case
                when change.operation = 'truncate' and (size(acc) = 0 or element_at(acc, -1).is_deleted)
                    then acc
                else concat(acc, array(struct(
                        cast(size(acc) + 1 as int) as version_number,
                        change.change_id as change_id,
                        change.operation as operation,
                        change.commit_ts as commit_ts,
                        change.operation in ('delete', 'truncate') as is_deleted,
                        case
                            when change.operation in ('delete', 'truncate')
                                then coalesce(
                                        element_at(acc, -1).row_data, change.before, cast(map() as map <string, string>)
                                    )
                            when change.operation in ('insert', 'snapshot')
                                and (size(acc) = 0 or element_at(acc, -1).is_deleted)
                                then coalesce(change.after, cast(map() as map <string, string>))
                            else {{ merge_images(
                            "coalesce(case when size(acc) > 0 and not element_at(acc, -1).is_deleted then element_at(acc, -1).row_data end, change.before, cast(map() as map<string,string>))",
                            "coalesce(change.after, cast(map() as map<string,string>))"
                        ) }}
                        end as row_data
                    )))
            end
        ) as history
    from per_key
),

exploded as (
    select
        table_id,
        primary_key,
        key_hash,
        version.*
    from folded
        lateral view explode(history) as version
),

final as (
    select
        table_id,
        primary_key,
        key_hash,
        version_number,
        commit_ts as valid_from,
        lead(commit_ts) over (partition by key_hash order by version_number) as valid_to,
        version_number = max(version_number) over (partition by key_hash) as is_current,
        is_deleted,
        operation,
        row_data,
        change_id
    from exploded
)

select * from final
