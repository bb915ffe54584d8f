{#-
  Column registry: one row per source table and column ever seen, fed by
  each producer's column metadata (CES `eventsource.cols` now). Ordinal,
  types and key membership are those of the latest change that carried the
  column (by sequence); first / last seen are commit times. Typed gold tables
  take their Spark types from here.
-#}

with

observed as (
    select
        changes.table_id,
        changes.commit_ts,
        changes.sequence,
        changes.change_id,
        source_column.column_name,
        source_column.ordinal,
        source_column.source_type,
        {{ sqlserver_spark_type('source_column.source_type') }} as spark_type,
        source_column.is_primary_key
    from {{ ref('int_ces__changes') }} as changes
        lateral view explode(changes.source_columns) as source_column
    where changes.quarantine_reason is null
),

final as (
    select
        table_id,
        column_name,
        max_by(ordinal, struct(sequence, change_id)) as ordinal,
        max_by(source_type, struct(sequence, change_id)) as source_type,
        max_by(spark_type, struct(sequence, change_id)) as spark_type,
        max_by(is_primary_key, struct(sequence, change_id)) as is_primary_key,
        min(commit_ts) as first_seen_at,
        max(commit_ts) as last_seen_at
    from observed
    group by table_id, column_name
)

select * from final
