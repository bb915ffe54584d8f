{{ config(materialized='view') }}

{#-
  The live rows: the current version of every key that is not deleted
  (docs/contract.md, "gold.cdc_current"). A view over gold.cdc_history, so it is exactly as current
  as the history and costs nothing to build.
-#}

with

history as (
    select * from {{ ref('cdc_history') }}
),

final as (
    select
        table_id,
        primary_key,
        key_hash,
        row_data,
        valid_from,
        change_id
    from history
    where is_current and not is_deleted
)

select * from final
