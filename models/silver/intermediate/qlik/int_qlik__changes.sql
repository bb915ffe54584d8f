{{ config(merge_keep_existing=true, unique_key=['message_id', 'operation']) }}

{#-
  Qlik Replicate data messages resolved against their table's metadata and
  turned into row changes in the unified silver shape. A data message finds
  its table version by `messageSchemaId` (or `headers.externalSchemaId`) =
  the metadata's `schemaId`, else by its `schema` / `table` (the latest
  version, if it has every column of the row: else a newer version is still
  on its way). Until that metadata has arrived the message is pending and
  has no row here; the run in which the metadata arrives applies it. With the
  metadata: the key columns (`primaryKeyPosition`), the column names behind
  the mask ordinals, and each column's type for decoding values. A column
  whose `columnMask` bit is clear was not sent and is left out of the
  images (gold keeps its previous value); `changed_columns` come from
  `changeMask`. REFRESH rows (full load) are snapshots ordered before all
  CDC changes of the table; CDC rows are ordered by `changeSequence`. An
  update that changes the key is a delete of the old key and an insert of
  the new one. Incremental: a run resolves the data messages staged since
  its last run and those whose metadata arrived since; each message is
  resolved once. When no metadata arrived since, only the data messages
  staged since are read (Iceberg prunes the older files); otherwise every
  data message is checked against the new metadata.
-#}

{%- set since = last_staged_at() %}
{%- set new_versions = staged_after(ref('int_qlik__table_versions'), since, 'versions') %}
{%- set metadata_arrived = is_incremental() and new_versions != 'false' %}

with

data_messages as (
    select *
    from {{ ref('stg_qlik__messages') }}
    where message_kind = 'data' and quarantine_reason is null
),

versions as (
    select * from {{ ref('int_qlik__table_versions') }}
),

ranked_versions as (
    select
        *,
        row_number() over (
            partition by table_id order by table_version desc, metadata_ts desc, schema_id desc
        ) as version_rank
    from versions
),

latest_versions as (
    select * from ranked_versions
    where version_rank = 1
),

addressed as (
    select
        *,
        lower(concat_ws('.', nullif(source_schema, ''), nullif(source_table, ''))) as named_table_id
    from data_messages
),

candidates as (
    -- The data messages staged since the last run and, when metadata arrived
    -- since, the older ones it addresses; less those already resolved.
    select addressed.*
    from addressed
    {% if is_incremental() -%}
        left anti join {{ this }} as resolved on addressed.message_id = resolved.message_id
    {%- endif %}
    where
        {{ staged_after(ref('stg_qlik__messages'), since, 'addressed') }}
        or (
            -- false (and folded away, so older files are pruned) unless metadata arrived
            {{ 'true' if metadata_arrived else 'false' }}
            and exists (
                select 1 from versions
                where
                    {{ new_versions }}
                    and (
                        addressed.referenced_schema_id = versions.schema_id
                        or (addressed.referenced_schema_id is null and addressed.named_table_id = versions.table_id)
                    )
            )
        )
),

