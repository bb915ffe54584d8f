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


{% macro staged_after(relation, since, alias=none, condition=none, column='staged_at') -%}
    {#-
      The condition selecting the rows of `relation` (read as `alias`) staged
      after `since`, a timestamp literal from last_staged_at:
      `<alias>.<column> > <since>`. When the model runs incrementally and no
      row of `relation` (that meets `condition`, SQL on its columns) was
      staged after the model's last build (the commit time of its newest
      snapshot written by a build: not a compaction's `replace`, nor a
      metadata-only `delete` by hand), the condition is `false` instead.
      Upstream models finish before a model starts, so its last build read
      every row there was; a build with the same inputs adds nothing. Spark
      then knows while planning that nothing is new and drops every part of
      the query fed only by those rows (their joins with the model's own
      table, the merge's join with it) without reading a table. The model's
      own rows can lag its last build (a run that adds no row leaves `since`
      where it was), so this check uses the build time, not `since`.
    -#}
    {%- set staged = (alias ~ '.' if alias else '') ~ column ~ ' > ' ~ since -%}
    {%- if execute and is_incremental() -%}
        {%- set last_built = query_scalar(
            "select cast(max(committed_at) as string) from " ~ this ~ ".snapshots where operation not in ('replace', 'delete')"
        ) -%}
        {%- if last_built is not none -%}
            {%- set found = run_query(
                'select 1 from ' ~ relation ~ ' where ' ~ column ~ ' > ' ~ timestamp_literal(last_built)
                ~ (' and (' ~ condition ~ ')' if condition else '') ~ ' limit 1'
            ) -%}
            {%- if found.rows | length == 0 -%}
                {{ return('false') }}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(staged) }}
{%- endmacro %}
