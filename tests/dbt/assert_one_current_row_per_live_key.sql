-- gold.cdc_current holds exactly the keys whose current history version is
-- not deleted, with that version's image. Returns the differences: each
-- (key_hash, change_id) in one and not the other. On an incremental build,
-- for the keys the build wrote (macro cdc_test_rows); on a full refresh or
-- with cdc_test_scope=all, for every key.
--
-- One pass over each: the history's rows in scope and the current rows are
-- grouped by key together, and each key's two sets of change ids compared
-- (a reference to a CTE is computed again at each reference in Spark, and
-- each computation would read the history again).

with

history as (
    select * from {{ cdc_test_rows(ref('cdc_history'), ['key_hash']) }}
),

rows_by_side as (
    -- Every key in scope once from the history, with the change of its live current version
    -- (none when it has none), and every current row.
    select
        key_hash,
        true as is_expected,
        case when is_current and not is_deleted then named_struct('change_id', change_id) end as change
    from history
    union all
    select
        key_hash,
        false as is_expected,
        named_struct('change_id', change_id) as change
    from {{ ref('cdc_current') }}
),

per_key as (
    select
        key_hash,
        bool_or(is_expected) as is_in_scope,
        collect_set(case when is_expected then change end) as expected,
        collect_set(case when not is_expected then change end) as actual
    from rows_by_side
    group by key_hash
),

differences as (
    select
        key_hash,
        explode(array_union(array_except(expected, actual), array_except(actual, expected))) as difference
    from per_key
    {%- if not cdc_tests_whole() %}
        where is_in_scope
    {%- endif %}
),

final as (
    select
        key_hash,
        difference.change_id
    from differences
)

select * from final
