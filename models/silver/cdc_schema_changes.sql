{{ config(materialized='view') }}

{#-
  Schema-change log: the DDL the producers report (DataWorks CREATE, ALTER,
  TRUNCATE, RENAME, ERASE, index changes…) with its text, and each Qlik
  Replicate table version (a metadata message: a new one follows a DDL
  change on the source) with its columns, per table in commit order. Columns added by an ALTER appear in the rows of later
  changes and in cdc_table_columns. A view over the staging tables.
-#}

with

dataworks as (
    select
        message_id,
        'dataworks' as source_format,
        table_id,
        operation_code as ddl_operation,
        ddl_text,
        commit_ts,
        sequence,
        ingested_at
    from {{ ref('stg_dataworks__messages') }}
    where message_kind = 'ddl' and quarantine_reason is null
),

qlik as (
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
),

final as (
    select * from dataworks
    union all
    select * from qlik
)

select * from final
