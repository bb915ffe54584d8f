{#-
  Create the bronze landing tables that do not exist yet, empty: bronze.raw_<name> for
  each producer of the registry (dbt_project.yml, `cdc_producers`) and bronze.raw_unknown,
  with the columns and data types declared on raw_unknown in
  models/bronze/_bronze__sources.yml (python_ingest/bronze.py creates them from the same
  declaration). Runs on run start, so that models reading a producer nobody has landed yet
  still build. Existing tables are never altered.
-#}
{% macro create_bronze_tables() %}
    {%- if execute -%}
        {%- set columns_source = bronze_source_node('unknown') -%}
        {% do run_query('create database if not exists ' ~ columns_source.schema) %}
        {%- for source_format in bronze_formats() -%}
            {% do run_query(bronze_table_ddl(source_format)) %}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{#- The declared `bronze` source table of a format (raw_<format>), or a clear error. -#}
{% macro bronze_source_node(source_format) %}
    {%- set unique_id = 'source.' ~ project_name ~ '.bronze.raw_' ~ source_format -%}
    {%- if unique_id not in graph.sources -%}
        {{ exceptions.raise_compiler_error(
            'bronze.raw_' ~ source_format ~ ' is not declared: a producer in cdc_producers declares its bronze '
            ~ 'table in models/silver/staging/' ~ source_format ~ '/_' ~ source_format ~ '__sources.yml '
            ~ '(docs/adding-a-producer.md).'
        ) }}
    {%- endif -%}
    {{ return(graph.sources[unique_id]) }}
{% endmacro %}


{#- The `create table if not exists` statement of one bronze table (by format: ces, …, unknown). -#}
{% macro bronze_table_ddl(source_format) -%}
    {%- set table = bronze_source_node(source_format) -%}
    {%- set columns = bronze_source_node('unknown').columns.values() | list -%}
    {%- if not columns -%}
        {{ exceptions.raise_compiler_error('Source bronze.raw_unknown declares no columns to create the bronze tables from.') }}
    {%- endif -%}
    create table if not exists {{ table.schema }}.{{ table.identifier }} (
    {%- for column in columns %}
        {{ column.name }} {{ column.data_type }}{{ "," if not loop.last }}
    {%- endfor %}
    )
    using iceberg
    comment '{{ table.description | replace("'", "\\'") | replace("\n", " ") }}'
    tblproperties ('format-version' = '2')
{%- endmacro %}
