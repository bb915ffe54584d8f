{#-
  Views for the spark_embedded adapter: dbt-spark's view materialization,
  except that a view already defined as the model says is left as it is.
  dbt replaces every view at every build (a metastore write, 0.3-2 s each
  here); a view reads its tables by name when queried, so it need not be
  replaced when their rows change. But Spark keeps the columns a view's
  query had when it was created (`select *` too), so the columns of the
  tables it reads are part of what it is created from. The view keeps a
  fingerprint of that in the property `dbt.view_fingerprint`
  (view_fingerprint); it is replaced when that differs or is missing, when a
  table stands in its place, and on `--full-refresh`.
-#}
{% materialization view, adapter='spark_embedded' %}
    {%- set fingerprint = view_fingerprint(model) -%}
    {%- set existing = fingerprinted_relation('view', fingerprint) -%}
    {%- if existing is not none -%}
        {{ return(leave_unchanged(existing, 'view', fingerprint)) }}
    {%- endif -%}
    {%- set result = create_or_replace_view() -%}
    {%- do keep_fingerprint('view', fingerprint) -%}
    {#- Its data tests then read all its rows (built_anew). -#}
    {%- do adapter.node_memo(built_anew_key(model.unique_id), true) -%}
    {{ return(result) }}
{% endmaterialization %}


{#- The adapter node_memo key under which a view built anew in this invocation is recorded. -#}
{% macro built_anew_key(unique_id) -%}
    {{ return(invocation_id ~ ':' ~ unique_id ~ ':built_anew') }}
{%- endmacro %}


{#- What a view is created from: an MD5 of its compiled SQL, description, columns and contract, and
    of the columns of the tables it reads (upstream_columns). -#}
{% macro view_fingerprint(node) -%}
    {%- set columns = [] -%}
    {%- for name, column in node.columns.items() -%}
        {%- do columns.append([name, column.get('data_type'), column.get('description')]) -%}
    {%- endfor -%}
    {{ return(local_md5(tojson({
        'sql': sql,
        'description': node.description,
        'columns': columns,
        'contract': node.config.get('contract', {}),
        'persist_docs': node.config.get('persist_docs', {}),
        'upstream_columns': upstream_columns(node),
    }, sort_keys=true))) }}
{%- endmacro %}


{#- The columns of each table node `node` reads (through views too), as `[relation, columns]` pairs:
    on a session target (the process's Spark or the warm engine) from Spark's analyzed plan
    (adapter relation_schema_text, no query), on a SQL endpoint (thrift) from one `describe` a
    table. -#}
{% macro upstream_columns(node) -%}
    {%- set found = [] -%}
    {%- for upstream in upstream_table_nodes(node.unique_id) -%}
        {%- set relation = node_relation(upstream) -%}
        {%- if target.method == 'session' -%}
            {%- do found.append([relation | string, adapter.relation_schema_text(relation | string)]) -%}
        {%- else -%}
            {%- set columns = [] -%}
            {%- for column in adapter.get_columns_in_relation(relation) -%}
                {%- do columns.append(column.column ~ ' ' ~ column.dtype) -%}
            {%- endfor -%}
            {%- do found.append([relation | string, columns]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found | sort) }}
{%- endmacro %}


{#-
  Views: drop, then create. Behind SparkSessionCatalog, Iceberg 1.10 stores
  views as Iceberg views, and `create or replace view` over an existing one
  whose columns change leaves a view that cannot be queried
  (INCOMPATIBLE_VIEW_SCHEMA_CHANGE). The view is briefly absent between the
  two statements.
-#}
{% macro spark_embedded__create_view_as(relation, sql) -%}
    {%- if execute -%}
        {% do run_query('drop view if exists ' ~ relation) %}
    {%- endif -%}
    {{ spark__create_view_as(relation, sql) }}
{%- endmacro %}
