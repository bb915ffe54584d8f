{#-
  Data tests scoped to what a build added. On an incremental `dbt build`,
  each data test reads only the rows the build staged or merged (and what
  those rows must be checked against), so a build costs what its new data
  costs; on `--full-refresh`, and with `--vars '{cdc_test_scope: all}'`,
  every test reads whole tables (schedule that, e.g. nightly: docs/testing.md,
  "Whole-table data tests").

  Which rows a test reads, by what it tests (cdc_test_scope_condition):
  - a table with a processing time `staged_at` (staging and intermediate
    models): rows with `staged_at` at or after the scope's start;
  - another Iceberg table (silver.cdc_changes, gold.cdc_history, the bronze
    tables): rows in the data files committed since the scope's start (for
    bronze: the files the build's staging read). Iceberg does not skip files
    on `_file`, so a model names a column whose values in those files bound
    them below (config `test_scope_bound`: gold.cdc_history's written_at,
    silver.cdc_changes' ingested_at; bronze's ingested_at), and Iceberg skips
    the older files by their column statistics;
  - a view or a seed: every row when a table under it changed since the
    scope's start, none otherwise.
  A grain test (grain, unique, unique_combination_of_columns) on a model
  that is not merged on exactly the tested key also reads the older rows
  that share a key with a scoped row, so a new row that repeats an old key
  is still found.

  The scope starts when this dbt invocation started (`dbt build`), or, for
  a `dbt test` on its own, at the tested table's last build (its newest
  `staged_at`, or its newest snapshot).

  Generic tests get their scope through dbt's own hook for `where`
  (get_where_subquery, below); the singular tests call cdc_test_rows.
-#}

