{#-
  Watermarks of incremental models: how a run finds the rows it has not
  processed yet. Each returns a SQL literal computed when the model runs
  (Iceberg prunes data files on a literal; it cannot on a subquery).
-#}

{% macro timestamp_literal(text) -%}
    {%- if text is none -%}
        cast(null as timestamp)
    {%- else -%}
        timestamp'{{ text }}'
    {%- endif -%}
{%- endmacro %}


{% macro query_scalar(sql) -%}
    {#- The single value `sql` returns when the model executes; none at parse time or when it is null. -#}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set value = run_query(sql).columns[0].values()[0] -%}
    {{ return(value) }}
{%- endmacro %}


{% macro last_staged_at(column='staged_at') -%}
    {#-
      The newest `column` (a processing time) of the model being built, as a
      timestamp literal: upstream rows staged after it are new to this model.
      The epoch on a first or full-refresh build, when every row is new.
    -#}
    {%- if not is_incremental() -%}
        {{ return(timestamp_literal('1970-01-01 00:00:00')) }}
    {%- endif -%}
    {%- set newest = query_scalar('select cast(max(' ~ column ~ ') as string) from ' ~ this) -%}
    {{ return(timestamp_literal(newest or '1970-01-01 00:00:00')) }}
{%- endmacro %}


{% macro bronze_new_files(bronze_table, source_format) -%}
    {#-
      Which data files of the append-only bronze Iceberg table `bronze_table`
      the model being built has not read yet: those committed with a data
      sequence number above the newest one it holds for `source_format`
      (column bronze_sequence_number). Returns a dict: `after_sequence` (the
      sequence number to read after, -1 for all), `has_new_files`, and
      `landed_since` (a timestamp literal no newer than any new file's
      ingested_at, for file pruning).
    -#}
    {%- set after_sequence = -1 -%}
    {%- if is_incremental() -%}
        {%- set newest = query_scalar(
            "select max(bronze_sequence_number) from " ~ this ~ " where source_format = '" ~ source_format ~ "'"
        ) -%}
        {%- if newest is not none -%}
            {%- set after_sequence = newest | int -%}
        {%- endif -%}
    {%- endif -%}
    {%- set new_files = iceberg_new_files(bronze_table, after_sequence, 'ingested_at') -%}
    {#- Files without column statistics cannot be pruned on: read from the start then. -#}
    {{ return({
        'after_sequence': after_sequence,
        'has_new_files': (new_files.count or 0) > 0,
        'landed_since': timestamp_literal(new_files.lower_bound or '1970-01-01 00:00:00'),
    }) }}
{%- endmacro %}
