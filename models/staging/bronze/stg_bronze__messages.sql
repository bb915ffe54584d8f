{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
    )
}}

{#-
  Every distinct bronze message once, across the four producer tables: the
  first landed copy of each (source_format, message_id). An incremental run
  reads only landing batches it has not seen yet.
-#}

{%- set source_formats = ['ces', 'debezium', 'dataworks', 'qlik'] %}
{%- set bronze_columns = [
    'message_id', 'source_uri', 'source_partition', 'source_offset', 'message_key',
    'message_value', 'headers', 'enqueued_at', 'ingested_at', 'ingest_batch_id',
] %}

with

{% for source_format in source_formats -%}
    landed_{{ source_format }} as (
        select
            '{{ source_format }}' as source_format,
            {{ bronze_columns | join(',\n            ') }}
        from {{ source('bronze', 'raw_' ~ source_format) }}
    ),

{% endfor -%}
landed as (
    {% for source_format in source_formats -%}
        select * from landed_{{ source_format }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

{% if is_incremental() -%}
    seen_batches as (
        select distinct
            source_format,
            ingest_batch_id
        from {{ this }}
    ),

    new_messages as (
        select landed.*
        from landed
        left anti join seen_batches
            on
                landed.source_format = seen_batches.source_format
                and landed.ingest_batch_id = seen_batches.ingest_batch_id
        left anti join {{ this }} as known
            on
                landed.source_format = known.source_format
                and landed.message_id = known.message_id
    ),
{%- else -%}
    new_messages as (
        select * from landed
    ),
{%- endif %}

first_copies as (
    select
        *,
        row_number() over (
            partition by source_format, message_id
            order by ingested_at, ingest_batch_id, source_uri, source_offset
        ) as copy_number
    from new_messages
),

final as (
    select
        source_format,
        {{ bronze_columns | join(',\n        ') }}
    from first_copies
    where copy_number = 1
)

select * from final
