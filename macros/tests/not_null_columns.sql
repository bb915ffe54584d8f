{#-
  Generic data test: none of `columns` holds a null. One query per model
  instead of one per column (dbt's column-level `not_null`), so a build runs
  one Spark job per model for them: every test is a node, and a node's fixed
  cost (planning, Iceberg table loading, job start) is most of an
  incremental build's time. Each failing row says which columns are null.
-#}
{% test not_null_columns(model, columns) %}
    select
        filter(
            array({% for column in columns %}if({{ column }} is null, '{{ column }}', null){% if not loop.last %}, {% endif %}{% endfor %}),
            c -> c is not null
        ) as null_columns
    from {{ model }}
    where {% for column in columns %}{{ column }} is null{% if not loop.last %} or {% endif %}{% endfor %}
{% endtest %}
