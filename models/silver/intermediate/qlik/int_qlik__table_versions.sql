{{ config(unique_key='schema_id') }}

{#-
  Qlik Replicate table-version registry: one row per metadata message's
  `schemaId` (a table structure version; a DDL change on the source makes a
  new one with a higher `tableVersion`). It gives data messages their table,
  their key columns (by `primaryKeyPosition`), the names behind the mask
  ordinals and the column types, and it feeds silver.cdc_table_columns. A
  redelivered metadata message changes nothing. Incremental: a run adds the
  schemaIds first seen since its last run.
-#}

with

metadata as (
    select *
    from {{ ref('stg_qlik__messages') }}
    where
        message_kind = 'metadata'
        and quarantine_reason is null
        and {{ staged_after(ref('stg_qlik__messages'), last_staged_at()) }}
),

first_copies as (
    select
        *,
        {{ copy_number('schema_id') }} as copy_number
    from metadata
    {% if is_incremental() -%}
        where schema_id not in (select held.schema_id from {{ this }} as held)
    {%- endif %}
),

final as (
    select
        schema_id,
        replicate_server,
        replicate_task,
        source_schema,
        source_table,
        lower(concat_ws('.', nullif(source_schema, ''), nullif(source_table, ''))) as table_id,
        table_version,
        metadata_ts,
        table_columns,
        transform(
            array_sort(filter(table_columns, c -> c.key_position > 0), (l, r) -> l.key_position - r.key_position),
            c -> c.column_name
        ) as key_columns,
        {{ map_of('table_columns', 'map_item.ordinal', 'map_item.column_name') }} as column_names,
        {{ map_of('table_columns', 'map_item.column_name', 'map_item.source_type') }} as column_types,
        {{ map_of('table_columns', 'map_item.column_name', 'map_item.scale') }} as column_scales,
        transform(
            table_columns,
            c -> struct(
                c.column_name as column_name,
                c.ordinal as ordinal,
                c.source_type as source_type,
                {{ qlik_spark_type('c.source_type', 'c.precision', 'c.scale') | indent(16) }} as spark_type,
                c.key_position > 0 as is_primary_key
            )
        ) as source_columns,
        message_id,
        ingested_at,
        current_timestamp() as staged_at
    from first_copies
    where copy_number = 1
)

select * from final
