{#- Spark DDL schema of a DataWorks "sync whole database to Kafka" message.
    Row images (`dataColumn` objects) stay JSON text, decoded by type later. -#}
{% macro dataworks_message_schema() -%}
struct<schema:struct<dataColumn:array<struct<name:string,type:string>>,primaryKey:array<string>,source:struct<dbType:string,dbVersion:string,dbName:string,schemaName:string,tableName:string>>,payload:struct<before:struct<dataColumn:string>,after:struct<dataColumn:string>,sequenceId:string,scn:string,op:string,timestamp:struct<eventTime:bigint,systemTime:bigint,checkpointTime:bigint>,ddl:struct<text:string,ddlMeta:string>>,version:string>
{%- endmacro %}

{#- A DataWorks column value (JSON text) in the contract's text form for its
    `dataColumn` type: DATE (13-digit epoch milliseconds) as a UTC timestamp,
    BOOLEAN as true/false; LONG, DOUBLE, BYTES (base64) and STRING as sent. A DATE
    beyond the years 1 to 9999 is kept as sent. -#}
{% macro dataworks_value_text(value, column_type) -%}
    case
        when {{ value }} is null then null
        when upper({{ column_type }}) = 'DATE' and {{ value }} rlike '^-?[0-9]{1,18}$'
            then coalesce({{ timestamp_text(epoch_millis_timestamp('cast(' ~ value ~ ' as bigint)')) }}, {{ value }})
        when upper({{ column_type }}) = 'BOOLEAN' then lower({{ value }})
        else {{ value }}
    end
{%- endmacro %}
