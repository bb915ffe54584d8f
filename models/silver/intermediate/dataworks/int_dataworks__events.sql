{{ config(unique_key='event_key') }}

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
    -- Copies of one event's message may differ (a producer that resends with other values):
    -- each field comes from the earliest landed copy that has it, as the outcome model counts
    -- that copy as the one applied, so every build picks the same whatever the order it reads.
    select
        usable.event_key,
        case
            when bool_or(usable.operation_code like 'UPDATE%') then 'UPDATE'
            else min_by(usable.operation_code, struct(usable.ingested_at, usable.message_id))
        end as operation_code,
        min_by(usable.source_connector, struct(usable.ingested_at, usable.message_id)) as source_connector,
        min_by(usable.source_database, struct(usable.ingested_at, usable.message_id)) as source_database,
        min_by(usable.source_schema, struct(usable.ingested_at, usable.message_id)) as source_schema,
        min_by(usable.source_table, struct(usable.ingested_at, usable.message_id)) as source_table,
        min_by(usable.table_id, struct(usable.ingested_at, usable.message_id)) as table_id,
        min_by(usable.sequence_id, struct(usable.ingested_at, usable.message_id)) as sequence_id,
        max(usable.sequence) as sequence,
        max(usable.commit_ts) as commit_ts,
        min_by(usable.key_columns, struct(usable.ingested_at, usable.message_id)) as key_columns,
        min_by(
            usable.before_image,
            case when usable.before_image is not null then struct(usable.ingested_at, usable.message_id) end
        ) as before_image,
        min_by(
            usable.after_image,
            case when usable.after_image is not null then struct(usable.ingested_at, usable.message_id) end
        ) as after_image,
        max_by(usable.source_columns, struct(usable.ingested_at, usable.message_id)) as source_columns,
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
