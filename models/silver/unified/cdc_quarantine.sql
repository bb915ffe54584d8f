{{ config(materialized='view') }}

{#-
  Every message that cannot become a change, with a reason a person can act
  on (docs/contract.md, "silver.cdc_quarantine"). `quarantined_at` is when the message was landed, the
  moment it entered the platform and was first found unusable. A view, like
  cdc_message_outcomes. A message of a file landed with `land --force` although the file did not
  look like its --format's (header x-cdc-looks-like) says so in its reason.
-#}

with

outcomes as (
    select * from {{ ref('cdc_message_outcomes') }}
    where outcome = 'quarantined'
),

messages as (
    select * from {{ ref('stg_landed__messages') }}
),

final as (
    select
        outcomes.message_id,
        outcomes.source_format,
        concat(
            outcomes.detail,
            {#- A file land refused and --force landed anyway (python_ingest/input_check.py). -#}
            case
                when messages.headers['x-cdc-looks-like'] = 'not text'
                    then ' It was landed with land --force, although its file is not text.'
                when messages.headers['x-cdc-looks-like'] is not null
                    then concat(
                            ' It was landed with land --force as ', outcomes.source_format,
                            ', although its file looks like ', messages.headers['x-cdc-looks-like'],
                            "'s messages: land it with --format ", messages.headers['x-cdc-looks-like'], '.'
                        )
                else ''
            end
        ) as reason,
        messages.message_value,
        messages.ingested_at as quarantined_at
    from outcomes
    inner join messages
        on
            outcomes.source_format = messages.source_format
            and outcomes.message_id = messages.message_id
)

select * from final
