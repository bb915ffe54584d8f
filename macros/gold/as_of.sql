{#-
  "As of": the rows of a history that were live at a time (docs/contract.md, "Deletes, current
  and live"), for use inside models.
-#}

{#- A subquery of the versions of `history` live at `at`: started at or before it, not ended by
    it, and not a delete. `history`: gold.cdc_history or a typed history (a relation or its
    name); `at`: a SQL expression of a timestamp, e.g. "timestamp'2025-07-01 12:00:00'". -#}
{% macro cdc_as_of(history, at) -%}
    (
        select * from {{ history }}
        where valid_from <= {{ at }} and (valid_to > {{ at }} or valid_to is null) and not is_deleted
    )
{%- endmacro %}
