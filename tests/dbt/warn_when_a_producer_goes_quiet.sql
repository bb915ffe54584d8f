{{ config(severity='warn') }}

{#-
  Warns (does not fail the build) when a producer has landed nothing for
  longer than `producer_quiet_after_hours` (dbt var, default 24): the
  source, the connector or the landing job may have stopped.
-#}

select
    source_format,
    max(seconds_since_last_message) as seconds_since_last_message
from {{ ref('cdc_producer_freshness') }}
group by source_format
having max(seconds_since_last_message) > {{ var('producer_quiet_after_hours', 24) }} * 3600
