{#-
  Qlik Replicate's rows of silver.cdc_table_columns (the producer step `column_facts` of
  macros/platform/producer_registry.sql): the columns of each table version in
  int_qlik__table_versions staged after `since`, ordered by table version.
-#}
{% macro qlik_column_facts(since) %}
    select
        versions.table_id,
        source_column.column_name,
        struct(lpad(cast(versions.table_version as string), 10, '0') as sequence, versions.schema_id as change_id)
            as seen_order,
        lpad(cast(versions.table_version as string), 10, '0') as sequence,
        versions.schema_id as change_id,
        source_column.ordinal,
        source_column.source_type,
        source_column.spark_type,
        source_column.is_primary_key,
        coalesce(versions.metadata_ts, versions.ingested_at) as first_seen_at,
        coalesce(versions.metadata_ts, versions.ingested_at) as last_seen_at
    from {{ ref('int_qlik__table_versions') }} as versions
        lateral view explode(versions.source_columns) as source_column
    where {{ staged_after(ref('int_qlik__table_versions'), since, 'versions') }}
{% endmacro %}