{% macro cdc_tests_whole() -%}
    {#- Whether tests read whole tables: on a full refresh, with cdc_test_scope=all, at parse time. -#}
    {{ return(not execute or flags.FULL_REFRESH or var('cdc_test_scope', 'run') == 'all') }}
{%- endmacro %}


{% macro cdc_test_scope_start() -%}
    {#- The start of a build's scope (this invocation's start, UTC) as text; none for a `dbt test` on its own. -#}
    {%- if flags.WHICH in ('build', 'run') -%}
        {{ return(run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
    {%- endif -%}
    {{ return(none) }}
{%- endmacro %}


{% macro get_where_subquery(relation) -%}
    {#- dbt's hook for the `where` config of generic tests: that filter, and the scope (above). -#}
    {%- set conditions = [] -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}
        {%- do conditions.append('(' ~ where ~ ')') -%}
    {%- endif -%}
    {%- set test_name = model.test_metadata.name if model.test_metadata else none -%}
    {#- These find their model by its relation, and read cdc_history through cdc_test_rows. -#}
    {%- set tested = tested_node(relation) if not cdc_tests_whole() and test_name not in ('typed_values_fit_types', 'source_columns_are_published') else none -%}
    {%- if tested is not none -%}
        {%- set kwargs = (model.test_metadata.kwargs if model.test_metadata else none) or {} -%}
        {%- set key = none -%}
        {%- if test_name in ('grain', 'unique', 'unique_combination_of_columns') -%}
            {%- set key = kwargs.get('columns') or kwargs.get('combination_of_columns') or [kwargs.get('column_name')] -%}
        {%- endif -%}
        {%- set scope = cdc_test_scope_condition(relation, tested, key) -%}
        {%- do record_test_scope(tested, scope) -%}
        {%- if scope is not none -%}
            {%- do conditions.append('(' ~ scope ~ ')') -%}
        {%- endif -%}
    {%- endif -%}
    {%- if conditions | length == 0 -%}
        {{ return(relation) }}
    {%- endif -%}
    {#- The alias keeps Spark from reading `where (...)` as a table alias with column names. -#}
    {{ return('(select * from ' ~ relation ~ ' as scoped where ' ~ conditions | join(' and ') ~ ') dbt_subquery') }}
{%- endmacro %}


{% macro tested_node(relation) -%}
    {#- The model, seed or source that `relation` is (none for anything else). -#}
    {%- for node in (graph.nodes.values() | list) + (graph.sources.values() | list)
        if node.resource_type in ('model', 'seed', 'source')
        and (node.alias or node.identifier or node.name) | lower == relation.identifier | lower
        and node.schema | lower == relation.schema | lower -%}
        {{ return(node) }}
    {%- endfor -%}
    {{ return(none) }}
{%- endmacro %}


{% macro cdc_test_rows(relation, key=none) -%}
    {#- `relation` (a model or source of the test) as a singular test reads it: a subquery of its rows in scope; `key`: as for a grain test. -#}
    {%- set node = tested_node(relation) if not cdc_tests_whole() else none -%}
    {%- set scope = cdc_test_scope_condition(relation, node, key) if node is not none else none -%}
    {%- if node is not none -%}
        {%- do record_test_scope(node, scope) -%}
    {%- endif -%}
    {#- With the Iceberg file of each row (`_file`), which `*` leaves out, for a table. -#}
    {%- set file_column = ', _file' if node is not none and (node.resource_type != 'model' or node.config.materialized != 'view') else '' -%}
    {{ return('(select *' ~ file_column ~ ' from ' ~ relation ~ (' as scoped where ' ~ scope if scope is not none else '') ~ ')') }}
{%- endmacro %}


{% macro cdc_test_scope_condition(relation, node, key=none) -%}
    {#-
      SQL on `relation`'s columns selecting the rows a test of it reads
      (see above), or none for every row. `node`: its graph node. `key`:
      the columns of a grain test, or none.
    -#}
    {%- if cdc_tests_whole() -%}
        {{ return(none) }}
    {%- endif -%}
    {#- Worked out once per build for each table and key: its tests, and the views over it, share it. -#}
    {%- set memo_key = invocation_id ~ ':test_scope:' ~ node.unique_id ~ ':' ~ ((key or []) | join(',')) -%}
    {%- set remembered = adapter.node_memo(memo_key) -%}
    {%- if remembered is not none -%}
        {{ return(remembered.scope) }}
    {%- endif -%}
    {%- set scope = test_scope_of(relation, node, key) -%}
    {%- do adapter.node_memo(memo_key, {'scope': scope}) -%}
    {{ return(scope) }}
{%- endmacro %}


{% macro test_scope_of(relation, node, key) -%}
    {#- cdc_test_scope_condition, worked out (not remembered). -#}
    {%- set start = cdc_test_scope_start() -%}
    {%- if built_anew(node) -%}
        {#- A view this build created or redefined: all of it is new. -#}
        {{ return(none) }}
    {%- endif -%}
    {%- if node.config.materialized == 'incremental' and start is not none
        and adapter.node_memo(invocation_id ~ ':' ~ node.unique_id ~ ':idle') == 'idle' -%}
        {#- Left as it was by this build (model_is_idle): it added nothing. -#}
        {{ return('false') }}
    {%- endif -%}
    {%- if node.resource_type == 'source' -%}
        {%- set scope = bronze_files_read_by_run(relation, node, start) -%}
    {%- elif node.config.materialized == 'incremental' and 'staged_at' in node.columns -%}
        {%- set since = start -%}
        {%- if since is none -%}
            {%- set since = query_scalar('select cast(max(staged_at) as string) from ' ~ relation) -%}
        {%- endif -%}
        {%- set scope = 'staged_at >= ' ~ timestamp_literal(since) if since is not none else 'false' -%}
    {%- elif node.config.materialized == 'incremental' -%}
        {%- set scope = iceberg_files_since(relation, start, node.config.get('test_scope_bound')) -%}
    {%- elif key and node.resource_type == 'model' and node.config.materialized == 'view' -%}
        {#- A grain test of a view: the rows whose key is in a scoped row of a table under it. -#}
        {{ return(view_keys_in_scope(node, key)) }}
    {%- else -%}
        {#- A view, seed or table: whole when a table under it (or it) changed. -#}
        {%- set tables = upstream_tables(node.unique_id) if node.resource_type == 'model' else [] -%}
        {%- if node.config.materialized != 'view' -%}
            {%- set tables = tables + [relation.schema ~ '.' ~ relation.identifier] -%}
        {%- endif -%}
        {{ return(none if tables_changed_since(tables, start) else 'false') }}
    {%- endif -%}
    {%- set merged_on = node.config.get('unique_key') if node.config else none -%}
    {%- set merged_on = [merged_on] if merged_on is string else (merged_on or []) -%}
    {%- if scope is none or scope == 'false' -%}
        {{ return(scope) }}
    {%- endif -%}
    {%- if key and (key | map('lower') | sort | list) != (merged_on | map('lower') | sort | list) -%}
        {%- if table_written_since(relation, start) -%}
            {#- Created or replaced by this build: every row is new, so read them all once. -#}
            {{ return(none) }}
        {%- endif -%}
        {%- set scope = '(' ~ scope ~ ') or ' ~ keys_in_scope(key, relation, scope) -%}
    {%- endif -%}
    {{ return(scope) }}
{%- endmacro %}


{% macro keys_in_scope(key, relation, scope) -%}
    {#- SQL selecting the rows whose `key` (columns) is the key of a row of `relation` in `scope` (SQL on its columns). -#}
    {%- set key_list = key | join(', ') -%}
    {{ return('(' ~ key_list ~ ') in (select ' ~ key_list ~ ' from ' ~ relation ~ ' as scoped_keys where ' ~ scope ~ ')') }}
{%- endmacro %}


{% macro view_keys_in_scope(node, key) -%}
    {#-
      The scope of a grain test of the view `node` on `key` (columns): the
      rows whose key is the key of a row in scope in one of the tables under
      the view (upstream_table_nodes), from every table that has those
      columns; `false` when none has such a row; none (every row) when a
      table under the view is read whole, or lacks a key column and a table
      under the view changed since the scope's start.
    -#}
    {%- set key_list = key | join(', ') -%}
    {%- set selects = [] -%}
    {%- for upstream in upstream_table_nodes(node.unique_id) -%}
        {%- for column in key if column | lower not in upstream.columns -%}
            {#- No key to follow: whole when a table under the view changed, as for other views. -#}
            {{ return(none if tables_changed_since(upstream_tables(node.unique_id), cdc_test_scope_start()) else 'false') }}
        {%- endfor -%}
        {%- set upstream_relation = node_relation(upstream) -%}
        {%- set scope = cdc_test_scope_condition(upstream_relation, upstream) -%}
        {%- if scope is none -%}
            {{ return(none) }}
        {%- elif scope != 'false' -%}
            {%- do selects.append('select ' ~ key_list ~ ' from ' ~ upstream_relation ~ ' as scoped_keys where ' ~ scope) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if selects | length == 0 -%}
        {{ return('false') }}
    {%- endif -%}
    {{ return('(' ~ key_list ~ ') in (' ~ selects | join(' union all ') ~ ')') }}
{%- endmacro %}


{% macro iceberg_files_since(relation, start, bound_column=none) -%}
    {#-
      The rows of the Iceberg table `relation` in data files committed since
      `start` (text; none: since its newest snapshot but one, i.e. its last
      commit), as SQL on its columns: `false` when there is no such file.
      `bound_column`: as for iceberg_files_after.
    -#}
    {%- set before = ('timestamp < ' ~ timestamp_literal(start)) if start is not none
        else ('timestamp < (select max(committed_at) from ' ~ relation ~ ".snapshots where operation <> 'replace')") -%}
    {%- set after_sequence = query_scalar(
        'select coalesce(max_by(latest_sequence_number, timestamp), -1) from ' ~ relation ~ '.metadata_log_entries where ' ~ before
    ) -%}
    {#- No metadata before: the table was created since, so every row is in. -#}
    {{ return(iceberg_files_after(relation, after_sequence | int, bound_column) if after_sequence | int >= 0 else none) }}
{%- endmacro %}


{% macro iceberg_files_after(relation, after_sequence, bound_column=none) -%}
    {#-
      The rows of `relation` in data files committed with a data sequence
      number above `after_sequence`; `false` when there is none. With
      `bound_column` (a time that grows from one commit to the next, e.g.
      bronze's ingested_at), also its lower bound in those files, so that
      Iceberg skips the older files instead of reading every file's rows.
    -#}
    {%- set new_files = iceberg_new_files(relation, after_sequence, bound_column) -%}
    {%- if new_files.count == 0 -%}
        {{ return('false') }}
    {%- endif -%}
    {%- set bound = iceberg_lower_bound_condition(bound_column, new_files.lower_bound) ~ ' and '
        if bound_column and new_files.lower_bound is not none else '' -%}
    {{ return(bound ~ '_file in (select data_file.file_path from ' ~ relation ~ '.entries where ' ~ new_files.filter ~ ')') }}
{%- endmacro %}


{% macro bronze_files_read_by_run(relation, node, start) -%}
    {#-
      The rows of the bronze table `relation` that the build stages: those
      in data files committed after what stg_landed__messages had read of it
      before `start` (before its last build, for a `dbt test` on its own).
      The tests of a bronze table may run before or after staging in the
      same build, so the files landed since and not read yet are in too.
      None (every row) when staging had read nothing of it before.
    -#}
    {%- set before = (bronze_read_positions(start) or {}).get(node.identifier | replace('raw_', '', 1), -1) -%}
    {{ return(iceberg_files_after(relation, before, 'ingested_at') if before >= 0 else none) }}
{%- endmacro %}


{% macro bronze_read_positions(start) -%}
    {#-
      How far stg_landed__messages had read each bronze table before `start`
      (none: before its last build), as a data sequence number per format;
      none when staging has no table yet. One pass over the model's sequence
      numbers. For a build, the project's on-run-start hook asks first, before
      staging runs, and the answer is kept for the build (adapter node_memo):
      the bronze tests, the accounting test and staging itself reuse it.
    -#}
    {%- set memo_key = invocation_id ~ ':bronze_read_positions' -%}
    {%- if start is not none and adapter.node_memo(memo_key) is not none -%}
        {{ return(adapter.node_memo(memo_key).positions) }}
    {%- endif -%}
    {%- set staging = graph.nodes['model.' ~ project_name ~ '.stg_landed__messages'] -%}
    {#- Not ref(): the tests of a bronze table do not depend on staging. -#}
    {%- set staged_name = node_relation(staging) -%}
    {%- set staged = adapter.get_relation(database=staging.database, schema=staged_name.schema, identifier=staged_name.identifier) -%}
    {%- set positions = none -%}
    {%- if staged is not none -%}
        {%- set since = start or query_scalar('select cast(max(staged_at) as string) from ' ~ staged) -%}
        {%- set positions = {} -%}
        {%- for row in run_query(
            'select source_format, max(bronze_sequence_number) from ' ~ staged
            ~ ' where staged_at < ' ~ timestamp_literal(since or '9999-12-31 23:59:59') ~ ' group by source_format'
        ).rows -%}
            {%- do positions.update({row[0]: row[1] | int}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if start is not none -%}
        {%- do adapter.node_memo(memo_key, {'positions': positions}) -%}
    {%- endif -%}
    {{ return(positions) }}
{%- endmacro %}


{% macro remember_bronze_read_positions() -%}
    {#- An on-run-start hook: how far staging has read bronze as a build starts (bronze_read_positions). -#}
    {%- if execute and cdc_test_scope_start() is not none -%}
        {%- do bronze_read_positions(cdc_test_scope_start()) -%}
    {%- endif -%}
{%- endmacro %}


{% macro table_written_since(relation, start) -%}
    {#- Whether every snapshot of the Iceberg table `relation` was committed since `start` (it was created or replaced since). -#}
    {%- if start is none -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(query_scalar(
        'select count(*) from ' ~ relation ~ '.snapshots where committed_at < ' ~ timestamp_literal(start)
    ) == 0) }}
{%- endmacro %}


{% macro tables_changed_since(tables, start) -%}
    {#- Whether any of `tables` (`schema.name`; sources as `source:schema.name`) has a snapshot committed since `start` (none: ever). -#}
    {%- if start is none or tables | length == 0 -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set query -%}
        select count(*) from (
            {%- for table in tables %}
            select committed_at from {{ table | replace('source:', '', 1) }}.snapshots where operation <> 'replace'
            {%- if not loop.last %} union all{% endif %}
            {%- endfor %}
        ) as snapshots
        where committed_at >= {{ timestamp_literal(start) }}
    {%- endset -%}
    {{ return(query_scalar(query) > 0) }}
{%- endmacro %}


{% macro test_scopes_key() -%}
    {#- The adapter node_memo key of the scopes of the test being compiled; none inside a generic test's body. -#}
    {{ return(invocation_id ~ ':' ~ model.unique_id ~ ':scopes' if model.unique_id is defined else none) }}
{%- endmacro %}


{% macro record_test_scope(node, scope) -%}
    {#- Keeps the scope of one relation the test being compiled reads, for the test materialization. -#}
    {%- set key = test_scopes_key() -%}
    {%- if key is not none -%}
        {%- set scopes = adapter.node_memo(key) or {} -%}
        {%- do scopes.update({node.unique_id: scope}) -%}
        {%- do adapter.node_memo(key, scopes) -%}
    {%- endif -%}
{%- endmacro %}


{#-
  dbt's test materialization, except that a test whose every input is out
  of scope (scope `false`: the build added nothing to it) is not sent to
  Spark: it passes with no failure, as its query would.
-#}
{% materialization test, adapter='spark_embedded' %}
    {%- set scopes = adapter.node_memo(test_scopes_key()) or {} -%}
    {%- set inputs = model.depends_on.nodes -%}
    {%- if inputs | length > 0 and not should_store_failures()
        and inputs | reject('in', scopes) | list | length == 0
        and scopes.values() | reject('equalto', 'false') | list | length == 0 -%}
        {%- call statement('main', fetch_result=True) -%}
            select 0 as failures, false as should_warn, false as should_error
        {%- endcall -%}
        {{ return({'relations': []}) }}
    {%- endif -%}
    {{ return(materialization_test_default()) }}
{% endmaterialization %}


{% macro built_anew(node) -%}
    {#- Whether this dbt invocation created or redefined the view `node` (the view materialization says so). -#}
    {{ return(node is not none and adapter.node_memo(built_anew_key(node.unique_id)) is not none) }}
{%- endmacro %}
