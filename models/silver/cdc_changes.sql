{{ config(unique_key='change_id') }}

{#-
  One row per source row change, across all producers (CONTRACT §4). Each
  producer contributes one staging branch in the same shape; quarantined
  events stay out (see cdc_quarantine).
-#}

{%- set producer_changes = [ref('int_ces__changes')] %}

with

unioned as (
    {% for changes in producer_changes -%}
        select * from {{ changes }}
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
