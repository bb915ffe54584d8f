{#- A timestamp expression as contract text `yyyy-MM-dd HH:mm:ss[.ffffff]`
    (session time zone UTC; trailing fractional zeros dropped). -#}
{% macro timestamp_text(timestamp_expression) -%}
    regexp_replace(date_format({{ timestamp_expression }}, 'yyyy-MM-dd HH:mm:ss.SSSSSS'), '\\.?0+$', '')
{%- endmacro %}
