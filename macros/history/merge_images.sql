{#- Row image `newer` laid over row image `older` (both map<string,string>):
    columns `newer` carries win, the others keep `older`'s value. Linear in the
    images' size (map_join pairs the keys by hashing). -#}
{% macro merge_images(older, newer) -%}
    map_concat(
        {{ map_join(older, 'transform_values(' ~ newer ~ ', (image_column, newer_value) -> true)', 'boolean', keep='lookup_value is null') }},
        {{ newer }}
    )
{%- endmacro %}

{#- A stable hash of a table and a primary-key map (entries sorted by column). -#}
{% macro key_hash(table_id, primary_key) -%}
    sha2(concat_ws('|', {{ table_id }}, to_json(array_sort(map_entries({{ primary_key }})))), 256)
{%- endmacro %}


{#- The key_hash of the key a before image names: its values of the key's columns (the columns of
    `primary_key`, the row's own key), so an insert of a primary-key change gives the old key. -#}
{% macro previous_key_hash(table_id, before, primary_key) -%}
    {{ key_hash(
        table_id,
        'map_filter(' ~ before ~ ', (image_column, v) -> array_contains(map_keys(' ~ primary_key ~ '), image_column))'
    ) }}
{%- endmacro %}
