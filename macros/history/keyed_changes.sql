{#-
  The changes of relation or CTE `changes` (silver.cdc_changes' columns)
  with their key as cdc_history's per-table settings define it (the
  `settings` CTE of the model that calls this: key columns overriding the
  message's key) and its `key_hash`; truncates of tables whose truncates do
  not count are left out.
-#}
{% macro keyed_changes(changes) -%}
    select
        keyed.*,
        {{ key_hash('keyed.table_id', 'keyed.primary_key') }} as key_hash
    from (
        select
            changes.change_id,
            changes.table_id,
            changes.operation,
            changes.commit_ts,
            changes.sequence,
            changes.transaction_id,
            changes.source_format,
            changes.ingested_at,
            changes.before,
            changes.after,
            case
                when size(settings.key_columns) > 0 and changes.operation <> 'truncate'
                    then map_from_arrays(
                            settings.key_columns,
                            transform(settings.key_columns, c -> coalesce(changes.after[c], changes.before[c]))
                        )
                else changes.primary_key
            end as primary_key
        from {{ changes }} as changes
        left join settings on changes.table_id = settings.table_id
        where changes.operation <> 'truncate' or coalesce(settings.apply_truncate, true)
    ) as keyed
{%- endmacro %}
