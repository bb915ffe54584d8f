{#-
  Seeds for the spark_embedded adapter: dbt's seed materialization, except
  that a seed whose table already holds the current CSV is left as it is.
  dbt reloads every seed at every `dbt build` (on Spark: drop, create and
  insert, three Iceberg commits and about 7 s each), although the CSVs of
  this project (per-table settings, declared columns) change rarely.

  The table keeps a fingerprint of what it was loaded from in the table
  property `dbt.seed_fingerprint` (seed_fingerprint: the CSV's checksum and
  the seed's load config). A seed is reloaded when the fingerprint differs
  or is missing, when its table is missing, and on `--full-refresh`.
-#}
{% materialization seed, adapter='spark_embedded' %}
    {%- set fingerprint = seed_fingerprint(model) -%}
    {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- if old_relation is not none and old_relation.is_table and not should_full_refresh()
        and iceberg_table_property(old_relation, 'dbt.seed_fingerprint') == fingerprint -%}
        {#- dbt's seed task reads the CSV's rows from this result. -#}
        {%- do store_result('agate_table', response='OK', agate_table=load_agate_table()) -%}
        {%- call noop_statement('main', 'UNCHANGED', 'UNCHANGED', 0) -%}
            -- {{ old_relation }} already holds this seed's CSV (dbt.seed_fingerprint {{ fingerprint }})
        {%- endcall -%}
        {{ return({'relations': [old_relation]}) }}
    {%- endif -%}
    {%- set result = materialization_seed_default() -%}
    {%- do run_query(
        'alter table ' ~ this ~ " set tblproperties ('dbt.seed_fingerprint' = '" ~ fingerprint ~ "')"
    ) -%}
    {{ return(result) }}
{% endmaterialization %}


{#- What a seed's table is loaded from: an MD5 of the CSV's checksum and the config that shapes the load. -#}
{% macro seed_fingerprint(seed) -%}
    {%- set load_config = {
        'column_types': seed.config.get('column_types') or {},
        'quote_columns': seed.config.get('quote_columns'),
        'delimiter': seed.config.get('delimiter'),
    } -%}
    {{ return(local_md5(seed.checksum.checksum ~ '|' ~ tojson(load_config, sort_keys=true))) }}
{%- endmacro %}

