{#-
  Idle models: an incremental model whose inputs have not changed since its
  last build would read nothing new, so a build leaves it as it is. Without
  this, each such model still costs its watermark queries, a temporary view,
  the planning of an empty MERGE and an Iceberg commit that adds nothing
  (about 1-3 s a model), and that commit made its children look changed too.

  A model is idle when it is built incrementally (a model can opt out with
  `skip_when_idle=false`) and none of the Iceberg
  tables it reads (through views too) has a snapshot newer than the model's
  last build (its newest snapshot written by a build: not a compaction's
  `replace`, nor a `delete` by hand). Upstream models finish before a model
  starts, so its last build read everything they held then. Bronze tables
  are written by `land` while a build runs, so a model that reads them
  decides for itself (stg_landed__messages: no bronze data file it has not
  read) and says so with set_model_idle.

  The decision is taken once per node, the first time one of the watermark
  macros asks (while dbt compiles the model), and kept in the adapter's
  node_memo, so that the materialization (materializations/incremental.sql) skips the
  model on the same decision: no query, no commit, reported as `IDLE`.
  `--full-refresh` and a first build are never idle.
-#}

{% macro model_idle_key() -%}
    {{ return(invocation_id ~ ':' ~ model.unique_id ~ ':idle') }}
{%- endmacro %}


{% macro set_model_idle(idle) -%}
    {#- Records the model's own decision (a model that reads bronze, see above). -#}
    {%- do adapter.node_memo(model_idle_key(), 'idle' if idle else 'busy') -%}
{%- endmacro %}


{% macro model_is_idle() -%}
    {#- Whether the model being built has nothing new to read (see above); false at parse time. -#}
    {%- if not execute or model.resource_type != 'model' or not config.get('skip_when_idle', true)
        or should_full_refresh() or config.get('materialized') != 'incremental' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set existing = load_cached_relation(this) -%}
    {%- if existing is none or not existing.is_table -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set known = adapter.node_memo(model_idle_key()) -%}
    {%- if known is none -%}
        {%- set known = 'idle' if upstream_tables_unchanged() else 'busy' -%}
        {%- do adapter.node_memo(model_idle_key(), known) -%}
    {%- endif -%}
    {{ return(known == 'idle') }}
{%- endmacro %}


{% macro upstream_table_nodes(node_id, found=none) -%}
    {#-
      The graph nodes of the tables node `node_id` reads: the models, seeds
      and sources it refers to, and those behind the views it refers to.
    -#}
    {%- set found = found if found is not none else [] -%}
    {%- set node = graph.nodes.get(node_id) -%}
    {%- for upstream_id in node.depends_on.nodes if node -%}
        {%- set upstream = graph.nodes.get(upstream_id) or graph.sources.get(upstream_id) -%}
        {%- if upstream and upstream.resource_type == 'model' and upstream.config.materialized in ('view', 'ephemeral') -%}
            {%- do upstream_table_nodes(upstream_id, found) -%}
        {%- elif upstream and upstream.resource_type in ('model', 'seed', 'snapshot', 'source')
            and upstream not in found -%}
            {%- do found.append(upstream) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}


{% macro node_relation(node) -%}
    {#- The relation of a graph node (model, seed, snapshot or source), as a Relation: its schema and table name. -#}
    {{ return(api.Relation.create(
        schema=node.schema,
        identifier=node.identifier if node.resource_type == 'source' else (node.alias or node.name),
    )) }}
{%- endmacro %}


{% macro upstream_tables(node_id) -%}
    {#-
      The tables node `node_id` reads (upstream_table_nodes), as
      `schema.name`; sources as `source:<schema.name>` (written by `land`,
      not by a build).
    -#}
    {%- set names = [] -%}
    {%- for upstream in upstream_table_nodes(node_id) -%}
        {%- set relation = node_relation(upstream) -%}
        {%- do names.append(('source:' if upstream.resource_type == 'source' else '') ~ relation.schema ~ '.' ~ relation.identifier) -%}
    {%- endfor -%}
    {{ return(names | unique | list) }}
{%- endmacro %}


{% macro upstream_tables_unchanged() -%}
    {#-
      True when no table the model being built reads has a snapshot
      committed after the model's last build (through Iceberg's API: adapter
      iceberg_last_commits); false when it reads a source or has no build yet.
    -#}
    {%- set tables = upstream_tables(model.unique_id) -%}
    {%- if tables | length == 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for table in tables if table.startswith('source:') -%}
        {{ return(false) }}
    {%- endfor -%}
    {%- set commits = iceberg_last_commits_of([
        {'tables': [this.render()], 'skipped': ['replace', 'delete']},
        {'tables': tables, 'skipped': ['replace']},
    ]) -%}
    {%- set built = commits[0].values() | first -%}
    {%- if built is none -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for committed in commits[1].values() if committed is not none and committed >= built -%}
        {{ return(false) }}
    {%- endfor -%}
    {{ return(true) }}
{%- endmacro %}


{% macro iceberg_last_commits(tables, skipped_operations) -%}
    {#-
      When (epoch milliseconds) each of `tables` (`schema.name`) last
      committed, not counting snapshots whose operation is in
      `skipped_operations`: a dict, none for a table without such a snapshot.
      A table's first snapshot counts whatever its operation: the statement
      that created the table wrote it (a model's first build with an empty
      result commits a `delete`), so a model built empty is not taken for
      one never built. See iceberg_last_commits_of for how it is read.
    -#}
    {{ return(iceberg_last_commits_of([{'tables': tables, 'skipped': skipped_operations}])[0]) }}
{%- endmacro %}


{% macro iceberg_last_commits_of(requests) -%}
    {#-
      iceberg_last_commits for several requests at once, each a dict of
      `tables` and `skipped` (operations): a list of dicts, one per request.
      A target that runs Spark in the dbt process (method session) reads
      Iceberg's API through the adapter, a few milliseconds a table. Another
      (the lakehouse's warm engine through Spark Connect, or thrift) asks the
      tables' `snapshots` metadata tables, all requests in one query, and
      the node being built keeps each answer (adapter node_memo) for the
      rest of its build: its own table does not change before its
      materialization runs, and the models it reads finished before it
      started, so a second ask (staged_after after model_is_idle) costs no
      query.
    -#}
    {%- if in_session_target() -%}
        {%- set answers = [] -%}
        {%- for request in requests -%}
            {%- do answers.append(adapter.iceberg_last_commits(request.tables, request.skipped)) -%}
        {%- endfor -%}
        {{ return(answers) }}
    {%- endif -%}
    {%- set node_id = model.unique_id if model is defined and model else 'none' -%}
    {%- set memo_key = invocation_id ~ ':' ~ node_id ~ ':last_commits' -%}
    {%- set known = adapter.node_memo(memo_key) or {} -%}
    {%- set asked = [] -%}
    {%- for request in requests -%}
        {%- set skipped_key = '|' ~ request.skipped | join(',') -%}
        {%- for table in request.tables if (table ~ skipped_key) not in known -%}
            {%- do asked.append({'key': table ~ skipped_key, 'table': table, 'skipped': request.skipped}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if asked -%}
        {%- set query -%}
            {%- for ask in asked %}
            select '{{ ask.key }}', unix_millis(max(committed_at)) from {{ ask.table }}.snapshots
            {%- if ask.skipped %} where operation not in ('{{ ask.skipped | join("', '") }}') or parent_id is null{% endif %}
            {%- if not loop.last %} union all{% endif %}
            {%- endfor %}
        {%- endset -%}
        {%- for row in run_query(query).rows -%}
            {%- do known.update({row[0]: row[1]}) -%}
        {%- endfor -%}
        {%- do adapter.node_memo(memo_key, known) -%}
    {%- endif -%}
    {%- set answers = [] -%}
    {%- for request in requests -%}
        {%- set skipped_key = '|' ~ request.skipped | join(',') -%}
        {%- set answer = {} -%}
        {%- for table in request.tables -%}
            {%- do answer.update({table: known.get(table ~ skipped_key)}) -%}
        {%- endfor -%}
        {%- do answers.append(answer) -%}
    {%- endfor -%}
    {{ return(answers) }}
{%- endmacro %}


{% macro in_session_target() -%}
    {#-
      Whether the target runs Spark in the dbt process (method session: the
      adapter can read Iceberg's API directly), not on the lakehouse's warm
      engine (Spark Connect) or through a SQL endpoint (thrift). False where
      there is no target (sqlfluff's lint).
    -#}
    {{ return(target is defined and target.method == 'session' and adapter.runs_spark_in_process()) }}
{%- endmacro %}


{% macro leave_idle_model() -%}
    {#- The result of a materialization that leaves an idle model as it is. -#}
    {%- call noop_statement('main', 'IDLE', 'IDLE', 0) -%}
        -- {{ this }}: no table it reads has changed since its last build
    {%- endcall -%}
    {{ return({'relations': [this]}) }}
{%- endmacro %}
