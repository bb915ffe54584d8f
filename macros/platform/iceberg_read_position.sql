{#-
  Reading an Iceberg table incrementally from a model whose own columns are
  fixed by contract: the model remembers, in a table property of its own,
  how far it has read the upstream table (a read position), and the next
  run reads only the rows of data files committed after it.
-#}

{% macro iceberg_read_position(relation) -%}
    {#-
      The read position of `relation` now, as text `<snapshot id>:<data
      sequence number>`: its current snapshot and the newest data sequence
      number among its live data files. '' on an empty table.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set row = run_query(
        "select cast(max(entries.sequence_number) as string),"
        ~ " cast(max(refs.snapshot_id) as string)"
        ~ " from " ~ relation ~ ".entries as entries"
        ~ " cross join (select snapshot_id from " ~ relation ~ ".refs where name = 'main') as refs"
        ~ " where entries.status <> 2 and entries.data_file.content = 0"
    ).rows[0] -%}
    {%- if row[0] is none or row[1] is none -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(row[1] ~ ':' ~ row[0]) }}
{%- endmacro %}


{% macro iceberg_table_property(relation, name) -%}
    {#- The value of table property `name` of `relation`, or none if it has none. -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
        {%- if row[0] == name -%}
            {{ return(row[1]) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{%- endmacro %}


{% macro iceberg_read_after(relation, position) -%}
    {#-
      The data sequence number after which rows of `relation` are new to a
      model that read it up to `position` (from iceberg_read_position): -1,
      meaning every row, when there is no position or its snapshot is no
      longer in the table's history (the table was recreated, e.g. by a full
      refresh, or its snapshots expired).
    -#}
    {%- if not execute or not position or ':' not in position -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set snapshot_id, sequence_number = position.split(':') -%}
    {%- set known = run_query(
        'select count(*) from ' ~ relation ~ '.snapshots where snapshot_id = ' ~ (snapshot_id | int)
    ).rows[0][0] -%}
    {{ return((sequence_number | int) if known > 0 else -1) }}
{%- endmacro %}


{% macro iceberg_rows_after(relation, after_sequence) -%}
    {#-
      SQL selecting the rows of `relation` stored in data files committed
      with a data sequence number above `after_sequence` (-1: every row),
      with all of the table's columns.
    -#}
    {%- if after_sequence < 0 -%}
        select * from {{ relation }}
    {%- else -%}
        select rows_after.*
        from {{ relation }} as rows_after
        left semi join (
            select data_file.file_path
            from {{ relation }}.entries
            where status <> 2 and data_file.content = 0 and sequence_number > {{ after_sequence }}
        ) as new_files
            on rows_after._file = new_files.file_path
    {%- endif -%}
{%- endmacro %}
