{{ config(materialized='view') }}

{#-
  Schema-change log: the DDL the producers report (DataWorks CREATE, ALTER,
  TRUNCATE, RENAME, ERASE, index changes…) with its text, per table in
  commit order. Columns added by an ALTER appear in the rows of later
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

final as (
    select * from dataworks
)

select * from final
