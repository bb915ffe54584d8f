{#-
  Generic data test of a model's grain and row rules in one scan: the
  combination of `columns` identifies a row (unique, and never null unless a
  column is listed in `nullable`), the `not_null` columns hold no null, and
  each column of `accepted_values` holds only the listed values (a null is not
  checked there; list the column in `not_null` too if it must be set).

  dbt's separate `unique`, `not_null` and `accepted_values` tests cost one
  Spark job and one build node each. A node's fixed cost (planning, Iceberg
  table loading, job start) is most of an incremental build's time, and
  `dbt build` runs a model's tests before its children start, so the checks
  of a model share one node here.

  Returns one row per key that breaks a rule: the key, how many rows carry it
  and the broken rules (`<column> is null`, `<column> = <value>`).
-#}
{% test grain(model, columns, not_null=[], accepted_values={}, nullable=[]) %}
    {%- set columns_csv = columns | join(', ') -%}
    {%- set null_checked = (columns | reject('in', nullable) | list) + (not_null | reject('in', columns) | list) -%}
    with checked as (
        select
            {{ columns_csv }},
            filter(
                array(
                    {%- for column in null_checked %}
                    if({{ column }} is null, '{{ column }} is null', null),
                    {%- endfor %}
                    {%- for column, values in accepted_values.items() %}
                    if(
                        {{ column }} not in ({{ grain_literals(values) }}),
                        concat('{{ column }} = ', cast({{ column }} as string)),
                        null
                    ),
                    {%- endfor %}
                    cast(null as string)
                ),
                problem -> problem is not null
            ) as problems
        from {{ model }}
    ),

    grouped as (
        select
            {{ columns_csv }},
            count(*) as n_records,
            array_distinct(flatten(collect_list(problems))) as problems
        from checked
        group by {{ columns_csv }}
    )

    select *
    from grouped
    where n_records > 1 or size(problems) > 0
{% endtest %}

{#- SQL literals for a list of accepted values: strings quoted, numbers and booleans as they are. -#}
{% macro grain_literals(values) -%}
    {%- for value in values -%}
        {%- if value is string -%}'{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{%- else -%}{{ value }}{%- endif -%}
        {%- if not loop.last %}, {% endif -%}
    {%- endfor -%}
{%- endmacro %}
