{#-
  Spark databases are named exactly bronze, silver and gold: a model's custom
  schema (+schema in dbt_project.yml) is used as it is, not prefixed with the
  target schema as dbt does by default.
-#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
