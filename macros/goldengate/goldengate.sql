{#- Spark DDL schema of an Oracle GoldenGate JSON formatter message (operation modelled):
    the operation's fields, and those of a JSON schema document the Kafka handler publishes
    to its schema topic (`$schema`, `title`, the row definition's properties as JSON text).
    Row images are maps of column name to the value's JSON text. -#}
{% macro goldengate_message_schema() -%}
struct<table:string,op_type:string,op_ts:string,current_ts:string,pos:string,primary_keys:array<string>,tokens:map<string,string>,before:map<string,string>,after:map<string,string>,`$schema`:string,title:string,definitions:struct<row:struct<properties:string>>>
{%- endmacro %}

{#- The part `from_end` places from the end (1: the last) of a GoldenGate `table` name
    split on `.` (`parts`, an array), or null when it has fewer parts. -#}
{% macro goldengate_name_part(parts, from_end) -%}
    case when size({{ parts }}) >= {{ from_end }} then nullif(element_at({{ parts }}, -{{ from_end }}), '') end
{%- endmacro %}

{#- Whether text `ts` is a GoldenGate time (`YYYY-MM-DD HH:MM:SS[.f…]`, or with `T` between
    date and time as `current_ts` has it), and then that time as a timestamp (UTC) within the
    years 1 to 9999; null otherwise. Never throws. -#}
{% macro goldengate_timestamp(ts) -%}
    case
        when {{ ts }} rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?$'
            then {{ calendar_timestamp('try_cast(replace(' ~ ts ~ ", 'T', ' ') as timestamp)") }}
    end
{%- endmacro %}
