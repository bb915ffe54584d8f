-- gold.cdc_history is a consistent SCD2: per key, version numbers are 1..n
-- without gaps, exactly the last version is current, each valid_to is the next
-- version's valid_from (so periods neither overlap nor leave gaps), no period
-- is inverted, and only the last version is open. Returns offending versions.
-- On an incremental build, the keys the build wrote (every version of each:
-- macro cdc_test_rows); on a full refresh or with cdc_test_scope=all, all.

with

versions as (
    select
        *,
        lead(valid_from) over (partition by key_hash order by version_number) as next_valid_from,
        row_number() over (partition by key_hash order by version_number) as position,
        count(*) over (partition by key_hash) as versions_of_key
    from {{ cdc_test_rows(ref('cdc_history'), ['key_hash']) }} as history
),

final as (
    select *
    from versions
    where
        version_number <> position
        or is_current <> (position = versions_of_key)
        or not (valid_to <=> next_valid_from)
        or valid_to < valid_from
)

select * from final
