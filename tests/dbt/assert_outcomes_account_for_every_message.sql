-- Every distinct bronze message has exactly one outcome, and every outcome
-- belongs to a bronze message. Returns the messages that break this.

with

staged as (
    select
        source_format,
        message_id
    from {{ ref('stg_bronze__messages') }}
),

outcomes as (
    select
        source_format,
        message_id,
        count(*) as n_outcomes
    from {{ ref('cdc_message_outcomes') }}
    group by source_format, message_id
),

final as (
    select
        coalesce(staged.source_format, outcomes.source_format) as source_format,
        coalesce(staged.message_id, outcomes.message_id) as message_id,
        coalesce(outcomes.n_outcomes, 0) as n_outcomes
    from staged
    full outer join outcomes
        on
            staged.source_format = outcomes.source_format
            and staged.message_id = outcomes.message_id
    where staged.message_id is null or outcomes.n_outcomes is null or outcomes.n_outcomes <> 1
)

select * from final
