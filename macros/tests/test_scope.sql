{#-
  Data tests scoped to what a build added. On an incremental `dbt build`,
  each data test reads only the rows the build staged or merged (and what
  those rows must be checked against), so a build costs what its new data
  costs; on `--full-refresh`, and with `--vars '{cdc_test_scope: all}'`,
  every test reads whole tables (schedule that, e.g. nightly: README,
  "Incremental processing").

  Which rows a test reads, by what it tests (cdc_test_scope_condition):
  - a table with a processing time `staged_at` (staging and intermediate
    models): rows with `staged_at` at or after the scope's start;
  - another Iceberg table (silver.cdc_changes, gold.cdc_history, the bronze
    tables): rows in the data files committed since the scope's start (for
    bronze: the files the build's staging read);
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
    {%- set start = cdc_test_scope_start() -%}
    {%- if node.resource_type == 'source' -%}
        {%- set scope = bronze_files_read_by_run(relation, node, start) -%}
    {%- elif node.config.materialized == 'incremental' and 'staged_at' in node.columns -%}
        {%- set since = start -%}
        {%- if since is none -%}
            {%- set since = query_scalar('select cast(max(staged_at) as string) from ' ~ relation) -%}
        {%- endif -%}
        {%- set scope = 'staged_at >= ' ~ timestamp_literal(since) if since is not none else 'false' -%}
    {%- elif node.config.materialized == 'incremental' -%}
        {%- set scope = iceberg_files_since(relation, start) -%}
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
    {%- if key and scope != 'false' and (key | map('lower') | sort | list) != (merged_on | map('lower') | sort | list) -%}
        {%- set key_list = key | join(', ') -%}
        {%- set scope = '(' ~ scope ~ ') or (' ~ key_list ~ ') in (select ' ~ key_list ~ ' from ' ~ relation ~ ' as scoped_keys where ' ~ scope ~ ')' -%}
    {%- endif -%}
    {{ return(scope) }}
{%- endmacro %}


{% macro iceberg_files_since(relation, start) -%}
    {#-
      The rows of the Iceberg table `relation` in data files committed since
      `start` (text; none: since its newest snapshot but one, i.e. its last
      commit), as SQL on its columns: `false` when there is no such file.
    -#}
    {%- set before = ('timestamp < ' ~ timestamp_literal(start)) if start is not none
        else ('timestamp < (select max(committed_at) from ' ~ relation ~ ".snapshots where operation <> 'replace')") -%}
    {%- set after_sequence = query_scalar(
        'select coalesce(max_by(latest_sequence_number, timestamp), -1) from ' ~ relation ~ '.metadata_log_entries where ' ~ before
    ) -%}
    {{ return(iceberg_files_after(relation, after_sequence | int)) }}
{%- endmacro %}


{% macro iceberg_files_after(relation, after_sequence) -%}
    {#- The rows of `relation` in data files committed with a data sequence number above `after_sequence`; `false` when there is none. -#}
    {%- set filter = iceberg_new_files_filter(after_sequence) -%}
    {%- if query_scalar('select count(*) from ' ~ relation ~ '.entries where ' ~ filter) == 0 -%}
        {{ return('false') }}
    {%- endif -%}
    {{ return('_file in (select data_file.file_path from ' ~ relation ~ '.entries where ' ~ filter ~ ')') }}
{%- endmacro %}


{% macro bronze_files_read_by_run(relation, node, start) -%}
    {#-
      The rows of the bronze table `relation` that the build stages: those
      in data files committed after what stg_bronze__messages had read of it
      before `start` (before its last build, for a `dbt test` on its own).
      The tests of a bronze table may run before or after staging in the
      same build, so the files landed since and not read yet are in too.
      None (every row) before staging's first build.
    -#}
    {%- set positions = bronze_read_positions(start) -%}
    {%- if positions is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set read = positions.get(node.identifier | replace('raw_', '', 1)) -%}
    {{ return(iceberg_files_after(relation, read.before if read else -1)) }}
{%- endmacro %}


{% macro bronze_read_positions(start) -%}
    {#-
      How far stg_bronze__messages had read each bronze table before `start`
      (none: its last build) and how far now, in data sequence numbers, and
      how many rows it staged since, as a dict: format -> {before, now,
      staged}. None when staging has no table yet. One pass over the
      model's sequence numbers.
    -#}
    {%- set staging = graph.nodes['model.' ~ project_name ~ '.stg_bronze__messages'] -%}
    {#- Not ref(): the tests of a bronze table do not depend on staging. -#}
    {%- set staged = adapter.get_relation(database=staging.database, schema=staging.schema, identifier=staging.alias or staging.name) -%}
    {%- if staged is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set since = start or query_scalar('select cast(max(staged_at) as string) from ' ~ staged) -%}
    {%- set since_literal = timestamp_literal(since or '9999-12-31 23:59:59') -%}
    {%- set positions = {} -%}
    {%- for row in run_query(
        'select source_format,'
        ~ ' coalesce(max(bronze_sequence_number) filter (where staged_at < ' ~ since_literal ~ '), -1),'
        ~ ' max(bronze_sequence_number), count_if(staged_at >= ' ~ since_literal ~ ')'
        ~ ' from ' ~ staged ~ ' group by source_format'
    ).rows -%}
        {%- do positions.update({row[0]: {'before': row[1] | int, 'now': row[2] | int, 'staged': row[3] | int}}) -%}
    {%- endfor -%}
    {{ return(positions) }}
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
