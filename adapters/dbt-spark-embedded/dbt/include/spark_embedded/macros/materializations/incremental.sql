{#-
  dbt-spark's incremental materialization, except that an idle model
  (idle_models.sql beside this folder) is left as it is. dbt lets a Python job be submitted only by the
  materialization itself (its macro stack one deep), so for a Python model
  the steps of dbt-spark's materialization are taken here: create the table
  (first build, full refresh), or write the model's rows to a temporary
  table, check the schema (on_schema_change) and merge them in.
-#}
{% materialization incremental, adapter='spark_embedded', supported_languages=['sql', 'python'] %}
    {%- if model_is_idle() -%}
        {{ return(leave_idle_model()) }}
    {%- endif -%}
    {%- if model.language != 'python' -%}
        {{ return(materialization_incremental_spark()) }}
    {%- endif -%}
    {%- set strategy = dbt_spark_validate_get_incremental_strategy(
        config.get('incremental_strategy') or 'append', dbt_spark_validate_get_file_format(config.get('file_format', 'parquet'))
    ) -%}
    {%- set existing = load_relation(this) -%}
    {{ run_hooks(pre_hooks) }}
    {%- if existing is none or should_full_refresh() -%}
        {%- if existing is not none -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- call statement('main', language='python') -%}
            {{ create_table_as(False, this, compiled_code, 'python') }}
        {%- endcall -%}
        {%- do persist_constraints(this, model) -%}
    {%- else -%}
        {%- set staged = this.incorporate(path={'identifier': this.identifier ~ '__dbt_tmp'}) -%}
        {%- call statement('create_tmp_relation', language='python') -%}
            {{ create_table_as(True, staged, compiled_code, 'python') }}
        {%- endcall -%}
        {%- do process_schema_changes(
            incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore'), staged, existing
        ) -%}
        {%- call statement('main') -%}
            {{ dbt_spark_get_incremental_sql(
                strategy, staged, this, existing, config.get('unique_key'),
                config.get('predicates') or config.get('incremental_predicates')
            ) }}
        {%- endcall -%}
        {%- call statement('drop_relation') -%}
            drop table if exists {{ staged }}
        {%- endcall -%}
    {%- endif -%}
    {%- do persist_docs(this, model) -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [this]}) }}
{% endmaterialization %}
