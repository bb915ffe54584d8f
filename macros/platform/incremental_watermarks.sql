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
    {#- The single value `sql` returns when the model executes; none at parse time, when it is null or when `sql` returns no row. -#}
    {%- set rows = query_rows(sql) -%}
    {{ return(rows[0][0] if rows | length > 0 else none) }}
{%- endmacro %}


{% macro query_rows(sql) -%}
    {#- The rows `sql` returns when the model executes, each a sequence of its values; no row at parse time. -#}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {{ return(run_query(sql).rows) }}
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
    {%- if model_is_idle() -%}
        {#- Not run (macro model_is_idle): nothing is newer than the end of time. -#}
        {{ return(timestamp_literal('9999-12-31 23:59:59')) }}
    {%- endif -%}
    {%- set newest = query_scalar('select cast(max(' ~ column ~ ') as string) from ' ~ this) -%}
    {{ return(timestamp_literal(newest or '1970-01-01 00:00:00')) }}
{%- endmacro %}


{% macro bronze_new_files(source_formats) -%}
    {#-
      Which data files of the append-only bronze Iceberg tables (one per
      format in `source_formats`, source bronze.raw_<format>) the model being
      built has not read yet: those committed with a data sequence number
      above the newest one it holds for that format (column
      bronze_sequence_number). Returns a dict per format: `after_sequence`
      (the sequence number to read after, -1 for all), `has_new_files`, and
      `landed_since` (a timestamp literal no newer than any new file's
      ingested_at, for file pruning). Two queries in all: one over the
      model's table, one over the bronze tables' `entries`. Also records
      whether the model is idle (set_model_idle): no format has a new file.
    -#}
    {%- set after = {} -%}
    {%- for source_format in source_formats -%}
        {%- do after.update({source_format: -1}) -%}
    {%- endfor -%}
    {%- if execute and is_incremental() -%}
        {#- What the model holds: bronze_read_positions, asked by the build's first hook (or now). -#}
        {%- for source_format, sequence in (bronze_read_positions(cdc_test_scope_start() or '9999-12-31 23:59:59') or {}).items()
            if source_format in after -%}
            {%- do after.update({source_format: sequence}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set files = {} -%}
    {%- if execute -%}
        {%- set query -%}
            {%- for source_format in source_formats %}
            select
                '{{ source_format }}' as source_format,
                count(*) as new_files,
                cast(min(readable_metrics.ingested_at.lower_bound) as string) as landed_since
            from {{ source('bronze', 'raw_' ~ source_format) }}.entries
            where {{ iceberg_new_files_filter(after[source_format]) }}
            {%- if not loop.last %} union all{% endif %}
            {%- endfor %}
        {%- endset -%}
        {%- for row in run_query(query).rows -%}
            {%- do files.update({row[0]: {'count': row[1], 'lower_bound': row[2]}}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set reads = {} -%}
    {%- for source_format in source_formats -%}
        {%- set new_files = files.get(source_format, {}) -%}
        {#- Files without column statistics cannot be pruned on: read from the start then. -#}
        {%- do reads.update({source_format: {
            'after_sequence': after[source_format],
            'has_new_files': (new_files.get('count') or 0) > 0,
            'landed_since': timestamp_literal(new_files.get('lower_bound') or '1970-01-01 00:00:00'),
        }}) -%}
    {%- endfor -%}
    {%- if execute and is_incremental() -%}
        {%- do set_model_idle(reads.values() | selectattr('has_new_files') | list | length == 0) -%}
    {%- endif -%}
    {{ return(reads) }}
{%- endmacro %}


{% macro staged_since_last_build(relation, condition=none, column='staged_at') -%}
    {#-
      Whether rows of `relation` (that meet `condition`, SQL on its columns)
      may have been staged (`column`) after the last build of the model
      being built: false when the model is idle (model_is_idle), when the
      relation has no commit since that build (the commit times are asked
      once per node: iceberg_last_commits), or when a query finds no such
      row; true on a first or full-refresh build and at parse time. The
      query's answer is kept for the node (adapter node_memo), so a model
      that asks twice about one upstream runs it once. See staged_after,
      which uses it.
    -#}
    {%- if model_is_idle() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if not (execute and is_incremental()) -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set last_built = iceberg_last_commits([this.render()], ['replace', 'delete']).values() | first -%}
    {%- if last_built is none -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set upstream_commit = iceberg_last_commits([relation | string], ['replace']).values() | first -%}
    {%- if upstream_commit is none or upstream_commit < last_built -%}
        {#- No commit of the upstream since: nothing of it can be new. -#}
        {{ return(false) }}
    {%- endif -%}
    {%- set probe = 'select 1 from ' ~ relation ~ ' where ' ~ column ~ ' > timestamp_millis(' ~ last_built ~ ')'
        ~ (' and (' ~ condition ~ ')' if condition else '') ~ ' limit 1' -%}
    {%- set memo_key = invocation_id ~ ':' ~ model.unique_id ~ ':staged_since:' ~ probe -%}
    {%- if adapter.node_memo(memo_key) is none -%}
        {%- do adapter.node_memo(memo_key, 'found' if run_query(probe).rows | length > 0 else 'none') -%}
    {%- endif -%}
    {{ return(adapter.node_memo(memo_key) == 'found') }}
{%- endmacro %}


{% macro staged_after(relation, since=none, alias=none, condition=none, column='staged_at') -%}
    {#-
      The condition selecting the rows of `relation` (read as `alias`) staged
      after `since`, a timestamp literal from last_staged_at:
      `<alias>.<column> > <since>`; without `since`, the model's
      last_staged_at(), asked (a query) only when something may be new. When the model runs incrementally and no
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
    {%- if not staged_since_last_build(relation, condition, column) -%}
        {{ return('false') }}
    {%- endif -%}
    {{ return((alias ~ '.' if alias else '') ~ column ~ ' > ' ~ (since if since is not none else last_staged_at())) }}
{%- endmacro %}


{% macro new_or_held(relation, new_rows, held_ids, held_since, id_column='message_id', bound_column='ingested_at') -%}
    {#-
      A query of the rows of `relation` that are new (`new_rows`, SQL on its
      columns, e.g. from staged_after) or of an id the model holds back to
      decide again (`held_ids`, a query of one column), in a form Iceberg can
      skip files on. `held_since` is the smallest `bound_column` of the held
      ids (text, as from query_scalar), which their rows in `relation` share;
      none when nothing is held, and then the query reads the new rows alone.
      Otherwise the held rows are a second branch, bounded by `held_since`:
      one condition that ORs the new rows with the subquery would read every
      file, as Spark hands no condition with a subquery to the scan (and
      folds `(a or b) and (a or c)` into `a or (b and c)`).
    -#}
    {%- set query = 'select * from ' ~ relation ~ ' where ' ~ new_rows -%}
    {%- if held_since is none -%}
        {{ return(query) }}
    {%- endif -%}
    {{ return(
        query ~ ' union all select * from ' ~ relation ~ ' where not (' ~ new_rows ~ ') and '
        ~ bound_column ~ ' >= ' ~ timestamp_literal(held_since) ~ ' and ' ~ id_column ~ ' in (' ~ held_ids ~ ')'
    ) }}
{%- endmacro %}


{% macro bound_merge_target(column, since) -%}
    {#-
      Called by an incremental model's SQL: every row of its table that its
      run's rows merge with has `column` at or after `since` (text, as from
      query_scalar; none: no bound). The adapter's merge (the plugin's
      spark_embedded__get_merge_sql) adds `dbt_internal_dest.<column> >=
      <since>` to the merge's condition, a condition on the target alone,
      so Iceberg skips the target's files below it instead of reading the
      whole table. Renders nothing.
    -#}
    {%- if execute and is_incremental() and since is not none -%}
        {%- do adapter.node_memo(
            invocation_id ~ ':' ~ model.unique_id ~ ':merge_target_bound',
            'dbt_internal_dest.' ~ column ~ ' >= ' ~ timestamp_literal(since)
        ) -%}
    {%- endif -%}
{%- endmacro %}


{% macro bound_merge_by_landing(rows) -%}
    {#-
      For a model whose table holds each message's rows with the message's
      ingested_at and whose run merges only rows of the messages that the
      query `rows` returns (with their ingested_at; it may return more):
      the landing time of the earliest of them, as text, after remembering
      it as the merge's bound (bound_merge_target). A message reaches such a
      model again only as its first landed copy, with the same ingested_at,
      so the table's rows the merge matches are no older. '9999-12-31
      23:59:59' when `rows` returns none; none outside an incremental build.
    -#}
    {%- set earliest = earliest_landed(rows) -%}
    {%- do bound_merge_target('ingested_at', earliest) -%}
    {{ return(earliest) }}
{%- endmacro %}


{% macro earliest_landed(rows) -%}
    {#-
      On an incremental build, the smallest ingested_at that the query `rows`
      returns, as text; '9999-12-31 23:59:59' when it returns no row (nothing
      is older than the end of time), none outside an incremental build.
    -#}
    {%- if not (execute and is_incremental()) -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(
        query_scalar('select cast(min(ingested_at) as string) from (' ~ rows ~ ') as landed')
        or '9999-12-31 23:59:59'
    ) }}
{%- endmacro %}
