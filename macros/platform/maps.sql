{#-
  Maps built from and joined with message contents, in time linear in their size and
  without ever throwing.

  Spark finds a map's key by scanning the map, so `lookup[k]` inside a lambda over the
  keys of another map costs the product of the two sizes: quadratic in a message's size
  for a row image and its column list. These macros pair the entries of two maps with
  `map_zip_with`, which hashes the keys. And `map_from_entries` throws on a null or
  repeated key (NULL_MAP_KEY, DUPLICATED_MAP_KEY), which one message can send; `map_of`
  does not.
-#}

{% macro map_of(items, key, value) -%}
    {#- A map from array `items`: one entry per item, key and value the SQL expressions
        `key` and `value` over the item `map_item`. Items with a null key are left out; of
        items with the same key the last wins. Sorting by key makes it O(n log n). -#}
    map_from_entries(element_at(transform(
        array(array_sort(
            filter(
                transform({{ items }}, map_item -> struct({{ key }} as key, {{ value }} as value)),
                map_entry -> map_entry.key is not null
            ),
            (left_entry, right_entry) -> case
                when left_entry.key < right_entry.key then -1 when left_entry.key > right_entry.key then 1 else 0
            end
        )),
        sorted_entries -> filter(
            sorted_entries,
            (map_entry, entry_index) -> entry_index = size(sorted_entries) - 1
            or sorted_entries[entry_index + 1].key <> map_entry.key
        )
    ), 1))
{%- endmacro %}


{% macro map_join(image, lookup, lookup_type, value='image_value', keep='true') -%}
    {#- Map `image` (string keys) with each value replaced by the SQL expression `value`,
        keeping only the entries where `keep` holds; in both, `image_value` is the entry's
        value and `lookup_value` the value of the same key in map `lookup` (null when
        absent; `lookup_type` is its value type). The entries' order is Spark's. -#}
    transform_values(
        map_filter(
            map_zip_with(
                transform_values({{ image }}, (map_key, image_value) -> struct(image_value)),
                coalesce({{ lookup }}, cast(map() as map<string, {{ lookup_type }}>)),
                (map_key, carried, lookup_value) -> case
                    when carried is not null
                        then element_at(transform(
                            array(carried.image_value),
                            image_value -> case when {{ keep }} then struct({{ value }} as joined_value) end
                        ), 1)
                end
            ),
            (map_key, joined) -> joined is not null
        ),
        (map_key, joined) -> joined.joined_value
    )
{%- endmacro %}


{% macro map_keep_keys(image, keys) -%}
    {#- The entries of map `image` whose key is in array `keys`. -#}
    {{ map_join(
        image,
        'map_from_arrays(array_distinct(' ~ keys ~ '), array_repeat(true, size(array_distinct(' ~ keys ~ '))))',
        'boolean',
        keep='lookup_value'
    ) }}
{%- endmacro %}


{% macro changed_keys(before, after) -%}
    {#- The keys of row image `after` whose value differs from row image `before`'s (a
        key `before` lacks counts as null there), sorted. -#}
    array_sort(map_keys(map_filter(
        map_zip_with(
            transform_values({{ after }}, (map_key, after_value) -> struct(after_value)),
            coalesce({{ before }}, cast(map() as map<string, string>)),
            (map_key, carried, before_value) -> carried is not null and not (before_value <=> carried.after_value)
        ),
        (map_key, is_changed) -> is_changed
    )))
{%- endmacro %}
