{#-
  How many fold passes gold.cdc_history takes this run (at most `most`): the links of the longest
  chain of primary-key changes among the keys the run folds, plus one. A change that continues
  another key (a row of the CTE `marked_changes`, in the SQL `changes_ctes` that defines it, with
  `continues_key`: the insert of a primary-key change) needs a second pass, which carries the
  old key's image; a third only when that old key itself continues a key in this run (1 → 2 → 1),
  since an old key that continues none has its whole history after the first pass. Decided by
  one query before the model runs (history_passes_sql). A render without execution (parse, lint)
  takes every pass, and so does a dbt unit test unless it sets the count (`overrides: macros:
  history_passes`, models/gold/_gold__unit_tests.yml): each pass refers to the one before twice,
  so every pass doubles the query Spark plans.
-#}
{% macro history_passes(changes_ctes, most=3) -%}
    {%- if not execute or model is not defined or model.resource_type != 'model' -%}
        {{ return(most) }}
    {%- endif -%}
    {%- set passes = query_scalar(history_passes_sql(changes_ctes, most)) | int -%}
    {%- do log(model.name ~ ': ' ~ passes ~ ' fold pass(es) this run (history_passes)') -%}
    {{ return(passes) }}
{%- endmacro %}


{#- The query of history_passes: one row, the passes the changes of `marked_changes` need (1 to
    `most`). One scan of the continuing changes: a chain when a key that a change continues
    continues another key itself. -#}
{% macro history_passes_sql(changes_ctes, most=3) -%}
{{ changes_ctes }}
select
    case
        when count(*) = 0 then 1
        when size(array_intersect(collect_set(previous_key_hash), collect_set(key_hash))) = 0
            then least(2, {{ most }})
        else {{ most }}
    end as passes
from marked_changes
where continues_key
{%- endmacro %}
