{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='table_id',
        on_schema_change='fail',
        pre_hook="{{ create_typed_relations() }}",
        post_hook="{{ record_typed_relations_inputs() }}",
    )
}}

{#-
  The typed relations of every source table (docs/contract.md, "Typed tables"): one row per table
  of silver.cdc_table_columns with the names of its live-row and history relations in gold and
  their columns. A table published as a dbt model (scaffold) has that model; for every other
  table, the pre-hook (macro create_typed_relations) has made two views before this model
  records their definitions: gold.<relation_name> over gold.cdc_current and
  gold.<history_relation_name> over gold.cdc_history. A table that gains a column gains it in its
  views at the next build; a column the source dropped stays, null from then on.
  Incremental: a run merges the rows whose definition changed; a build that changes no
  definition leaves the model idle (macro typed_relations_unchanged), with no hook and no snapshot.
-#}
{%- do mark_typed_relations_idle() %}

-- depends_on: {{ ref('cdc_current') }}, {{ ref('cdc_history') }}

{{ typed_changed_definitions(this if is_incremental() else none) }}
