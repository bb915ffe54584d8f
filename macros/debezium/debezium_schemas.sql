{#- Spark DDL schema of a Debezium value payload (the `payload` of a
    schema + payload envelope, or the whole schemaless message). Row images
    and the source block's numbers are read as text: the images are decoded
    against their field schemas later, and positions are compared as text.
    Besides change events: a transaction marker (`status`, `id`), a schema
    change event (`ddl`, `databaseName`, `schemaName`, `tableChanges`) and a
    schema history record (`source.server`, `position`, `ddl`). -#}
{% macro debezium_payload_schema() -%}
struct<op:string,ts_ms:bigint,ts_us:bigint,ts_ns:bigint,before:string,after:string,source:struct<version:string,connector:string,name:string,server:string,ts_ms:bigint,ts_us:bigint,ts_ns:bigint,snapshot:string,db:string,schema:string,table:string,change_lsn:string,commit_lsn:string,event_serial_no:string,lsn:string,sequence:string,txId:string,file:string,pos:string,row:string,server_id:string,gtid:string>,transaction:struct<id:string,total_order:string,data_collection_order:string>,message:struct<prefix:string,content:string>,status:string,id:string,ddl:string,databaseName:string,schemaName:string,tableChanges:string,position:string>
{%- endmacro %}

{#- Spark DDL schema of a JsonConverter envelope (`schema` + `payload`),
    both kept as JSON text. -#}
{% macro json_converter_envelope_schema() -%}
struct<schema:string,payload:string>
{%- endmacro %}
