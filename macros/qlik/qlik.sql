{#- Spark DDL schema of the body of a Qlik Replicate message: the `message`
    of an `atMSG` envelope, or the whole message without one. It covers both
    kinds: metadata (schemaId, lineage, tableStructure) and data (schema,
    table, data, beforeData, headers). Row images stay maps of text. -#}
{% macro qlik_body_schema() -%}
struct<schemaId:string,lineage:struct<server:string,task:string,schema:string,table:string,tableVersion:int,timestamp:string>,tableStructure:struct<tableColumns:map<string,struct<ordinal:int,type:string,length:int,precision:int,scale:int,primaryKeyPosition:int>>>,dataSchema:string,schema:string,table:string,data:map<string,string>,beforeData:map<string,string>,headers:struct<operation:string,changeSequence:string,timestamp:string,streamPosition:string,transactionId:string,changeMask:string,columnMask:string,externalSchemaId:string,transactionEventCounter:bigint,transactionLastEvent:boolean>>
{%- endmacro %}


{#- Spark DDL schema of a whole Qlik message, parsed once: the `atMSG` envelope
    (magic, type, messageSchemaId and the body as `message`) and, for a message
    without the envelope, the body's fields at the top level. -#}
{% macro qlik_message_schema() -%}
{{ qlik_body_schema()[:-1] }},magic:string,type:string,messageSchemaId:string,message:{{ qlik_body_schema() }}>
{%- endmacro %}


{#- The Spark type of a Qlik Replicate column type (metadata `type`,
    `precision`, `scale`): integers by width (unsigned ones one size up),
    NUMERIC as decimal(p,s) up to Spark's 38 digits (text beyond), REAL4 /
    REAL8 as float / double, DATE, DATETIME as timestamp, BYTES and BLOB as
    binary; TIME, strings and CLOBs as string. -#}
{% macro qlik_spark_type(column_type, precision, scale) -%}
    case upper({{ column_type }})
        when 'INT1' then 'tinyint'
        when 'INT2' then 'smallint'
        when 'INT4' then 'int'
        when 'INT8' then 'bigint'
        when 'UINT1' then 'smallint'
        when 'UINT2' then 'int'
        when 'UINT4' then 'bigint'
        when 'UINT8' then 'decimal(20,0)'
        when 'NUMERIC'
            then case
                when coalesce({{ precision }}, 0) between 1 and 38
                    then concat('decimal(', {{ precision }}, ',', least(coalesce({{ scale }}, 0), {{ precision }}), ')')
                else 'string'
            end
        when 'REAL4' then 'float'
        when 'REAL8' then 'double'
        when 'BOOLEAN' then 'boolean'
        when 'DATE' then 'date'
        when 'DATETIME' then 'timestamp'
        when 'BYTES' then 'binary'
        when 'BLOB' then 'binary'
        else 'string'
    end
{%- endmacro %}


{#- A Qlik column value (sent as text) in the contract's text form for its
    Qlik type: DATETIME as `yyyy-MM-dd HH:mm:ss[.ffffff]`, DATE as
    `yyyy-MM-dd`, BOOLEAN as true / false, BYTES and BLOB (hex) as one-line
    base64, NUMERIC in plain notation padded to the column's scale (`5000` at
    scale 2 is `5000.00`); other types as sent. A value that does not parse
    as its type is kept as sent. -#}
{% macro qlik_value_text(value, column_type, scale) -%}
    case
        when {{ value }} is null then null
        when upper({{ column_type }}) = 'DATETIME'
            then coalesce({{ timestamp_text('to_timestamp(' ~ value ~ ')') }}, {{ value }})
        when upper({{ column_type }}) = 'DATE' then coalesce(date_format(to_date({{ value }}), 'yyyy-MM-dd'), {{ value }})
        when upper({{ column_type }}) = 'BOOLEAN'
            then case lower(trim({{ value }})) when '1' then 'true' when 'true' then 'true'
                when '0' then 'false' when 'false' then 'false' else {{ value }} end
        when upper({{ column_type }}) in ('BYTES', 'BLOB') and {{ value }} rlike '^([0-9A-Fa-f]{2})*$'
            then regexp_replace(base64(unhex({{ value }})), '[\\r\\n]', '')
        when
            upper({{ column_type }}) = 'NUMERIC' and coalesce({{ scale }}, 0) > 0
            and {{ value }} rlike '^[+-]?[0-9]+(\\.[0-9]*)?$'
            and length(coalesce(regexp_extract({{ value }}, '\\.([0-9]*)$', 1), '')) < {{ scale }}
            then concat(
                    regexp_extract({{ value }}, '^([+-]?[0-9]+)', 1),
                    '.',
                    rpad(regexp_extract({{ value }}, '\\.([0-9]*)$', 1), {{ scale }}, '0')
                )
        else {{ value }}
    end
{%- endmacro %}


{#- The columns of a data message's row images (`data`, `beforeData`) that a
    table version does not have, in name order: a row found by its table's
    name that has any waits for the version that has them all. -#}
{% macro qlik_unknown_columns(data, before_data, column_names) -%}
    array_sort(array_except(
        array_union(
            map_keys(coalesce({{ data }}, cast(map() as map<string, string>))),
            map_keys(coalesce({{ before_data }}, cast(map() as map<string, string>)))
        ),
        map_values(coalesce({{ column_names }}, cast(map() as map<int, string>)))
    ))
{%- endmacro %}
