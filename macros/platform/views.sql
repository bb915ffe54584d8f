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
    {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- if existing is not none and existing.is_view and not should_full_refresh()
        and iceberg_table_property(existing, 'dbt.view_fingerprint') == fingerprint -%}
        {%- call noop_statement('main', 'UNCHANGED', 'UNCHANGED', 0) -%}
            -- {{ existing }} is already defined as this model says (dbt.view_fingerprint {{ fingerprint }})
        {%- endcall -%}
        {{ return({'relations': [existing]}) }}
    {%- endif -%}
    {%- set result = create_or_replace_view() -%}
    {%- do run_query(
        'alter view ' ~ this ~ " set tblproperties ('dbt.view_fingerprint' = '" ~ fingerprint ~ "')"
    ) -%}
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
