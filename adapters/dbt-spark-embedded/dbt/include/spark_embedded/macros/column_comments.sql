{#-
  Column comments (persist_docs `columns: true`) without a commit per column
  per build: dbt-spark alters the comment of every documented column at every
  build, and each `alter column` of an Iceberg table is a metadata commit.
  Here one `describe` reads the comments the table holds, and only a column
  whose comment differs from its description is altered, so a build that
  changed no description alters nothing. Spark cannot alter a view's columns:
  a view is left as it is. The full descriptions are on the docs site.
-#}
{% macro spark_embedded__alter_column_comment(relation, column_dict) -%}
    {%- if relation.is_view -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set held = {} -%}
    {%- for row in run_query('describe table ' ~ relation) -%}
        {%- if row[0] and not row[0].startswith('#') -%}
            {%- do held.update({row[0] | lower: row[2] or ''}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for column_name, column in column_dict.items() -%}
        {%- set comment = metastore_comment_text((column['description'] or '') | trim) -%}
        {%- if column_name | lower in held and held[column_name | lower] != comment -%}
            {%- do run_query(
                'alter table ' ~ relation ~ ' alter column '
                ~ (adapter.quote(column_name) if column['quote'] else column_name)
                ~ " comment '" ~ (comment | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'"
            ) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}


{#- A comment the metastore can keep: it holds at most 256 characters of a comment (a longer one
    fails the commit), so a longer text is cut, and says so with `...`. Also the project's typed
    views' comments (macros/gold/typed_relations.sql). -#}
{% macro metastore_comment_text(text) -%}
    {{ return(text if text | length <= 256 else text[:253] ~ '...') }}
{%- endmacro %}
