{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        merge_keep_existing=true,
        unique_key='change_id',
        on_schema_change='fail',
        test_scope_bound='ingested_at',
        post_hook="{{ record_read_positions(producer_refs('int_{}__changes')) }}",
    )
}}

{#-
  One row per source row change, across all producers (docs/contract.md, "silver.cdc_changes"). Each
  producer contributes one staging branch in the same shape; quarantined
  events stay out (see cdc_quarantine). Incremental: from each branch, a run
  merges the rows of the data files committed since its last run; how far
  it has read each branch is kept in its table properties
  (`cdc.read.<branch>`, see new_rows_of), so the contract's columns stay
  exactly as specified (no processing time here). Every branch inserts each
  row once and never updates it, and a row that reaches this model again
  (after a branch's --full-refresh) is not inserted twice. So the rows a
  build commits were landed after those of earlier builds, as a rule:
  `ingested_at` bounds the build's files below, and its data tests read
  them without the older files (config test_scope_bound, macro test_scope_of).
  It bounds the merge's lookup of the keys it holds too (macro
  bound_merge_target, with the smallest ingested_at of the branches' new
  files, new_rows_of_each): a change reaches this model again only from its
  first landed copy, never landed before the row it repeats, so a row it
  matches was landed no earlier than the earliest new row.
-#}

{#- One branch per producer of the registry, as in the post-hook (which renders apart from this body).
    What each branch has new: one query over their metadata for all of them. -#}
{%- set producer_changes = producer_refs('int_{}__changes') %}
{%- set reads = new_rows_of_each(producer_changes, 'staged_at', landed=true) %}
{%- set new_rows = {} %}
{%- for changes in producer_changes %}
    {%- do new_rows.update({changes.identifier: reads[changes.identifier].sql}) %}
{%- endfor %}
{%- set change_columns = [
    'change_id', 'source_format', 'source_connector', 'source_database', 'source_schema', 'source_table',
    'table_id', 'operation', 'commit_ts', 'sequence', 'transaction_id', 'primary_key', 'before', 'after',
    'changed_columns', 'ingested_at',
] %}

{%- set applied = 'quarantine_reason is null and not is_duplicate' %}
{%- if is_incremental() %}
    {#- The earliest new row's landing time bounds the merge's read of this table: no later than
        the smallest ingested_at in the branches' new files, which their statistics tell without a
        query; else (a branch read whole, or a file without statistics) a query finds it. -#}
    {%- set landed = reads.values() | map(attribute='landed_since') | list %}
    {%- if landed and none not in landed %}
        {%- do bound_merge_target('ingested_at', landed | min) %}
    {%- else %}
        {%- set branches = [] %}
        {%- for rows in new_rows.values() %}
            {%- do branches.append('select ingested_at from (' ~ rows ~ ') as new_rows where ' ~ applied) %}
        {%- endfor %}
        {%- do bound_merge_by_landing(branches | join(' union all ')) %}
    {%- endif %}
{%- endif %}

with

{% for changes in producer_changes -%}
    {{ changes.identifier }} as (
        select
            {{ change_columns | join(',\n            ') }}
        from ({{ new_rows[changes.identifier] }}) as new_rows
        where {{ applied }}
    ),

{% endfor -%}
final as (
    {% for changes in producer_changes -%}
        select * from {{ changes.identifier }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from final
