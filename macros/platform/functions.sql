{#-
  The lakehouse's own SQL functions: JVM classes compiled at set-up into a
  jar that every session of the lakehouse loads (adapters/dbt-spark-embedded,
  functions.py; sources in dbt/include/spark_embedded/functions/). A session
  registers one by name before a model uses it: every run registers them all at
  its start (create_cdc_functions, on-run-start in dbt_project.yml), before the
  dbt unit tests that run before their model, and the model again in its
  pre-hook, for a target whose connections are sessions of their own.
-#}

{% macro cdc_function_classes() -%}
    {#- Each function's name and its Java class. -#}
    {{ return({
        'cdc_is_json_object': 'cdc.lakehouse.functions.IsJsonObject',
        'cdc_json_numbers_as_text': 'cdc.lakehouse.functions.JsonNumbersAsText',
    }) }}
{%- endmacro %}


{% macro create_cdc_function(name) -%}
    {#-
      SQL registering the project's function `name` in the current session
      (one statement: a hook runs one). `cdc_is_json_object(text)`: whether
      text is exactly one strict RFC 8259 JSON value and that value is an
      object (null for null; linear in the text, building nothing).
      `cdc_json_numbers_as_text(text)`: the JSON with every number written as
      a string of the digits it was sent with, so that from_json keeps them
      exactly; text strict JSON rejects unchanged (linear in the text).
    -#}
    {%- set classes = cdc_function_classes() -%}
    {%- if name not in classes -%}
        {{ exceptions.raise_compiler_error(
            "create_cdc_function: no lakehouse function named '" ~ name ~ "' (known: " ~ classes.keys() | sort | join(', ') ~ ")"
        ) }}
    {%- endif -%}
    create or replace temporary function {{ name }} as '{{ classes[name] }}'
{%- endmacro %}


{% macro create_cdc_functions() -%}
    {#- Register every function of cdc_function_classes in the current session (an on-run-start
        hook: one statement per function). -#}
    {%- if execute -%}
        {%- for name in cdc_function_classes() | sort -%}
            {%- do run_query(create_cdc_function(name)) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
