{{ config(unique_key='message_id') }}

{#-
  What became of every distinct Qlik Replicate message: change, duplicate (a
  redelivered copy of a change or of a metadata message already received),
  control (a metadata message: it goes to the table-version registry),
  pending (a data message whose table metadata has not arrived yet) or
  quarantined, with the reason. Incremental: a run decides the messages
  staged since its last run and revisits pending ones resolved since then,
  reading the changes of those messages only.
  Both reads, and the merge's read of this table, are bounded by the
  landing time of the earliest message they decide (macros
  touched_landed_since, bound_merge_target), so Iceberg skips the files
  landed before.
-#}

{%- set since = last_staged_at() %}
{%- set landed_since = touched_landed_since(ref('stg_qlik__messages'), since, ref('int_qlik__changes')) %}
{%- do bound_merge_target('ingested_at', landed_since) %}
{%- set unknown_columns = qlik_unknown_columns(
    'messages.data_raw', 'messages.before_raw', 'latest_versions.latest.column_names'
) %}

{%- set metadata_applied = "messages.message_kind = 'metadata' and versions.message_id = messages.message_id" %}
{%- set metadata_detail -%}
    concat(
        'Metadata of ', {{ shown("versions.table_id") }},
        ' table version ', coalesce(versions.table_version, '?'),
        ' (schemaId ', {{ shown("messages.schema_id") }}, '): kept in the table-version registry.'
    )
{%- endset %}
{%- set metadata_copy_detail -%}
    concat(
        'A redelivered copy of the metadata message with schemaId ',
        {{ shown("messages.schema_id") }}, '.'
    )
{%- endset %}
{#- A data message found by its table's name, whose latest table version lacks a column of the row. -#}
{%- set waiting_for_version -%}
    changes.message_id is null and latest_versions.table_id is not null
    and size({{ unknown_columns }}) > 0
{%- endset %}
{%- set waiting_for_version_detail -%}
    concat(
        'Waiting for the metadata of ',
        concat_ws(
            '.', nullif({{ shown("messages.source_schema") }}, ''), {{ shown("messages.source_table") }}
        ),
        ' with column(s) ', array_join({{ unknown_columns }}, ', '),
        ', which its latest table version (',
        latest_versions.latest.table_version, ') does not have: the data message is applied once ',
        'that table structure has arrived.'
    )
{%- endset %}
{%- set waiting_detail -%}
    concat(
        'Waiting for the metadata of ',
        case
            when messages.referenced_schema_id is not null
                then concat('schemaId ', {{ shown("messages.referenced_schema_id") }})
            else concat_ws(
                    '.',
                    nullif({{ shown("messages.source_schema") }}, ''),
                    {{ shown("messages.source_table") }}
                )
        end,
        ': the data message is applied once its table structure has arrived.'
    )
{%- endset %}

with

{{ touched_messages(ref('stg_qlik__messages'), since, revisited=ref('int_qlik__changes')) }}

messages as (
    select messages.*
    from {{ ref('stg_qlik__messages') }} as messages
    {{ only_touched('messages', landed_since=landed_since) }}
),

changes as (
    select
        qlik_changes.message_id,
        {#- A key change is two changes of one message: it is a change if either part is. -#}
        max_by(qlik_changes.change_id, struct(not qlik_changes.is_duplicate, qlik_changes.change_id)) as change_id,
        bool_and(qlik_changes.is_duplicate) as is_duplicate,
        first(qlik_changes.quarantine_reason, true) as quarantine_reason
    from {{ ref('int_qlik__changes') }} as qlik_changes
    {{ only_touched('qlik_changes', landed_since=landed_since) }}
    group by qlik_changes.message_id
),

versions as (
    select
        schema_id,
        message_id,
        table_id,
        table_version
    from {{ ref('int_qlik__table_versions') }}
),

latest_versions as (
    -- A data message without a schemaId is found by its table's name, in the table's latest version.
    select
        table_id,
        max_by(struct(table_version, column_names), struct(table_version, metadata_ts, schema_id)) as latest
    from {{ ref('int_qlik__table_versions') }}
    group by table_id
),

final as (
    select
        {{ message_outcome('qlik', [
            {'when': metadata_applied, 'outcome': 'control', 'detail': metadata_detail},
            {'when': "messages.message_kind = 'metadata'", 'outcome': 'duplicate', 'detail': metadata_copy_detail},
            {'when': waiting_for_version, 'outcome': 'pending', 'detail': waiting_for_version_detail},
            {'when': 'changes.message_id is null', 'outcome': 'pending', 'detail': waiting_detail},
        ]) | indent(8) }}
    from messages
    left join changes on messages.message_id = changes.message_id
    left join versions on messages.schema_id = versions.schema_id
    left join latest_versions
        on
            messages.referenced_schema_id is null
            and lower(concat_ws('.', nullif(messages.source_schema, ''), nullif(messages.source_table, '')))
            = latest_versions.table_id
)

select * from final
