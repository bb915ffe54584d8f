-- gold.cdc_current holds exactly the keys whose current history version is
-- not deleted, with that version's image. Returns the differences. On an
-- incremental build, for the keys the build wrote (macro cdc_test_rows); on
-- a full refresh or with cdc_test_scope=all, for every key.

with

history as (
    select * from {{ cdc_test_rows(ref('cdc_history'), ['key_hash']) }}
),

expected as (
    select
        key_hash,
        change_id
    from history
    where is_current and not is_deleted
),

actual as (
    select
        key_hash,
        change_id
    from {{ ref('cdc_current') }}
    {%- if not cdc_tests_whole() %}
        where key_hash in (select history.key_hash from history)
    {%- endif %}
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
