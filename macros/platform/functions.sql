{#-
  The lakehouse's own SQL functions: JVM classes compiled at set-up into a
  jar that every session of the lakehouse loads (adapters/dbt-spark-embedded,
  functions.py; sources in dbt/include/spark_embedded/functions/). A session
  registers them by name before a model uses one (the model's pre-hook).
-#}

{% macro create_cdc_functions() -%}
    {#-
      SQL registering the project's functions in the current session:
      `cdc_is_json_object(text)`, whether text is exactly one strict RFC 8259
      JSON value and that value is an object (null for null; linear in the
      text, building nothing).
    -#}
    create or replace temporary function cdc_is_json_object as 'cdc.lakehouse.functions.IsJsonObject'
{%- endmacro %}
