{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='change_id',
        on_schema_change='fail',
    )
}}

{#-
  One row per source row change, across all producers (CONTRACT §4). Each
  producer contributes one staging branch in the same shape; quarantined
  events stay out (see cdc_quarantine). Incremental: from each branch, a run
  merges the rows staged after the newest branch row already here; the
  contract's columns stay exactly as specified (no processing time here).
-#}

{%- set producer_changes = [ref('int_ces__changes')] %}

with

unioned as (
    {% for changes in producer_changes -%}
        select * from {{ changes }}
        {% if is_incremental() -%}
            where staged_at > {{ consumed_staged_at(changes, ['change_id']) }}
        {%- endif %}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

final as (
    select
        change_id,
        source_format,
        source_connector,
        source_database,
        source_schema,
        source_table,
        table_id,
        operation,
        commit_ts,
        sequence,
        transaction_id,
        primary_key,
        before,
        after,
        changed_columns,
        ingested_at
    from unioned
    where quarantine_reason is null
)

select * from final
