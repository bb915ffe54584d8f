{#-
  The Spark SQL type for a SQL Server type as CES spells it (`int`,
  `decimal(10,2)`, `nvarchar(max)`, `datetime2(7)`…), for typed gold tables.
  `sql_type` is a SQL expression. Unknown types map to string.
-#}
{% macro sqlserver_spark_type(sql_type) -%}
    {%- set t = "lower(trim(" ~ sql_type ~ "))" -%}
    {%- set base = "regexp_extract(" ~ t ~ ", '^[a-z0-9_]+', 0)" -%}
    case
        when {{ base }} in ('int', 'integer') then 'int'
        when {{ base }} = 'bigint' then 'bigint'
        when {{ base }} in ('smallint', 'tinyint') then 'smallint'
        when {{ base }} = 'bit' then 'boolean'
        when {{ base }} in ('decimal', 'numeric')
            then case
                when {{ t }} rlike '^[a-z]+\\s*\\(\\s*[0-9]+\\s*,\\s*[0-9]+\\s*\\)$'
                    then concat('decimal(', regexp_replace(regexp_extract({{ t }}, '\\((.*)\\)', 1), '\\s', ''), ')')
                when {{ t }} rlike '^[a-z]+\\s*\\(\\s*[0-9]+\\s*\\)$'
                    then concat('decimal(', trim(regexp_extract({{ t }}, '\\((.*)\\)', 1)), ',0)')
                else 'decimal(18,0)'
            end
        when {{ base }} = 'money' then 'decimal(19,4)'
        when {{ base }} = 'smallmoney' then 'decimal(10,4)'
        when {{ base }} = 'float' then 'double'
        when {{ base }} = 'real' then 'float'
        when {{ base }} = 'date' then 'date'
        when {{ base }} in ('datetime', 'datetime2', 'smalldatetime', 'datetimeoffset') then 'timestamp'
        when {{ base }} in ('binary', 'varbinary', 'image', 'timestamp', 'rowversion') then 'binary'
        else 'string'
    end
{%- endmacro %}
