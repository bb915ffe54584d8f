{#-
  Relations left as they are when what they are built from has not changed
  (the seed and view materializations: materializations/seed.sql, view.sql).
  The relation keeps an MD5 of what it was built from in its property
  `dbt.<kind>_fingerprint`; a build compares it with the model's.
-#}

{% macro fingerprinted_relation(kind, fingerprint) -%}
    {#-
      The existing relation of the node being built when it is of `kind`
      (`seed`: a table, `view`: a view), holds `fingerprint` and no
      `--full-refresh` is asked for; none otherwise.
    -#}
    {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- if existing is none or should_full_refresh() or not (existing.is_view if kind == 'view' else existing.is_table) -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(existing if iceberg_table_property(existing, 'dbt.' ~ kind ~ '_fingerprint') == fingerprint else none) }}
{%- endmacro %}


{% macro leave_unchanged(relation, kind, fingerprint) -%}
    {#- The materialization's result for a relation left as it is (reported `UNCHANGED`). -#}
    {%- call noop_statement('main', 'UNCHANGED', 'UNCHANGED', 0) -%}
        -- {{ relation }} is already built from this {{ kind }} (dbt.{{ kind }}_fingerprint {{ fingerprint }})
    {%- endcall -%}
    {{ return({'relations': [relation]}) }}
{%- endmacro %}


{% macro keep_fingerprint(kind, fingerprint) -%}
    {#- Records `fingerprint` in the relation just built (`this`). -#}
    {%- do run_query(
        'alter ' ~ ('view' if kind == 'view' else 'table') ~ ' ' ~ this
        ~ " set tblproperties ('dbt." ~ kind ~ "_fingerprint' = '" ~ fingerprint ~ "')"
    ) -%}
{%- endmacro %}
