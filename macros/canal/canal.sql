{#- Spark DDL schema of a Canal flat message (canal-server's `flatMessage` JSON), for
    from_json. Row values are text (Canal sends every value as a JSON string or null);
    `sqlType` and Canal's batch `id` are not read. -#}
{% macro canal_message_schema() -%}
struct<data:array<map<string,string>>,old:array<map<string,string>>,database:string,table:string,pkNames:array<string>,mysqlType:map<string,string>,isDdl:boolean,sql:string,type:string,es:bigint,ts:bigint,gtid:string>
{%- endmacro %}


{#- Whether MySQL type text `mysql_type` (`blob`, `varbinary(16)`…) holds bytes. -#}
{% macro canal_is_binary(mysql_type) -%}
    coalesce(regexp_extract(lower(trim({{ mysql_type }})), '^[a-z]+', 0) in (
        'binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob'
    ), false)
{%- endmacro %}


{#- A Canal column value (text) in the contract's text form for its MySQL type: bytes
    (Canal writes them one character per byte, ISO-8859-1) as base64; every other
    value as sent (integers and decimals in plain notation, DATE `yyyy-MM-dd`,
    DATETIME / TIMESTAMP `yyyy-MM-dd HH:mm:ss[.ffffff]`). A binary value with a
    character beyond one byte is kept as sent: it cannot be bytes. -#}
{% macro canal_value_text(value, mysql_type) -%}
    case
        when {{ value }} is null then null
        when {{ canal_is_binary(mysql_type) }} and {{ value }} rlike '^[\\x00-\\xFF]*$'
            then base64(encode({{ value }}, 'ISO-8859-1'))
        else {{ value }}
    end
{%- endmacro %}


{#- The Spark SQL type for a MySQL type as Canal spells it in `mysqlType` (`int(11)`,
    `bigint(20) unsigned`, `decimal(10,2)`, `datetime(3)`, `varchar(64)`…), for typed
    gold tables. Unknown types map to string. -#}
{% macro canal_spark_type(mysql_type) -%}
    {%- set t = "lower(trim(" ~ mysql_type ~ "))" -%}
    {%- set base = "regexp_extract(" ~ t ~ ", '^[a-z]+', 0)" -%}
    {%- set unsigned = t ~ " like '%unsigned%'" -%}
    case
        when {{ base }} in ('tinyint', 'smallint', 'mediumint', 'year') then 'int'
        when {{ base }} in ('int', 'integer') then case when {{ unsigned }} then 'bigint' else 'int' end
        when {{ base }} = 'bigint' then case when {{ unsigned }} then 'decimal(20,0)' else 'bigint' end
        when {{ base }} in ('decimal', 'numeric')
            then case
                when {{ t }} rlike '^[a-z]+\\s*\\(\\s*[0-9]{1,2}\\s*,\\s*[0-9]{1,2}\\s*\\)'
                    and try_cast(regexp_extract({{ t }}, '\\(\\s*([0-9]+)', 1) as int) between 1 and 38
                    and try_cast(regexp_extract({{ t }}, ',\\s*([0-9]+)', 1) as int)
                    <= try_cast(regexp_extract({{ t }}, '\\(\\s*([0-9]+)', 1) as int)
                    then concat(
                            'decimal(', regexp_extract({{ t }}, '\\(\\s*([0-9]+)', 1), ',',
                            regexp_extract({{ t }}, ',\\s*([0-9]+)', 1), ')'
                        )
                when {{ t }} rlike '^[a-z]+\\s*\\(\\s*[0-9]{1,2}\\s*\\)'
                    and try_cast(regexp_extract({{ t }}, '\\(\\s*([0-9]+)', 1) as int) between 1 and 38
                    then concat('decimal(', regexp_extract({{ t }}, '\\(\\s*([0-9]+)', 1), ',0)')
                when {{ t }} rlike '^[a-z]+\\s*\\(' then 'string'
                else 'decimal(10,0)'
            end
        when {{ base }} in ('float', 'double', 'real') then 'double'
        when {{ base }} = 'date' then 'date'
        when {{ base }} in ('datetime', 'timestamp') then 'timestamp'
        when {{ canal_is_binary(mysql_type) }} then 'binary'
        else 'string'
    end
{%- endmacro %}


{#- A row's image before an UPDATE: the row after it (`data_image`) with the previous
    values of the columns it changed (`old_image`, Canal's `old` entry at the same index)
    laid over it. A column only `old_image` names is kept too. Linear: the maps are
    paired with map_zip_with, which hashes the keys. -#}
{% macro canal_before_image(data_image, old_image) -%}
    transform_values(
        map_filter(
            map_zip_with(
                transform_values({{ data_image }}, (map_key, data_value) -> struct(data_value as value)),
                transform_values(
                    coalesce({{ old_image }}, cast(map() as map<string, string>)),
                    (map_key, old_value) -> struct(old_value as value)
                ),
                (map_key, data_entry, old_entry) -> coalesce(old_entry, data_entry)
            ),
            (map_key, entry) -> entry is not null
        ),
        (map_key, entry) -> entry.value
    )
{%- endmacro %}
