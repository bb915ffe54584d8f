{#-
  Views: drop, then create. Behind SparkSessionCatalog, Iceberg 1.10 stores
  views as Iceberg views, and `create or replace view` over an existing one
  whose columns change leaves a view that cannot be queried
  (INCOMPATIBLE_VIEW_SCHEMA_CHANGE). The view is briefly absent between the
  two statements.
-#}
{% macro spark_embedded__create_view_as(relation, sql) -%}
    {%- if execute -%}
        {% do run_query('drop view if exists ' ~ relation) %}
    {%- endif -%}
    {{ spark__create_view_as(relation, sql) }}
{%- endmacro %}
