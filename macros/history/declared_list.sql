{% macro declared_list(column) -%}
    {#- A `;`-separated list cell of seeds/cdc_tables.csv as an array of trimmed,
        non-empty names, each once; an empty or null cell gives an empty array. -#}
    array_distinct(filter(transform(split(coalesce({{ column }}, ''), ';'), c -> trim(c)), c -> c <> ''))
{%- endmacro %}
