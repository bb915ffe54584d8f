{#-
  Print a short summary of the lakehouse: every table of the gold, silver and
  bronze schemas with its row count (gold first, since that is what analysts
  query). Used by the main job: `dbt run-operation lakehouse_summary`.
-#}
{% macro lakehouse_summary(schemas=['gold', 'silver', 'bronze']) %}
    {%- if execute -%}
        {%- set existing = run_query('show databases').columns[0].values() | map('lower') | list -%}
        {%- for schema_name in schemas -%}
            {%- set tables = [] -%}
            {%- if schema_name in existing -%}
                {%- set listed = run_query('show tables in ' ~ schema_name) -%}
                {%- for row in listed.rows if not row['isTemporary'] -%}
                    {%- do tables.append(row['tableName']) -%}
                {%- endfor -%}
            {%- endif -%}
            {{ print('') }}
            {{ print(schema_name ~ ': ' ~ (tables | length) ~ ' table(s)' ~ ('' if tables else ' (none yet)')) }}
            {%- for table_name in tables | sort -%}
                {%- set counted = run_query('select count(*) from ' ~ schema_name ~ '.' ~ table_name) -%}
                {{ print('  %-40s %12d rows' | format(table_name, counted.columns[0].values()[0])) }}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}
