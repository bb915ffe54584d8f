{{ config(materialized='view') }}

{#-
  Every message that cannot become a change, with a reason a person can act
  on (docs/contract.md, "silver.cdc_quarantine"). `quarantined_at` is when the message was landed, the
  moment it entered the platform and was first found unusable. A view, like
  cdc_message_outcomes.
-#}

with

outcomes as (
    select * from {{ ref('cdc_message_outcomes') }}
    where outcome = 'quarantined'
),

messages as (
    select * from {{ ref('stg_bronze__messages') }}
),

final as (
    select
        outcomes.message_id,
        outcomes.source_format,
        outcomes.detail as reason,
        messages.message_value,
        messages.ingested_at as quarantined_at
    from outcomes
    inner join messages
        on
            outcomes.source_format = messages.source_format
            and outcomes.message_id = messages.message_id
)

select * from final
