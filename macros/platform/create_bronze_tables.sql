{#-
  Create the bronze landing tables that do not exist yet, empty, from the
  columns and data types declared for the `bronze` source in
  models/bronze/_bronze__sources.yml (python_ingest creates them from the same
  declaration). Runs on run start, so that models reading a producer nobody
  has landed yet still build. Existing tables are never altered.
-#}
{% macro create_bronze_tables() %}
    {%- if execute -%}
        {%- set sources = graph.sources.values() | selectattr('source_name', 'equalto', 'bronze') | list -%}
        {%- if sources -%}
            {% do run_query('create database if not exists ' ~ sources[0].schema) %}
        {%- endif -%}
        {%- for source_node in sources -%}
            {% do run_query(bronze_table_ddl(source_node)) %}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{#- The `create table if not exists` statement of one bronze source table. -#}
{% macro bronze_table_ddl(source_node) -%}
    {%- set columns = source_node.columns.values() | list -%}
    {%- if not columns -%}
        {{ exceptions.raise_compiler_error('Source ' ~ source_node.unique_id ~ ' declares no columns to create it from.') }}
    {%- endif -%}
    create table if not exists {{ source_node.schema }}.{{ source_node.identifier }} (
    {%- for column in columns %}
        {{ column.name }} {{ column.data_type }}{{ "," if not loop.last }}
    {%- endfor %}
    )
    using iceberg
    comment '{{ source_node.description | replace("'", "\\'") | replace("\n", " ") }}'
    tblproperties ('format-version' = '2')
{%- endmacro %}
