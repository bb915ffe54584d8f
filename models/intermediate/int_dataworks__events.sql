{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='event_key',
        on_schema_change='fail',
    )
}}

{#-
  DataWorks row changes (and truncates) as logical events: one per table and
  `sequenceId`. An update sent as a pair (UPDATE_BEFOR with the old image,
  UPDATE_AFTER with the new one, possibly landed in different runs) is
  complete only when both images are there; one UPDATE_AFTER carrying both
  images is complete on its own. Incremental: a run regroups only the events
  that received a message.
-#}

with

usable as (
    select *
    from {{ ref('stg_dataworks__messages') }}
    where quarantine_reason is null and (message_kind = 'row' or operation_code = 'TRUNCATE')
),

touched as (
    select distinct event_key
    from usable
    where {{ staged_after(ref('stg_dataworks__messages'), last_staged_at()) }}
),

grouped as (
    select
        usable.event_key,
        case when bool_or(usable.operation_code like 'UPDATE%') then 'UPDATE' else first(usable.operation_code) end
            as operation_code,
        first(usable.source_connector) as source_connector,
        first(usable.source_database) as source_database,
        first(usable.source_schema) as source_schema,
        first(usable.source_table) as source_table,
        first(usable.table_id) as table_id,
        first(usable.sequence_id) as sequence_id,
        max(usable.sequence) as sequence,
        max(usable.commit_ts) as commit_ts,
        first(usable.key_columns) as key_columns,
        first(usable.before_image, true) as before_image,
        first(usable.after_image, true) as after_image,
        max_by(usable.source_columns, usable.ingested_at) as source_columns,
        count(*) as messages_received,
        max(usable.ingested_at) as ingested_at
    from usable
    left semi join touched on usable.event_key = touched.event_key
    group by usable.event_key
),

final as (
    select
        *,
        operation_code <> 'UPDATE' or (before_image is not null and after_image is not null) as is_complete,
        current_timestamp() as staged_at
    from grouped
)

select * from final
