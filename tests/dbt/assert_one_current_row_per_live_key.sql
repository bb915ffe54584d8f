-- gold.cdc_current holds exactly the keys whose current history version is
-- not deleted, with that version's image. Returns the differences.

with

expected as (
    select
        key_hash,
        change_id
    from {{ ref('cdc_history') }}
    where is_current and not is_deleted
),

actual as (
    select
        key_hash,
        change_id
    from {{ ref('cdc_current') }}
),

final as (
    (
        select * from expected
        except
        select * from actual
    )
    union all
    (
        select * from actual
        except
        select * from expected
    )
)

select * from final
