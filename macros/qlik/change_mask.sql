{#-
  Qlik Replicate change masks (`changeMask`, `columnMask`): the whole hex
  string is one big-endian number, bit i (least significant = 0) standing
  for the column with ordinal i + 1. Works for any width (tables with more
  than 64 columns), either case, with or without leading zero padding, in
  time linear in the mask's length: the digits are split once and each is
  read by its position (`substr` at a position would scan the string up to
  it, quadratic over a whole mask).
-#}

{% macro change_mask_ordinals(mask) -%}
    {#- The set ordinals of hex mask expression `mask`, ascending; an empty array for an empty mask, null for null. -#}
    element_at(transform(array(trim({{ mask }})), mask_text -> case
        when mask_text is null then null
        when mask_text = '' then cast(array() as array<int>)
        else flatten(transform(
            reverse(split(mask_text, '')),
            (mask_digit, digit_position) -> transform(
                filter(
                    array(0, 1, 2, 3),
                    mask_bit -> shiftright(cast(conv(mask_digit, 16, 10) as int), mask_bit) % 2 = 1
                ),
                mask_bit -> 4 * digit_position + mask_bit + 1
            )
        ))
    end), 1)
{%- endmacro %}


{% macro change_mask_is_valid(mask) -%}
    {#- Whether `mask` is a hex string (what change_mask_ordinals can decode). -#}
    coalesce({{ mask }} rlike '^\\s*[0-9A-Fa-f]*\\s*$', false)
{%- endmacro %}


{% macro mask_columns(ordinals, column_names) -%}
    {#-
      The column names of the ordinals in array `ordinals` (from change_mask_ordinals),
      in ordinal order: `column_names` is an expression of type map<int, string> (ordinal →
      name, from the table's metadata). Ordinals the metadata does not know are left out;
      fewer names than ordinals means the mask sets bits the table has no column for.
    -#}
    element_at(transform(array({{ ordinals }}), set_ordinals -> transform(
        array_sort(map_entries(map_filter(
            map_zip_with(
                coalesce({{ column_names }}, cast(map() as map<int, string>)),
                map_from_arrays(set_ordinals, array_repeat(true, size(set_ordinals))),
                (mask_ordinal, mask_column, is_set) -> case when is_set then mask_column end
            ),
            (mask_ordinal, mask_column) -> mask_column is not null
        ))),
        named_column -> named_column.value
    )), 1)
{%- endmacro %}


{% macro change_mask_columns(mask, column_names) -%}
    {#- The column names of the set bits of `mask`, in ordinal order (see mask_columns). -#}
    {{ mask_columns(change_mask_ordinals(mask), column_names) }}
{%- endmacro %}
