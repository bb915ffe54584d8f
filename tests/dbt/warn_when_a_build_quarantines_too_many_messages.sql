{{ config(
    severity=var('cdc_quarantined_share_severity', 'warn'),
    fail_calc='coalesce(sum(quarantined), 0)',
    warn_if='>0',
    error_if='>0',
) }}

{#-
  Warns when more than `cdc_max_quarantined_share` (dbt var, default 0.01: 1 %) of the messages a
  build decided were quarantined, per producer; its count is the number of quarantined messages.
  Set the var `cdc_quarantined_share_severity` to `error` to fail the build instead. Which
  messages: on an incremental build those the build staged (docs/testing.md, scoped data tests),
  on a full refresh, with cdc_test_scope=all and on a `dbt test` on its own every message. The
  reasons are in silver.cdc_quarantine; the build's report lists the most frequent
  (macros/platform/run_report.sql).
-#}

{%- set start = none if cdc_tests_whole() else cdc_test_scope_start() %}

select
    source_format,
    count(*) as messages,
    count_if(outcome = 'quarantined') as quarantined
from ({{ run_outcome_rows(producer_refs('int_{}__message_outcomes'), start) }}) as decided
group by source_format
having count_if(outcome = 'quarantined') > count(*) * {{ quarantine_threshold() }}
