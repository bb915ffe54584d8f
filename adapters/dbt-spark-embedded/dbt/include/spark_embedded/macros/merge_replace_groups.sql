{#-
  An incremental merge that replaces whole groups of rows: configured on a
  model with `incremental_strategy='merge'` and `merge_replace_by=<column>`,
  the rows a run produces for one value of that column (e.g. every version
  of one key) replace all the rows the table holds for it, in one Iceberg
  commit: rows with the same unique key are updated, new ones inserted,
  and the group's rows the run no longer produces are deleted. Models
  without `merge_replace_by` get dbt-spark's merge unchanged.

  With `merge_replace_from=<column>` as well, a run replaces only the part of
  each group from the smallest value of that column it produces for the
  group on: the group's rows below it are kept as they are (e.g. a key's
  versions before the first one the run wrote again).

  The merge reads the run's rows three times, so they are written once to a
  scratch Iceberg table beside the target (replacement_relation); the model
  drops it in a post-hook (drop_merge_replacement). Caching the temporary
  view instead does not work: Spark re-analyses a temporary view at each
  reference, and a query with CTEs then no longer matches its cached plan,
  so every reference would recompute the model's query.

  A model configured with `merge_keep_existing=true` instead keeps the rows
  the table already holds and only inserts rows with a new unique key
  (merge_new_keys).
-#}

{% macro spark_embedded__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {%- if config.get('merge_keep_existing') -%}
        {{ return(merge_new_keys(target, source, unique_key)) }}
    {%- endif -%}
    {%- set replace_by = config.get('merge_replace_by') -%}
    {%- set replace_from = config.get('merge_replace_from') -%}
    {%- if not replace_by -%}
        {%- set target_bound = merge_target_bound() -%}
        {%- set predicates = (incremental_predicates or []) + ([target_bound] if target_bound else []) -%}
        {{ return(spark__get_merge_sql(target, source, unique_key, dest_columns, predicates or none)) }}
    {%- endif -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set target_columns = adapter.get_columns_in_relation(target) -%}
    {%- set columns = target_columns | map(attribute='name') | list -%}
    {%- set replacement = replacement_relation(target) -%}
    {%- do run_query(drop_merge_replacement(target)) -%}  {#- left over by a failed run -#}
    {%- do run_query('create table ' ~ replacement ~ ' using iceberg as select * from ' ~ source) -%}
    merge into {{ target }} as dbt_internal_dest
    using (
        select
            {% for column in columns -%}
                replacement.{{ column }},
            {% endfor -%}
            false as dbt_replace_delete
        from {{ replacement }} as replacement
        union all
        {#- A stale row is only deleted: read its key, not its other columns. #}
        select
            {% for column in target_columns -%}
                {% if column.name in keys or column.name in [replace_by, replace_from] -%}
                    stale.{{ column.name }},
                {% else -%}
                    cast(null as {{ column.data_type }}) as {{ column.name }},
                {% endif -%}
            {% endfor -%}
            true as dbt_replace_delete
        from {{ target }} as stale
        {%- if replace_from %}
            left semi join (
                select {{ replace_by }}, min({{ replace_from }}) as replaced_from
                from {{ replacement }}
                group by {{ replace_by }}
            ) as replaced_group
                on
                    stale.{{ replace_by }} = replaced_group.{{ replace_by }}
                    and stale.{{ replace_from }} >= replaced_group.replaced_from
        {%- else %}
            left semi join {{ replacement }} as replaced_group
                on stale.{{ replace_by }} = replaced_group.{{ replace_by }}
        {%- endif %}
        left anti join {{ replacement }} as kept
            on {{ key_condition(unique_key, 'stale', 'kept') }}
    ) as dbt_internal_source
        on {{ key_condition(unique_key, 'dbt_internal_source', 'dbt_internal_dest') }}
    when matched and dbt_internal_source.dbt_replace_delete then delete
    when matched then update set
        {% for column in columns -%}
            {{ column }} = dbt_internal_source.{{ column }}{% if not loop.last %},{% endif %}
        {% endfor %}
    when not matched and not dbt_internal_source.dbt_replace_delete then insert ({{ columns | join(', ') }})
        values ({% for column in columns %}dbt_internal_source.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %})
{%- endmacro %}


{#-
  An insert-only merge: the source rows whose unique key the target does not
  hold yet are inserted, the others are left alone. For models whose rows
  never change once written (a parse of an immutable message, a change
  emitted once). Spark plans a merge without a MATCHED action as an anti
  join on the key and an append, so it neither reads the target's other
  columns nor rewrites its files; and unlike an append, a row that reaches
  the model again (say, after an upstream full refresh) is not duplicated.
-#}
{% macro merge_new_keys(target, source, unique_key) -%}
    {%- set target_bound = merge_target_bound() -%}
    merge into {{ target }} as dbt_internal_dest
    using {{ source }} as dbt_internal_source
        on {{ key_condition(unique_key, 'dbt_internal_source', 'dbt_internal_dest') }}
        {%- if target_bound %} and {{ target_bound }}{% endif %}
    when not matched then insert *
{%- endmacro %}


{#-
  A condition on the target's rows that the model's SQL found while compiling
  (the project's macro bound_merge_target, kept in node_memo for this
  invocation and node), or none: every target row that the run's rows match
  meets it, so it joins the merge condition, and Spark hands it to Iceberg's
  scan of the target, which skips the files that cannot match.
-#}
{% macro merge_target_bound() -%}
    {{ return(adapter.node_memo(invocation_id ~ ':' ~ model.unique_id ~ ':merge_target_bound')) }}
{%- endmacro %}


{#-
  The join condition of two aliases on a key: `<left>.<k> = <right>.<k>` for
  each column of `key` (a column name or a list of them), joined by `and`.
-#}
{% macro key_condition(key, left, right) -%}
    {%- set columns = [key] if key is string else key -%}
    {%- for column in columns -%}
        {{ left }}.{{ column }} = {{ right }}.{{ column }}{% if not loop.last %} and {% endif %}
    {%- endfor -%}
{%- endmacro %}


{#- The scratch table holding a replace-groups merge's rows: `<target>__dbt_replacement`. -#}
{% macro replacement_relation(target) -%}
    {{ return(target.incorporate(path={'identifier': target.identifier ~ '__dbt_replacement'})) }}
{%- endmacro %}


{#- Post-hook SQL dropping the scratch table of a replace-groups merge into `target`. -#}
{% macro drop_merge_replacement(target) -%}
    drop table if exists {{ replacement_relation(target) }} purge
{%- endmacro %}
