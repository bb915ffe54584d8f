{#-
  A CES column value (always sent as text) in the contract's text form for
  its SQL Server type: datetime types as `yyyy-MM-dd HH:mm:ss[.ffffff]` (UTC;
  datetime2's 7th fractional digit is dropped, Spark keeps 6), date as
  `yyyy-MM-dd`, bit as `true` / `false`, binary as one-line base64 (Spark's
  base64() breaks long output every 76 characters); every other type
  (integers, decimals in plain notation, strings) as sent.
  `value` and `sql_type` are SQL expressions; `sql_type` as CES spells it,
  e.g. `varchar(100)`, `datetime2(7)`.
-#}
{% macro ces_value_text(value, sql_type) -%}
    {%- set base_type = "regexp_extract(lower(" ~ sql_type ~ "), '^[a-z0-9_]+', 0)" -%}
    case
        when {{ value }} is null then null
        when {{ base_type }} in ('datetime', 'datetime2', 'smalldatetime', 'datetimeoffset')
            then {{ timestamp_text('to_timestamp(' ~ value ~ ')') }}
        when {{ base_type }} = 'date' then date_format(to_date({{ value }}), 'yyyy-MM-dd')
        when {{ base_type }} = 'bit'
            then case lower({{ value }}) when '1' then 'true' when 'true' then 'true'
                when '0' then 'false' when 'false' then 'false' end
        when {{ base_type }} in ('binary', 'varbinary', 'image', 'timestamp', 'rowversion')
            then regexp_replace(base64(unhex(regexp_replace({{ value }}, '^0[xX]', ''))), '[\\r\\n]', '')
        else {{ value }}
    end
{%- endmacro %}
