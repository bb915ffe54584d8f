{#-
  Qlik Replicate change masks (`changeMask`, `columnMask`): the whole hex
  string is one big-endian number, bit i (least significant = 0) standing
  for the column with ordinal i + 1. Works for any width (tables with more
  than 64 columns), either case, with or without leading zero padding.
-#}

{% macro change_mask_ordinals(mask) -%}
    {#- The set ordinals of hex mask expression `mask`, ascending; an empty array for an empty mask, null for null. -#}
    case
        when {{ mask }} is null then null
        when trim({{ mask }}) = '' then cast(array() as array<int>)
        else array_sort(flatten(transform(
            sequence(0, length(trim({{ mask }})) - 1),
            mask_digit -> filter(
                transform(
                    sequence(0, 3),
                    mask_bit -> case
                        when shiftright(
                            cast(conv(substr(trim({{ mask }}), length(trim({{ mask }})) - mask_digit, 1), 16, 10) as int),
                            mask_bit
                        ) % 2 = 1
                            then 4 * mask_digit + mask_bit + 1
                    end
                ),
                mask_ordinal -> mask_ordinal is not null
            )
        )))
    end
{%- endmacro %}


{% macro change_mask_is_valid(mask) -%}
    {#- Whether `mask` is a hex string (what change_mask_ordinals can decode). -#}
    coalesce({{ mask }} rlike '^\\s*[0-9A-Fa-f]*\\s*$', false)
{%- endmacro %}


{% macro change_mask_columns(mask, column_names) -%}
    {#-
      The column names of the set bits of `mask`, in ordinal order:
      `column_names` is an expression of type map<int, string> (ordinal →
      name, from the table's metadata). Ordinals the metadata does not know
      are left out.
    -#}
    filter(
        transform({{ change_mask_ordinals(mask) }}, mask_ordinal -> element_at({{ column_names }}, mask_ordinal)),
        mask_column -> mask_column is not null
    )
{%- endmacro %}
