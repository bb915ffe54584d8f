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

{#- A union: one branch per producer of the registry that has a `<producer>_schema_changes` macro. #}
{{ union_producer_steps('schema_changes') }}
