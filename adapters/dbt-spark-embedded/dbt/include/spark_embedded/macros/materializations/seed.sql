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
    {%- set existing = fingerprinted_relation('seed', fingerprint) -%}
    {%- if existing is not none -%}
        {#- dbt's seed task reads the CSV's rows from this result. -#}
        {%- do store_result('agate_table', response='OK', agate_table=load_agate_table()) -%}
        {{ return(leave_unchanged(existing, 'seed', fingerprint)) }}
    {%- endif -%}
    {%- set result = materialization_seed_default() -%}
    {%- do keep_fingerprint('seed', fingerprint) -%}
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

