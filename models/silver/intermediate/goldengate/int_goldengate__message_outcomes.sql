{{ config(unique_key='message_id') }}

{#-
  What became of every distinct GoldenGate message: change (a row change or a
  truncate), duplicate (a redelivered copy of an operation already received:
  same table and pos), control (a JSON schema document of the schema topic,
  kept in silver.cdc_schema_changes) or quarantined, with the reason.
  Incremental: a run decides the messages staged since its last run, reading
  the changes of those messages only.
  Both reads, and the merge's read of this table, are bounded by the
  landing time of the earliest message they decide (macros
  touched_landed_since, bound_merge_target), so Iceberg skips the files
  landed before.
-#}

{%- set since = last_staged_at() %}
{%- set landed_since = touched_landed_since(ref('stg_goldengate__messages'), since, ref('int_goldengate__changes')) %}
{%- do bound_merge_target('ingested_at', landed_since) %}

{%- set schema_detail -%}
    concat(
        'JSON schema of ', {{ shown("messages.table_id") }},
        ': kept in silver.cdc_schema_changes; later operations carry its columns.'
    )
{%- endset %}
{%- set no_change_detail -%}
    'The operation became no change.'
{%- endset %}

with

{{ touched_messages(ref('stg_goldengate__messages'), since, revisited=ref('int_goldengate__changes')) }}

messages as (
    select messages.*
    from {{ ref('stg_goldengate__messages') }} as messages
    {{ only_touched('messages', landed_since=landed_since) }}
),

changes as (
    select
        goldengate_changes.message_id,
        {#- A key change is two changes of one message: it is a change if either part is. -#}
        max_by(
            goldengate_changes.change_id, struct(not goldengate_changes.is_duplicate, goldengate_changes.change_id)
        ) as change_id,
        bool_and(goldengate_changes.is_duplicate) as is_duplicate,
        first(goldengate_changes.quarantine_reason, true) as quarantine_reason
    from {{ ref('int_goldengate__changes') }} as goldengate_changes
    {{ only_touched('goldengate_changes', landed_since=landed_since) }}
    group by goldengate_changes.message_id
),

final as (
    select
        {{ message_outcome('goldengate', [
            {'when': "messages.message_kind = 'schema'", 'outcome': 'control', 'detail': schema_detail},
            {'when': 'changes.message_id is null', 'outcome': 'quarantined', 'detail': no_change_detail},
        ]) | indent(8) }}
    from messages
    left join changes on messages.message_id = changes.message_id
)

select * from final
