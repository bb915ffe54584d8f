-- Nothing lost or invented between bronze and silver: every distinct message
-- of the bronze tables is staged (stg_bronze__messages) and has exactly one
-- outcome (cdc_message_outcomes), and every staged message and every outcome
-- belongs to a landed message. Returns the messages that break this, with
-- where each was found.
--
-- One test for the whole path rather than one per step: it depends on
-- cdc_message_outcomes, so `dbt build` runs it once silver is built, and the
-- scan of every bronze table does not hold back the models after staging.
{%- set source_formats = ['ces', 'debezium', 'dataworks', 'qlik', 'unknown'] %}

with

landed as (
    {% for source_format in source_formats -%}
        select distinct
            '{{ source_format }}' as source_format,
            message_id
        from {{ source('bronze', 'raw_' ~ source_format) }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

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

landed_and_staged as (
    select
        coalesce(landed.source_format, staged.source_format) as source_format,
        coalesce(landed.message_id, staged.message_id) as message_id,
        landed.message_id is not null as is_landed,
        staged.message_id is not null as is_staged
    from landed
    full outer join staged
        on
            landed.source_format = staged.source_format
            and landed.message_id = staged.message_id
),

final as (
    select
        coalesce(landed_and_staged.source_format, outcomes.source_format) as source_format,
        coalesce(landed_and_staged.message_id, outcomes.message_id) as message_id,
        coalesce(landed_and_staged.is_landed, false) as is_landed,
        coalesce(landed_and_staged.is_staged, false) as is_staged,
        coalesce(outcomes.n_outcomes, 0) as n_outcomes
    from landed_and_staged
    full outer join outcomes
        on
            landed_and_staged.source_format = outcomes.source_format
            and landed_and_staged.message_id = outcomes.message_id
)

select * from final
where not is_landed or not is_staged or n_outcomes <> 1
