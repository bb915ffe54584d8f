{#- Table properties of Iceberg tables and views (the fingerprints, the read positions). -#}

{% macro iceberg_table_property(relation, name) -%}
    {#- The value of table property `name` of `relation`, or none if it has none. A session
        target reads a table's properties through Iceberg's API (adapter iceberg_table_facts), with
        no query; a view, or another target, through `show tblproperties`. -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if in_session_target() and not relation.is_view -%}
        {{ return(adapter.iceberg_table_facts(relation | string).properties.get(name)) }}
    {%- endif -%}
    {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
        {%- if row[0] == name -%}
            {{ return(row[1]) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{%- endmacro %}
