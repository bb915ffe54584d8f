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

  The grouping keeps only a count and one true/false flag per rule, so Spark
  aggregates in a hash map of fixed-width buffers; collecting each row's
  messages (or offending values) would make it sort every row instead, about
  twice the time on a million rows.

  Returns one row per key that breaks a rule: the key, how many rows carry it
  and the broken rules (`<column> is null`, `<column> is not an accepted
  value`).
-#}
{% test grain(model, columns, not_null=[], accepted_values={}, nullable=[]) %}
    {%- set columns_csv = columns | join(', ') -%}
    {%- set null_checked = (columns | reject('in', nullable) | list) + (not_null | reject('in', columns) | list) -%}
    {%- set rules = [] -%}
    {%- for column in null_checked -%}
        {%- do rules.append((column ~ ' is null', column ~ ' is null')) -%}
    {%- endfor -%}
    {%- for column, values in accepted_values.items() -%}
        {%- do rules.append((column ~ ' not in (' ~ grain_literals(values) ~ ')', column ~ ' is not an accepted value')) -%}
    {%- endfor %}
    with grouped as (
        select
            {{ columns_csv }},
            {%- for condition, _ in rules %}
            coalesce(bool_or({{ condition }}), false) as broken_{{ loop.index }},
            {%- endfor %}
            count(*) as n_records
        from {{ model }}
        group by {{ columns_csv }}
    ),

    checked as (
        select
            {{ columns_csv }},
            n_records,
            filter(
                array(
                    {%- for _, message in rules %}
                    if(broken_{{ loop.index }}, '{{ message }}', null),
                    {%- endfor %}
                    cast(null as string)
                ),
                problem -> problem is not null
            ) as problems
        from grouped
    )

    select *
    from checked
    where n_records > 1 or size(problems) > 0
{% endtest %}

{#- SQL literals for a list of accepted values: strings quoted, numbers and booleans as they are. -#}
{% macro grain_literals(values) -%}
    {%- for value in values -%}
        {%- if value is string -%}'{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{%- else -%}{{ value }}{%- endif -%}
        {%- if not loop.last %}, {% endif -%}
    {%- endfor -%}
{%- endmacro %}
