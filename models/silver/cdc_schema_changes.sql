{{ config(materialized='view') }}

{#-
  Schema-change log: the DDL the producers report (DataWorks CREATE, ALTER,
  TRUNCATE, RENAME, ERASE, index changes…; the schema change events of
  Debezium's MySQL and MariaDB connectors, whose initial snapshot reports
  each table as DROP TABLE IF EXISTS then CREATE TABLE) with its text, and each Qlik
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

debezium as (
    select
        message_id,
        'debezium' as source_format,
        case when source_table is not null then table_id end as table_id,
        ddl_operation,
        ddl_text,
        commit_ts,
        {#- A snapshot's DDL shares one binlog position: the offset keeps it in order. -#}
        concat_ws(':', source_position, lpad(cast(source_offset as string), 20, '0')) as sequence,
        ingested_at
    from {{ ref('stg_debezium__messages') }}
    where message_kind = 'schema_change' and quarantine_reason is null
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
    select * from debezium
    union all
    select * from qlik
)

select * from final
