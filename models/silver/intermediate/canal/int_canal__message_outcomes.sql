{{ config(unique_key='message_id') }}

{#-
  What became of every distinct Canal message: change (its rows became
  changes), duplicate (a redelivered copy of a message already applied),
  control (DDL other than TRUNCATE: kept in silver.cdc_schema_changes) or
  quarantined, with the reason. Incremental: a run decides the messages
  staged since its last run, reading the changes of those messages only.
  Both reads, and the merge's read of this table, are bounded by the
  landing time of the earliest message they decide (macros
  touched_landed_since, bound_merge_target), so Iceberg skips the files
  landed before.
-#}

{%- set since = last_staged_at() %}
{%- set landed_since = touched_landed_since(ref('stg_canal__messages'), since, ref('int_canal__changes')) %}
{%- do bound_merge_target('ingested_at', landed_since) %}

{%- set ddl_detail -%}
    concat({{ shown("messages.operation_code") }}, ' (DDL), kept in silver.cdc_schema_changes.')
{%- endset %}
{%- set change_detail -%}
    concat(
        'Change ', changes.change_id,
        case when changes.change_count > 1 then concat(' and ', changes.change_count - 1, ' more') else '' end,
        '.'
    )
{%- endset %}

with

{{ touched_messages(ref('stg_canal__messages'), since, revisited=ref('int_canal__changes')) }}

messages as (
    select messages.*
    from {{ ref('stg_canal__messages') }} as messages
    {{ only_touched('messages', landed_since=landed_since) }}
),

changes as (
    select
        canal_changes.message_id,
        min_by(canal_changes.change_id, struct(canal_changes.row_index, canal_changes.operation)) as change_id,
        count(*) as change_count,
        bool_and(canal_changes.is_duplicate) as is_duplicate,
        max(canal_changes.quarantine_reason) as quarantine_reason
    from {{ ref('int_canal__changes') }} as canal_changes
    {{ only_touched('canal_changes', landed_since=landed_since) }}
    group by canal_changes.message_id
),

final as (
    select
        {{ message_outcome(
            'canal',
            [
                {
                    'when': "messages.message_kind = 'ddl' and messages.operation_code <> 'TRUNCATE'",
                    'outcome': 'control', 'detail': ddl_detail,
                },
            ],
            change_detail=change_detail,
        ) | indent(8) }}
    from messages
    left join changes on messages.message_id = changes.message_id
)

select * from final
