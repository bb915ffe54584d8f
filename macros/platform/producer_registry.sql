{#-
  The producer registry (dbt_project.yml, `vars: cdc_producers`; python_ingest reads the
  same list): one line per producer, from which the bronze tables, staging's routing, the
  silver unions and the accounting test follow. By convention a producer `p` has
  bronze.raw_p (declared in models/silver/staging/p/_p__sources.yml), stg_p__messages,
  int_p__changes and int_p__message_outcomes; a silver model that has a step of its own per
  producer (control events, schema changes, column facts) calls the macro `p_<step>` of the
  producers that define one (macros/p/). docs/adding-a-producer.md has the whole recipe.
-#}

{#- The registry's entries, in their declared order. -#}
{% macro cdc_producers() %}
    {%- set declared = var('cdc_producers', []) -%}
    {#- sqlfluff's dbt builtins answer every var() with a string: lint against one producer. -#}
    {%- if declared is string -%}
        {%- set declared = [{'name': 'producer'}] -%}
    {%- endif -%}
    {{ return(declared) }}
{% endmacro %}


{#- The producers' names (their `source_format` values). -#}
{% macro cdc_producer_names() %}
    {{ return(cdc_producers() | map(attribute='name') | list) }}
{% endmacro %}


{#- Every bronze table's format: the producers', then `unknown` (what auto-detection left). -#}
{% macro bronze_formats() %}
    {{ return(cdc_producer_names() + ['unknown']) }}
{% endmacro %}


{#- ref() of each producer's model named by `pattern` ('int_{}__changes'), in registry order. -#}
{% macro producer_refs(pattern) %}
    {%- set refs = [] -%}
    {%- for name in cdc_producer_names() -%}
        {%- do refs.append(ref(pattern.replace('{}', name))) -%}
    {%- endfor -%}
    {{ return(refs) }}
{% endmacro %}


{#-
  A producer's own step for a silver model: its macro `<name>_<step>` (e.g.
  `qlik_column_facts` in macros/qlik/), or none when it has none.
-#}
{% macro producer_step(name, step) %}
    {{ return(context.get(name ~ '_' ~ step) if context is defined else none) }}
{% endmacro %}


{#-
  A silver view made only of producer steps: the union of the `<name>_<step>` macros of
  the registry's producers that have one, in registry order. Fails compilation when no
  producer has the step.
-#}
{% macro union_producer_steps(step) %}
    {%- set branches = [] -%}
    {%- for name in cdc_producer_names() -%}
        {%- set own_step = producer_step(name, step) -%}
        {%- if own_step is not none -%}
            {%- do branches.append(own_step) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not branches and execute -%}
        {{ exceptions.raise_compiler_error('No producer in cdc_producers has a `<producer>_' ~ step ~ '` macro.') }}
    {%- endif -%}
    {%- for branch in branches %}
        {{ branch() }}
        {%- if not loop.last %}
        union all
        {%- endif %}
    {%- else %}
    {#- Only sqlfluff's lint, which has no dbt context, finds no branch. #}
    select null as no_producer_branch
    {%- endfor %}
{% endmacro %}
