{#- Spark DDL schema of a CES CloudEvents envelope. Every attribute is read as
    text (numbers and booleans arrive in either form) and cast by the model. -#}
{% macro ces_envelope_schema() -%}
struct<specversion:string,type:string,source:string,id:string,logicalid:string,time:string,operation:string,segmentindex:string,finalsegment:string,splitindex:string,splittotalcnt:string,data:string>
{%- endmacro %}

{#- Spark DDL schema of the CES `data` attribute (a JSON string). The row
    images `eventrow.old` / `eventrow.current` are JSON strings again. -#}
{% macro ces_data_schema() -%}
struct<eventsource:struct<db:string,schema:string,tbl:string,cols:array<struct<name:string,type:string,index:int>>,pkkey:array<struct<columnname:string,value:string>>,transaction:struct<commitlsn:string,beginlsn:string,sequencenumber:string,committime:string>>,eventrow:struct<old:string,current:string>>
{%- endmacro %}
