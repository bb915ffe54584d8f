{#-
  An incremental merge that replaces whole groups of rows: configured on a
  model with `incremental_strategy='merge'` and `merge_replace_by=<column>`,
  the rows a run produces for one value of that column (e.g. every version
  of one key) replace all the rows the table holds for it, in one Iceberg
  commit: rows with the same unique key are updated, new ones inserted,
  and the group's rows the run no longer produces are deleted. Models
  without `merge_replace_by` get dbt-spark's merge unchanged.
-#}

{% macro spark_embedded__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {%- set replace_by = config.get('merge_replace_by') -%}
    {%- if not replace_by -%}
        {{ return(spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates)) }}
    {%- endif -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
    {#- The source (a temporary view) is read three times below: compute it once. -#}
    {%- do run_query('cache table ' ~ source) -%}
    merge into {{ target }} as dbt_internal_dest
    using (
        select
            {% for column in columns -%}
                replacement.{{ column }},
            {% endfor -%}
            false as dbt_replace_delete
        from {{ source }} as replacement
        union all
        select
            {% for column in columns -%}
                stale.{{ column }},
            {% endfor -%}
            true as dbt_replace_delete
        from {{ target }} as stale
        left semi join {{ source }} as replaced_group
            on stale.{{ replace_by }} = replaced_group.{{ replace_by }}
        left anti join {{ source }} as kept
            on {% for key in keys %}stale.{{ key }} = kept.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
    ) as dbt_internal_source
        on {% for key in keys %}dbt_internal_source.{{ key }} = dbt_internal_dest.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
    when matched and dbt_internal_source.dbt_replace_delete then delete
    when matched then update set
        {% for column in columns -%}
            {{ column }} = dbt_internal_source.{{ column }}{% if not loop.last %},{% endif %}
        {% endfor %}
    when not matched and not dbt_internal_source.dbt_replace_delete then insert ({{ columns | join(', ') }})
        values ({% for column in columns %}dbt_internal_source.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %})
{%- endmacro %}
