{#-
  Generic data test: the combination of `combination_of_columns` is unique in
  the model (a model's grain). Written here because dbt packages (dbt-utils)
  cannot be fetched in this project's environment.
-#}
{% test unique_combination_of_columns(model, combination_of_columns) %}
    {%- set columns_csv = combination_of_columns | join(', ') -%}
    with grouped as (
        select
            {{ columns_csv }},
            count(*) as n_records
        from {{ model }}
        group by {{ columns_csv }}
    )

    select *
    from grouped
    where n_records > 1
{% endtest %}
