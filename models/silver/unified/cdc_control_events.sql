{{ config(materialized='view') }}

{#-
  Messages that are not row changes but say something about the stream:
  Debezium tombstones (Kafka compaction markers after deletes), logical
  decoding messages (PostgreSQL pg_logical_emit_message: prefix and
  content), transaction markers (BEGIN / END on `<prefix>.transaction`) and
  schema history records (the connector's own DDL log), DataWorks
  heartbeats (MHEARTBEAT) and transaction markers.
  Each is `control` in cdc_message_outcomes. A view over the
  producers' incremental staging tables.
-#}

{#- A union: one branch per producer of the registry that has a `<producer>_control_events` macro. #}
{{ union_producer_steps('control_events') }}
