{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        merge_keep_existing=true,
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

{%- set producer_changes = [
    ref('int_ces__changes'), ref('int_debezium__changes'), ref('int_dataworks__changes'), ref('int_qlik__changes'),
] %}
{%- set change_columns = [
    'change_id', 'source_format', 'source_connector', 'source_database', 'source_schema', 'source_table',
    'table_id', 'operation', 'commit_ts', 'sequence', 'transaction_id', 'primary_key', 'before', 'after',
    'changed_columns', 'ingested_at',
] %}

with

{% for changes in producer_changes -%}
    {{ changes.identifier }} as (
        select
            {{ change_columns | join(',\n            ') }}
        from {{ changes }}
        where
            quarantine_reason is null
            and not is_duplicate
            and staged_at > {{
                consumed_staged_at(changes, ['change_id'], 'quarantine_reason is null and not is_duplicate')
            }}
    ),

{% endfor -%}
final as (
    {% for changes in producer_changes -%}
        select * from {{ changes.identifier }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from final
