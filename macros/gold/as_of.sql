{#-
  "As of": the rows of a history that were live at a time (docs/contract.md, "Deletes, current
  and live"), for use inside models.
-#}

{#- A subquery of the versions of `history` live at `at`: those whose live period
    [valid_from, live_until] holds it, which no delete has (live_until is null on one).
    `history`: gold.cdc_history or a typed history (a relation or its name); `at`: a SQL
    expression of a timestamp, e.g. "timestamp'2025-07-01 12:00:00'". -#}
{% macro cdc_as_of(history, at) -%}
    (select * from {{ history }} where {{ at }} between valid_from and live_until)
{%- endmacro %}
