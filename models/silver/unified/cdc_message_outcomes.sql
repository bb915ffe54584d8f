{{ config(materialized='view') }}

{#-
  What became of every distinct bronze message, one row each (docs/contract.md, "silver.cdc_message_outcomes"):
  change, control, duplicate, quarantined or pending. The counts add up to
  the number of distinct bronze messages. Messages of a format that no
  staging branch parses yet are accounted for as quarantined, with that reason.
  A view over the producers' incremental outcome tables: always exactly as
  current as they are, at no cost to build.
-#}

{#- One branch per producer of the registry. -#}
{%- set producer_outcomes = producer_refs('int_{}__message_outcomes') %}

with

unioned as (
    {% for outcomes in producer_outcomes -%}
        select
            message_id,
            source_format,
            outcome,
            detail
        from {{ outcomes }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

unparsed as (
    select
        message_id,
        source_format,
        'quarantined' as outcome,
        case
            when source_format = 'unknown'
                then concat(
                        'land --format auto recognised no producer in this message (none of: ',
                        '{{ cdc_producers() | map(attribute="title") | join("; ") | replace("'", "") }}); ',  -- noqa: LT05
                        'it is kept in bronze.raw_unknown. Land it with the right --format if it belongs to one.'
                    )
            else concat('No parser for the ', source_format, ' format is built yet; the message is kept in bronze.')
        end as detail
    from {{ ref('stg_landed__messages') }}
    where source_format not in ('{{ cdc_producer_names() | join("', '") }}')  -- noqa: LT05
),

final as (
    select * from unioned
    union all
    select * from unparsed
)

select * from final
