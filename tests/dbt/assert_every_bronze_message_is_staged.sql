-- Nothing lost between bronze and silver: every distinct message of the four
-- bronze tables is in stg_bronze__messages. Returns the missing ones.
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

final as (
    select landed.*
    from landed
    left anti join {{ ref('stg_bronze__messages') }} as staged
        on
            landed.source_format = staged.source_format
            and landed.message_id = staged.message_id
)

select * from final
