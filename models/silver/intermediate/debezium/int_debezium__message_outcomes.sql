{{ config(unique_key='message_id') }}

{#-
  What became of every distinct Debezium message: change, duplicate (a
  redelivered copy of a change already received), control (a tombstone, a
  logical decoding message, a transaction marker, a schema change event or
  a schema history record) or quarantined, with the reason. A row change
  not decoded yet is pending: the Python model int_debezium__decoded runs in
  session targets only, so a build through the SQL endpoint (`--target
  thrift --exclude tag:python`) leaves it for the next local build.
  Incremental: a run decides the messages staged since its last run, and the
  pending ones again. Their decoded changes were staged after them, so it
  reads only the changes staged since then, and those of the pending ones.
  Both reads are bounded so that Iceberg skips the older files: by staged_at,
  and, while some message is pending, by the landing time of the oldest
  pending one (its rows upstream carry the same ingested_at). The merge's
  read of this table is bounded by the landing time of the earliest message
  it decides (macro bound_merge_target).
-#}

{%- set since = last_staged_at() %}
{%- set oldest_pending = none %}
{%- if is_incremental() and not model_is_idle() %}
    {%- set oldest_pending = query_scalar(
        "select cast(min(ingested_at) as string) from " ~ this ~ " where outcome = 'pending'"
    ) %}
{%- endif %}
{%- set pending_ids = 'select still_pending.message_id from still_pending' %}
{#- The merge meets this table's rows of the new messages and of the pending ones. -#}
{%- set landed_since = touched_landed_since(ref('stg_debezium__messages'), since, ref('int_debezium__changes')) %}
{%- set decided_since = [landed_since, oldest_pending] | reject('none') | min if landed_since else none %}
{%- do bound_merge_target('ingested_at', decided_since) %}

{%- set tombstone_detail -%}
    concat(
        'Tombstone (null value) for key ', coalesce({{ shown("messages.key_text") }}, '(none)'),
        ': Kafka log compaction marker after a delete, not a change of its own.'
    )
{%- endset %}
{%- set logical_message_detail -%}
    concat(
        "Logical decoding message with prefix '", coalesce({{ shown("messages.message_prefix") }}, ''),
        "': kept in silver.cdc_control_events."
    )
{%- endset %}
{%- set transaction_detail -%}
    concat(
        'Transaction marker ', coalesce({{ shown("messages.transaction_status") }}, ''),
        ' of transaction ', coalesce({{ shown("messages.transaction_id") }}, '(none)'),
        ' (provide.transaction.metadata): kept in silver.cdc_control_events.'
    )
{%- endset %}
{%- set schema_change_detail -%}
    concat(
        'Schema change event (', coalesce({{ shown("messages.ddl_operation") }}, 'DDL'),
        '): kept in silver.cdc_schema_changes; the row images of later changes carry the new columns.'
    )
{%- endset %}
{%- set schema_history_detail -%}
    concat(
        "A record of the connector's own schema history topic ",
        '(schema.history.internal.kafka.topic), not a change: kept in silver.cdc_control_events. ',
        'Landing that topic is not needed; the schema change topic reports the same DDL.'
    )
{%- endset %}
{%- set not_decoded_detail -%}
    concat(
        'Not decoded yet: the Python model int_debezium__decoded has not run since the ',
        'message was staged (it runs in session targets, e.g. `dbt build` with the local target).'
    )
{%- endset %}

with

{% if oldest_pending is not none -%}
    still_pending as (
        select message_id from {{ this }}
        where outcome = 'pending'
    ),
{%- endif %}

messages as (
    {{ new_or_held(
        ref('stg_debezium__messages'), staged_after(ref('stg_debezium__messages'), since), pending_ids, oldest_pending
    ) }}
),

changes as (
    {{ new_or_held(
        ref('int_debezium__changes'), staged_after(ref('int_debezium__changes'), since), pending_ids, oldest_pending
    ) }}
),

final as (
    select
        {{ message_outcome('debezium', [
            {'when': "messages.message_kind = 'tombstone'", 'outcome': 'control', 'detail': tombstone_detail},
            {
                'when': "messages.message_kind = 'logical_message'",
                'outcome': 'control', 'detail': logical_message_detail,
            },
            {'when': "messages.message_kind = 'transaction'", 'outcome': 'control', 'detail': transaction_detail},
            {
                'when': "messages.message_kind = 'schema_change'",
                'outcome': 'control', 'detail': schema_change_detail,
            },
            {
                'when': "messages.message_kind = 'schema_history'",
                'outcome': 'control', 'detail': schema_history_detail,
            },
            {'when': 'changes.message_id is null', 'outcome': 'pending', 'detail': not_decoded_detail},
        ]) | indent(8) }}
    from messages
    left join changes on messages.message_id = changes.message_id
)

select * from final
