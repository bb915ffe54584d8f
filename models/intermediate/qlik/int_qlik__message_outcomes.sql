{{ config(unique_key='message_id') }}

{#-
  What became of every distinct Qlik Replicate message: change, duplicate (a
  redelivered copy of a change or of a metadata message already received),
  control (a metadata message: it goes to the table-version registry),
  pending (a data message whose table metadata has not arrived yet) or
  quarantined, with the reason. Incremental: a run decides the messages
  staged since its last run and revisits pending ones resolved since then,
  reading the changes of those messages only.
-#}

{%- set since = last_staged_at() %}
{%- set unknown_columns = qlik_unknown_columns(
    'messages.data_raw', 'messages.before_raw', 'latest_versions.latest.column_names'
) %}

with

{% if is_incremental() -%}
    touched as (
        select message_id
        from {{ ref('stg_qlik__messages') }}
        where {{ staged_after(ref('stg_qlik__messages'), since) }}
        union
        select message_id
        from {{ ref('int_qlik__changes') }}
        where {{ staged_after(ref('int_qlik__changes'), since) }}
    ),
{%- endif %}

messages as (
    select messages.*
    from {{ ref('stg_qlik__messages') }} as messages
    {% if is_incremental() -%}
        left semi join touched on messages.message_id = touched.message_id
    {%- endif %}
),

changes as (
    select
        qlik_changes.message_id,
        {#- A key change is two changes of one message: it is a change if either part is. -#}
        max_by(qlik_changes.change_id, struct(not qlik_changes.is_duplicate, qlik_changes.change_id)) as change_id,
        bool_and(qlik_changes.is_duplicate) as is_duplicate,
        first(qlik_changes.quarantine_reason, true) as quarantine_reason
    from {{ ref('int_qlik__changes') }} as qlik_changes
    {% if is_incremental() -%}
        left semi join touched on qlik_changes.message_id = touched.message_id
    {%- endif %}
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
        messages.message_id,
        'qlik' as source_format,
        case
            when messages.quarantine_reason is not null then 'quarantined'
            when messages.message_kind = 'metadata' and versions.message_id = messages.message_id then 'control'
            when messages.message_kind = 'metadata' then 'duplicate'
            when changes.message_id is null then 'pending'
            when changes.quarantine_reason is not null then 'quarantined'
            when changes.is_duplicate then 'duplicate'
            else 'change'
        end as outcome,
        case
            when messages.quarantine_reason is not null then messages.quarantine_reason
            when messages.message_kind = 'metadata' and versions.message_id = messages.message_id
                then concat(
                        'Metadata of ', {{ shown("versions.table_id") }},
                        ' table version ', coalesce(versions.table_version, '?'),
                        ' (schemaId ', {{ shown("messages.schema_id") }}, '): kept in the table-version registry.'
                    )
            when messages.message_kind = 'metadata'
                then concat(
                        'A redelivered copy of the metadata message with schemaId ',
                        {{ shown("messages.schema_id") }}, '.'
                    )
            when
                changes.message_id is null and latest_versions.table_id is not null
                and size({{ unknown_columns }}) > 0
                then concat(
                        'Waiting for the metadata of ',
                        concat_ws(
                            '.', nullif({{ shown("messages.source_schema") }}, ''), {{ shown("messages.source_table") }}
                        ),
                        ' with column(s) ', array_join({{ unknown_columns }}, ', '),
                        ', which its latest table version (',
                        latest_versions.latest.table_version, ') does not have: the data message is applied once ',
                        'that table structure has arrived.'
                    )
            when changes.message_id is null
                then concat(
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
            when changes.quarantine_reason is not null then changes.quarantine_reason
            when changes.is_duplicate then concat('A redelivered copy of change ', changes.change_id, '.')
            else concat('Change ', changes.change_id, '.')
        end as detail,
        messages.ingested_at,
        current_timestamp() as staged_at
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
