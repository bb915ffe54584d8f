{#- Rebuilt whole (insert_overwrite), but only by a build in which something it reads changed. -#}
{{ config(materialized='incremental', incremental_strategy='insert_overwrite', on_schema_change='fail') }}

{#-
  How current each producer's data is, per source table: the newest commit
  time seen, when its latest change and its latest message of any kind were
  landed, its latest heartbeat, and how many of its messages are pending or
  quarantined. Measured when the model is built (`measured_at`); a build
  leaves it as it is while nothing it reads has changed (an idle model,
  the adapter's idle_models.sql), so measured_at is then older. A producer
  that has sent messages but no usable change yet has one row with a null
  table_id. The test warn_when_a_producer_goes_quiet warns from it.
-#}

with

changes as (
    select
        source_format,
        table_id,
        max(commit_ts) as last_commit_ts,
        max(ingested_at) as last_change_ingested_at,
        count(*) as changes
    from {{ ref('cdc_changes') }}
    group by source_format, table_id
),

messages as (
    select
        source_format,
        max(ingested_at) as last_message_ingested_at
    from {{ ref('stg_landed__messages') }}
    where source_format <> 'unknown'
    group by source_format
),

heartbeats as (
    select
        source_format,
        max(coalesce(commit_ts, ingested_at)) as last_heartbeat_at
    from {{ ref('cdc_control_events') }}
    where control_type in ('mheartbeat', 'heartbeat')
    group by source_format
),

outcomes as (
    select
        source_format,
        count_if(outcome = 'pending') as messages_pending,
        count_if(outcome = 'quarantined') as messages_quarantined
    from {{ ref('cdc_message_outcomes') }}
    group by source_format
),

final as (
    select
        messages.source_format,
        changes.table_id,
        changes.last_commit_ts,
        changes.last_change_ingested_at,
        messages.last_message_ingested_at,
        heartbeats.last_heartbeat_at,
        coalesce(changes.changes, 0) as changes,
        coalesce(outcomes.messages_pending, 0) as producer_messages_pending,
        coalesce(outcomes.messages_quarantined, 0) as producer_messages_quarantined,
        cast(
            unix_timestamp(current_timestamp()) - unix_timestamp(messages.last_message_ingested_at) as bigint
        ) as seconds_since_last_message,
        cast(unix_timestamp(current_timestamp()) - unix_timestamp(changes.last_commit_ts) as bigint)
            as seconds_since_last_commit,
        current_timestamp() as measured_at
    from messages
    left join changes on messages.source_format = changes.source_format
    left join heartbeats on messages.source_format = heartbeats.source_format
    left join outcomes on messages.source_format = outcomes.source_format
)

select * from final
