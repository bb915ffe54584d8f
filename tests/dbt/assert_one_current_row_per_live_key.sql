-- gold.cdc_current holds exactly the keys whose current history version is
-- not deleted, with that version's image. Returns the differences: each
-- (key_hash, change_id) in one and not the other. On an incremental build,
-- for the keys the build wrote (macro cdc_test_rows), from both tables; on a
-- full refresh or with cdc_test_scope=all, for every key.
--
-- The history's rows in scope and the current rows are grouped by key in one
-- pass, and each key's change ids compared: each reference to a CTE would be
-- computed again in Spark, each time reading the history again.
{%- set current_scope = none %}
{%- if not cdc_tests_whole() %}
    {#- The keys with a history row the build wrote: `false` when it wrote none (then Spark is
        not asked at all: the test materialization), none when it wrote the whole table. #}
    {%- set written = cdc_test_scope_condition(ref('cdc_history'), tested_node(ref('cdc_history'))) %}
    {%- if written is not none %}
        {%- set current_scope = 'false' if written == 'false' else keys_in_scope(['key_hash'], ref('cdc_history'), written) %}
    {%- endif %}
    {%- do record_test_scope(tested_node(ref('cdc_current')), current_scope) %}
{%- endif %}

with

history as (
    select * from {{ cdc_test_rows(ref('cdc_history'), ['key_hash']) }}
),

current_rows as (
    select * from {{ ref('cdc_current') }}
    {%- if current_scope is not none %}
        where {{ current_scope }}
    {%- endif %}
),

rows_by_side as (
    -- Every key in scope once from the history, with the change of its live current version
    -- (none when it has none), and every current row of those keys.
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
    from current_rows
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
