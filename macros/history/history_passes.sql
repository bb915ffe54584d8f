{#-
  How many fold passes gold.cdc_history takes this run: `most` when a change of the keys the
  run folds continues another key (a row of the CTE `marked_changes`, in the SQL `changes_ctes`
  that defines it, with `continues_key`: the insert of a primary-key change), else 1, the one
  fold that is then the whole history. Decided by one query before the model runs. A render
  without execution (parse, lint) takes every pass, and so does a dbt unit test unless it sets
  the count (`overrides: macros: history_passes`, models/gold/_gold__unit_tests.yml): each pass
  refers to the one before twice, so every pass doubles the query Spark plans.
-#}
{% macro history_passes(changes_ctes, most=3) -%}
    {%- if not execute or model is not defined or model.resource_type != 'model' -%}
        {{ return(most) }}
    {%- endif -%}
    {%- set continued = run_query(changes_ctes ~ '\nselect 1 from marked_changes where continues_key limit 1') -%}
    {{ return(most if continued.rows | length > 0 else 1) }}
{%- endmacro %}
