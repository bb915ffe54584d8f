{{ config(severity='warn') }}

{#-
  Warns (does not fail the build) when a producer has landed nothing for
  longer than `producer_quiet_after_hours` (dbt var, default 24): the
  source, the connector or the landing job may have stopped. Measured now,
  from the newest landing time: the model is rebuilt only when something
  new arrives (an idle model), so its own seconds can be older.
-#}

select
    source_format,
    cast(
        unix_timestamp(current_timestamp()) - unix_timestamp(max(last_message_ingested_at)) as bigint
    ) as seconds_since_last_message
from {{ ref('cdc_producer_freshness') }}
group by source_format
having seconds_since_last_message > {{ var('producer_quiet_after_hours', 24) }} * 3600
