{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
        partition_by=['source_format'],
        tblproperties={
            'format-version': '2',
            'write.delete.mode': 'merge-on-read',
            'write.update.mode': 'merge-on-read',
            'write.merge.mode': 'merge-on-read',
            'write.spark.fanout.enabled': 'true',
            'write.distribution-mode': 'none',
        },
    )
}}

{#-
  Every distinct bronze message once, across the bronze tables: the
  first landed copy of each (source_format, message_id). Bronze tables are
  append-only Iceberg tables, so an incremental run reads only the data files
  committed after the newest one it already read (by Iceberg data sequence
  number, which orders commits exactly, however landing runs overlap).

  Partitioned by source_format: each staging model reads one format's
  messages (`source_format = '<format>'`), so Iceberg prunes the other
  formats' files instead of every staging model reading and decompressing
  every message. The deduplication has already distributed the rows by
  (source_format, message_id), so the table's writes skip Iceberg's
  own shuffle by partition (`write.distribution-mode` none) and keep one open
  file per format in each task (`write.spark.fanout.enabled`). A model-level
  `tblproperties` replaces the project's list (dbt_project.yml), so that list
  is repeated here.
-#}

{#- One branch per bronze table: the registry's producers, then raw_unknown. -#}
{%- set source_formats = bronze_formats() %}
{%- set bronze_columns = [
    'message_id', 'source_uri', 'source_partition', 'source_offset', 'message_key',
    'message_value', 'headers', 'enqueued_at', 'ingested_at', 'ingest_batch_id',
] %}

{%- set reads = bronze_new_files(source_formats) %}

with

{% for source_format in source_formats -%}
    files_{{ source_format }} as (
        select
            data_file.file_path,
            sequence_number
        from {{ source('bronze', 'raw_' ~ source_format) }}.entries
        where status <> 2 and sequence_number > {{ reads[source_format].after_sequence }}
    ),

    landed_{{ source_format }} as (
        select
            '{{ source_format }}' as source_format,
            {% for column in bronze_columns -%}
                landed.{{ column }},
            {% endfor -%}
            files_{{ source_format }}.sequence_number as bronze_sequence_number
        from {{ source('bronze', 'raw_' ~ source_format) }} as landed
        inner join files_{{ source_format }} on landed._file = files_{{ source_format }}.file_path
        where
            {{ reads[source_format].has_new_files }}
            and landed.ingested_at >= {{ reads[source_format].landed_since }}
    ),

{% endfor -%}
landed as (
    {% for source_format in source_formats -%}
        select * from landed_{{ source_format }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

{% if is_incremental() -%}
    new_messages as (
        select landed.*
        from landed
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
            order by bronze_sequence_number, ingested_at, ingest_batch_id, source_uri, source_offset
        ) as copy_number
    from new_messages
),

final as (
    select
        source_format,
        {{ bronze_columns | join(',\n        ') }},
        bronze_sequence_number,
        current_timestamp() as staged_at
    from first_copies
    where copy_number = 1
)

select * from final
