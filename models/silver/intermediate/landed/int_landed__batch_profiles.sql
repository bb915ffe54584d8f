{{
    config(
        unique_key=['source_format', 'ingest_batch_id'],
        pre_hook="{{ create_cdc_function('cdc_is_json_object') }}",
    )
}}

{#-
  One row per landing batch and producer format: what the batch brought.
  The JSON check is strict (cdc_is_json_object, macros/platform/functions.sql):
  Spark's JSON functions are lenient (single quotes, unquoted field names,
  NaN and trailing text are accepted), while every producer promises RFC 8259
  JSON. Counting messages that are not a JSON object here shows a bad feed at
  the batch level, before silver quarantines the messages one by one.

  Incremental: the batches that got messages staged since the last run are
  profiled again from all their messages and merged, so a batch that was
  still landing when dbt last ran is completed on the next run. Only messages
  landed since the earliest of those batches began are read (a literal bound,
  so Iceberg skips the data files of older batches).
-#}

{%- set since = last_staged_at() %}
{%- set new_rows = staged_after(ref('stg_landed__messages'), since) %}
{%- set landed_since = timestamp_literal('1970-01-01 00:00:00') %}
{%- if is_incremental() and new_rows != 'false' %}
    {#- A touched batch's first message: among its new messages or, for a batch profiled
        before, the profile's ingested_at. #}
    {%- set landed_since = timestamp_literal(query_scalar(
        'select cast(min(least(touched.new_since, held.ingested_at)) as string) from ('
        ~ ' select source_format, ingest_batch_id, min(ingested_at) as new_since'
        ~ ' from ' ~ ref('stg_landed__messages') ~ ' where ' ~ new_rows ~ ' group by 1, 2'
        ~ ') as touched left join ' ~ this ~ ' as held'
        ~ ' on held.source_format = touched.source_format and held.ingest_batch_id = touched.ingest_batch_id'
    )) %}
{%- endif %}

with

{% if is_incremental() -%}
    touched_batches as (
        select distinct
            source_format,
            ingest_batch_id
        from {{ ref('stg_landed__messages') }}
        where {{ new_rows }}
    ),

{% endif -%}
messages as (
    select
        messages.source_format,
        messages.ingest_batch_id,
        messages.ingested_at,
        messages.message_value,
        messages.headers,
        messages.source_uri,
        messages.enqueued_at
    from {{ ref('stg_landed__messages') }} as messages
    {% if is_incremental() -%}
        left semi join touched_batches
            on
                messages.source_format = touched_batches.source_format
                and messages.ingest_batch_id = touched_batches.ingest_batch_id
        where messages.ingested_at >= {{ landed_since }}
    {%- endif %}
),

final as (
    select
        source_format,
        ingest_batch_id,
        min(ingested_at) as ingested_at,
        count(*) as messages,
        count_if(message_value is null) as tombstones,
        count_if(headers['x-cdc-encoding'] is not null) as not_utf8,
        count_if(headers['x-cdc-ingest-error'] is not null) as malformed_container,
        count_if(
            message_value is not null
            and headers['x-cdc-encoding'] is null
            and not cdc_is_json_object(message_value)
        ) as not_json_object,
        count(distinct source_uri) as sources,
        min(enqueued_at) as first_enqueued_at,
        max(enqueued_at) as last_enqueued_at,
        current_timestamp() as staged_at
    from messages
    group by source_format, ingest_batch_id
)

select * from final
