{#-
  Print a short summary of the lakehouse: every table of the bronze, silver
  and gold schemas with its row count (gold first, since that is what analysts
  query). Used by the main job: `dbt run-operation lakehouse_summary`.
-#}
{% macro lakehouse_summary(schemas=['gold', 'silver', 'bronze']) %}
    {%- if execute -%}
        {%- for schema_name in schemas -%}
            {%- set relations = adapter.list_relations_without_caching(api.Relation.create(schema=schema_name)) | sort(attribute='identifier') -%}
            {{ print('') }}
            {{ print(schema_name ~ ': ' ~ (relations | length) ~ ' table(s)' ~ ('' if relations else ' (none yet)')) }}
            {%- for relation in relations -%}
                {%- set counted = run_query('select count(*) as n from ' ~ relation) -%}
                {{ print('  ' ~ '%-40s' | format(relation.identifier) ~ '%12d rows' | format(counted.columns[0].values()[0])) }}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}