resolved as (
    select
        candidates.message_id,
        candidates.operation_code,
        candidates.change_sequence,
        candidates.change_ts,
        candidates.stream_position,
        candidates.transaction_id,
        candidates.transaction_event_counter,
        candidates.transaction_last_event,
        candidates.change_mask,
        candidates.column_mask,
        candidates.data_raw,
        candidates.before_raw,
        candidates.ingested_at,
        coalesce(by_id.schema_id, by_table.schema_id) as schema_id,
        coalesce(by_id.table_id, by_table.table_id) as table_id,
        coalesce(by_id.source_schema, by_table.source_schema) as metadata_schema,
        coalesce(by_id.source_table, by_table.source_table) as metadata_table,
        coalesce(by_id.table_version, by_table.table_version) as table_version,
        coalesce(by_id.metadata_ts, by_table.metadata_ts) as metadata_ts,
        coalesce(by_id.key_columns, by_table.key_columns) as key_columns,
        coalesce(by_id.column_names, by_table.column_names) as column_names,
        coalesce(by_id.column_types, by_table.column_types) as column_types,
        coalesce(by_id.column_scales, by_table.column_scales) as column_scales
    from candidates
    left join versions as by_id on candidates.referenced_schema_id = by_id.schema_id
    left join latest_versions as by_table
        on candidates.referenced_schema_id is null and candidates.named_table_id = by_table.table_id
    where
        by_id.schema_id is not null
        or (
            -- Found by name: only with a version that has every column of the row (a newer
            -- version's metadata may still be on its way); until then the message is pending.
            by_table.schema_id is not null
            and size(
                {{ qlik_unknown_columns('candidates.data_raw', 'candidates.before_raw', 'by_table.column_names') }}
            ) = 0
        )
),

masked as (
    select
        *,
        {{ change_mask_ordinals('column_mask') }} as sent_ordinals,
        {{ change_mask_ordinals('change_mask') }} as changed_ordinals,
        map_zip_with(column_types, column_scales, (column_name, source_type, scale) -> struct(source_type, scale))
            as column_specs
    from resolved
),

imaged as (
    select
        *,
        {{ mask_columns('sent_ordinals', 'column_names') }} as sent_columns,
        {{ mask_columns('changed_ordinals', 'column_names') }} as masked_changed_columns
    from masked
),

{%- set column_spec_type = 'struct<source_type: string, scale: int>' %}
{%- set value_text = qlik_value_text('image_value', 'lookup_value.source_type', 'lookup_value.scale') %}

decoded as (
    select
        *,
        {#- A column whose columnMask bit is clear was not sent: left out of the images. -#}
        {{ map_join(
            'case when column_mask is null then data_raw else ' ~ map_keep_keys('data_raw', 'sent_columns') ~ ' end',
            'column_specs', column_spec_type, value_text
        ) }} as data_image,
        {{ map_join(
            'case when column_mask is null then before_raw else ' ~ map_keep_keys('before_raw', 'sent_columns') ~ ' end',
            'column_specs', column_spec_type, value_text
        ) }} as before_data_image
    from imaged
),

keyed as (
    select
        *,
        transform(key_columns, k -> data_image[k]) as data_key,
        transform(key_columns, k -> before_data_image[k]) as before_key
    from decoded
),

expanded as (
    select
        keyed.*,
        change.operation,
        change.image as key_image
    from keyed
        {{ explode_changes(
            [['REFRESH', 'snapshot', 'data_image'], ['INSERT', 'insert', 'data_image'],
                ['DELETE', 'delete', 'data_image']],
            key_kept='before_data_image is null or size(key_columns) = 0 '
                ~ 'or exists(before_key, v -> v is null) or before_key = data_key',
            before_image='before_data_image', after_image='data_image'
        ) | indent(8) }}
),

identified as (
    select
        *,
        {{ map_of('key_columns', 'map_item', 'key_image[map_item]') }} as primary_key,
        case when operation_code = 'REFRESH' then '0' else '1' end
        || ':'
        || case
            when operation_code = 'REFRESH' then lpad(cast(table_version as string), 10, '0')
            else lpad(change_sequence, 35, '0')
        end as sequence
    from expanded
),

changes as (
    select
        *,
        sha2(
            concat_ws(
                '|', 'qlik', table_id, operation, sequence, to_json(array_sort(map_entries(primary_key))),
                {#- Two full loads of one table version differ only by their rows. -#}
                case when operation = 'snapshot' then to_json(array_sort(map_entries(data_image))) end
            ),
            256
        ) as change_id
    from identified
),

{{ change_copies('changes') }}

final as (
    select
        copies.message_id,
        copies.change_id,
        'qlik' as source_format,
        cast(null as string) as source_connector,
        cast(null as string) as source_database,
        copies.metadata_schema as source_schema,
        copies.metadata_table as source_table,
        copies.table_id,
        copies.operation,
        case
            when copies.operation_code = 'REFRESH' then coalesce(copies.metadata_ts, copies.ingested_at)
            else copies.change_ts
        end as commit_ts,
        copies.sequence,
        copies.transaction_id,
        copies.primary_key,
        case
            when copies.operation = 'delete' then copies.key_image
            when copies.operation = 'update' then copies.before_data_image
        end as before,
        case when copies.operation <> 'delete' then copies.key_image end as after,
        case
            when copies.operation = 'delete' then null
            when copies.operation_code = 'UPDATE' and copies.operation = 'insert'
                then array_sort(map_keys(copies.key_image))
            when copies.change_mask is not null then copies.masked_changed_columns
            when copies.operation in ('insert', 'snapshot') then array_sort(map_keys(copies.key_image))
            when copies.before_data_image is not null
                then {{ changed_keys('copies.before_data_image', 'copies.key_image') }}
        end as changed_columns,
        copies.ingested_at,
        copies.operation_code,
        copies.schema_id,
        copies.table_version,
        copies.change_sequence,
        copies.stream_position,
        copies.transaction_event_counter,
        copies.transaction_last_event,
        copies.is_duplicate,
        case
            when size(copies.sent_ordinals) > size(copies.sent_columns)
                then concat(
                        'The columnMask sets the bit of ordinal ', element_at(copies.sent_ordinals, -1),
                        ', but table version ', copies.table_version, ' of ', {{ shown("copies.table_id") }}, ' has ',
                        size(copies.column_names), ' column(s).'
                    )
            when size(copies.changed_ordinals) > size(copies.masked_changed_columns)
                then concat(
                        'The changeMask sets the bit of ordinal ', element_at(copies.changed_ordinals, -1),
                        ', but table version ', copies.table_version, ' of ', {{ shown("copies.table_id") }}, ' has ',
                        size(copies.column_names), ' column(s).'
                    )
            when size(copies.key_columns) = 0
                then concat(
                        'The metadata of ', {{ shown("copies.table_id") }}, ' (table version ', copies.table_version,
                        ') marks no primary-key column (primaryKeyPosition): its rows cannot be told apart.'
                    )
            when exists(map_values(copies.primary_key), v -> v is null)
                then concat(
                        'A key column (', array_join(copies.key_columns, ', '), ') of ', copies.table_id,
                        ' has no value in the row image.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from copies
)

select * from final
