{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='table_id',
        on_schema_change='fail',
        pre_hook="{{ create_typed_relations() }}",
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
  Incremental: a run merges the rows whose definition changed.
-#}

-- depends_on: {{ ref('cdc_current') }}, {{ ref('cdc_history') }}

select defined.*
from (
    {{ typed_relation_definitions() }}
) as defined
{%- if is_incremental() %}
left anti join {{ this }} as recorded
    on defined.table_id = recorded.table_id and defined.fingerprint = recorded.fingerprint
{%- endif %}
