{#-
  Each Qlik Replicate table version (int_qlik__table_versions) with its
  columns, as a schema change of its table: Qlik's branch of
  silver.cdc_schema_changes.
-#}
{% macro qlik_schema_changes() %}
    select
        message_id,
        'qlik' as source_format,
        table_id,
        'TABLE_VERSION' as ddl_operation,
        concat(
            'tableVersion ', coalesce(cast(table_version as string), '?'), ' (schemaId ', schema_id, '): ',
            array_join(
                transform(
                    table_columns,
                    c -> concat(
                        c.column_name, ' ', c.source_type,
                        case when c.key_position > 0 then concat(' key#', c.key_position) else '' end
                    )
                ),
                ', '
            )
        ) as ddl_text,
        metadata_ts as commit_ts,
        lpad(cast(table_version as string), 10, '0') as sequence,
        ingested_at
    from {{ ref('int_qlik__table_versions') }}
{% endmacro %}
