{#-
  Limits on message contents. Each is a dbt var with a default in dbt_project.yml that
  no real producer reaches (docs/operations.md, "Limits"); a message over one lands in bronze as
  received and is quarantined with a reason that names the limit and the var that
  raises it. Every JSON parse of message contents is given the nesting limit, so a
  message nested deeper parses to nulls instead of costing more.
-#}

{% macro json_options() -%}
    {#- The options of every from_json over message contents: the nesting limit. -#}
    map('maxNestingDepth', '{{ var("cdc_max_json_depth") }}')
{%- endmacro %}


{% macro within_size(text) -%}
    {#- `text` when it is within the message size limit, else null (not parsed at all). -#}
    case when octet_length({{ text }}) <= {{ var('cdc_max_message_bytes') }} then {{ text }} end
{%- endmacro %}


{% macro over_size_reason(text) -%}
    {#- The reason for a message over the size limit, or null when it is within it. -#}
    case
        when octet_length({{ text }}) > {{ var('cdc_max_message_bytes') }}
            then concat(
                'The message is ', octet_length({{ text }}), ' bytes long, over the limit of ',
                {{ var('cdc_max_message_bytes') }}, ' bytes (dbt var cdc_max_message_bytes); it is not parsed.'
            )
    end
{%- endmacro %}


{% macro json_shape(text) -%}
    {#- What text `text` is: `object` (a JSON object Spark parses within the nesting limit),
        `too_deep` (one that fails to parse and nests deeper than that limit within its first
        million characters) or `not_object` (not JSON, another JSON value, or beyond the
        parser's own limits: a number of more than 1,000 digits, a string of more than
        20,000,000 characters). Linear in its length; never parses beyond the limit (a
        variant or a value re-written at a depth of thousands overflows the JVM's stack). -#}
    case
        when {{ text }} is null then null
        when from_json({{ text }}, 'map<string,string>', {{ json_options() }}) is not null then 'object'
        when {{ json_depth(text) }} > {{ var("cdc_max_json_depth") }} then 'too_deep'
        else 'not_object'
    end
{%- endmacro %}


{% macro json_depth(text, prefix_chars=1000000) -%}
    {#- The deepest nesting of arrays and objects in the first `prefix_chars` characters of
        `text`, brackets inside strings not counted: a scan of its brackets, quotes and escapes
        (one regular expression without repeated groups, then a fold), linear in its length. -#}
    aggregate(
        regexp_extract_all(left({{ text }}, {{ prefix_chars }}), '\\\\.|[\\[\\]{}"]', 0),
        named_struct('depth', 0, 'deepest', 0, 'in_string', false),
        (scan, token) -> case
            when scan.in_string then named_struct('depth', scan.depth, 'deepest', scan.deepest, 'in_string', token <> '"')
            when token = '"' then named_struct('depth', scan.depth, 'deepest', scan.deepest, 'in_string', true)
            when token in ('[', '{')
                then named_struct('depth', scan.depth + 1, 'deepest', greatest(scan.deepest, scan.depth + 1), 'in_string', false)
            when token in (']', '}') then named_struct('depth', scan.depth - 1, 'deepest', scan.deepest, 'in_string', false)
            else scan
        end,
        scan -> scan.deepest
    )
{%- endmacro %}


{% macro too_deep_reason(what) -%}
    {#- The reason for JSON nested deeper than the limit; `what` names it (SQL string literal). -#}
    concat(
        {{ what }}, ' is nested deeper than {{ var("cdc_max_json_depth") }} levels, ',
        'the limit set by the dbt var cdc_max_json_depth.'
    )
{%- endmacro %}


{% macro over_limit_reason(what, count, var_name) -%}
    {#- The reason for `count` (an expression) items of `what` (a SQL string literal, e.g.
        'columns in cols'), over the limit of dbt var `var_name`; null when within it. -#}
    case
        when {{ count }} > {{ var(var_name) }}
            then concat(
                'The message has ', {{ count }}, ' ', {{ what }}, ', over the limit of {{ var(var_name) }} ',
                '(dbt var {{ var_name }}).'
            )
    end
{%- endmacro %}


{% macro repeated_name(names) -%}
    {#- A name that array `names` holds twice (the first in sort order), null if none: linear
        after one sort. -#}
    element_at(transform(array(array_sort(filter({{ names }}, repeated_candidate -> repeated_candidate is not null))),
        sorted_names -> element_at(filter(
            sorted_names,
            (candidate_name, name_index) -> name_index > 0 and sorted_names[name_index - 1] = candidate_name
        ), 1)
    ), 1)
{%- endmacro %}


{% macro is_digits(text, most) -%}
    {#- Whether `text` is a whole number of 1 to `most` decimal digits (a position or count of
        the form producers write: no sign, no exponent). -#}
    coalesce({{ text }} rlike '^[0-9]{1,{{ most }}}$', false)
{%- endmacro %}


{% macro epoch_millis_timestamp(millis) -%}
    {#- timestamp_millis(`millis`) for years 0001–9999, null otherwise (timestamp_millis
        throws on overflow even with ANSI mode off). -#}
    case when {{ millis }} between -62135596800000 and 253402300799999 then timestamp_millis({{ millis }}) end
{%- endmacro %}


{% macro epoch_micros_timestamp(micros) -%}
    {#- timestamp_micros(`micros`) for years 0001–9999, null otherwise. -#}
    case
        when {{ micros }} between -62135596800000000 and 253402300799999999 then timestamp_micros({{ micros }})
    end
{%- endmacro %}


{% macro calendar_timestamp(ts) -%}
    {#- Timestamp `ts` when it falls in years 0001–9999 (what every client can hold), else null. -#}
    case
        when {{ ts }} >= timestamp'0001-01-01 00:00:00' and {{ ts }} < timestamp'10000-01-01 00:00:00' then {{ ts }}
    end
{%- endmacro %}


{% macro shown(text) -%}
    {#- A value from a message as a reason shows it: at most 100 characters, then `…`. -#}
    case when length({{ text }}) > 100 then concat(left({{ text }}, 100), '…') else {{ text }} end
{%- endmacro %}
