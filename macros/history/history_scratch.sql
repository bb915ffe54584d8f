{#-
  A CTE of gold.cdc_history computed once. In a run of the model (`dbt run` or `dbt build`; not
  a unit test, a compile or a render without execution), the query `<prefix>, <ctes> select *
  from <name>` is written to the scratch table `<model>__<name>` first, and the returned CTE
  reads it: `<name> as (select * from <model>__<name>)`. The model drops the table in a
  post-hook (drop_history_scratch). Otherwise the CTEs `ctes` themselves are returned, to be
  computed in the query. Spark computes a CTE again at each reference to it (it inlines
  deterministic CTEs), so a CTE that reads silver and is read several times reads silver
  several times.
-#}
{% macro history_scratch(name, prefix, ctes) -%}
    {%- if not execute or model is not defined or model.resource_type != 'model'
        or flags.WHICH not in ['run', 'build'] -%}
        {{ return(ctes) }}
    {%- endif -%}
    {%- set relation = history_scratch_relation(name) -%}
    {%- do run_query(drop_history_scratch(name)) -%}  {#- left over by a failed run -#}
    {%- do run_query(
        'create table ' ~ relation ~ ' using iceberg as\n' ~ prefix ~ ',\n' ~ ctes ~ '\nselect * from ' ~ name
    ) -%}
    {{ return(name ~ ' as (\n    select * from ' ~ relation ~ '\n)') }}
{%- endmacro %}


{#- The scratch table of history_scratch's CTE `name`: `<model>__<name>` beside the model. -#}
{% macro history_scratch_relation(name) -%}
    {{ return(this.incorporate(path={'identifier': this.identifier ~ '__' ~ name})) }}
{%- endmacro %}


{#- Post-hook SQL dropping the scratch table of history_scratch's CTE `name`. -#}
{% macro drop_history_scratch(name) -%}
    drop table if exists {{ history_scratch_relation(name) }} purge
{%- endmacro %}
