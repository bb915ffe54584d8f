{#-
  Views for the spark_embedded adapter: dbt-spark's view materialization,
  except that a view already defined as the model says is left as it is.
  dbt replaces every view at every build (a metastore write, 0.3-2 s each
  here); a view reads its tables by name when queried, so it need not be
  replaced when they change. The view keeps a fingerprint of what it was
  created from in the property `dbt.view_fingerprint` (view_fingerprint);
  it is replaced when that differs or is missing, when a table stands in
  its place, and on `--full-refresh`.
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
    {%- do adapter.node_memo(invocation_id ~ ':' ~ model.unique_id ~ ':built_anew', true) -%}
    {{ return(result) }}
{% endmaterialization %}


{#- What a view is created from: an MD5 of its compiled SQL, description, columns and contract. -#}
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
    }, sort_keys=true))) }}
{%- endmacro %}
