-- Nothing lost or invented between bronze and silver: every distinct message
-- of the bronze tables is staged (stg_landed__messages) and has exactly one
-- outcome (cdc_message_outcomes), and every staged message and every outcome
-- belongs to a landed message. Returns the messages that break this, with
-- where each was found.
--
-- One test for the whole path rather than one per step: it depends on
-- cdc_message_outcomes, so `dbt build` runs it once silver is built, and the
-- scan of every bronze table does not hold back the models after staging.
--
-- Landing goes on while a build runs (docs/lakehouse.md, "One lakehouse, many
-- processes"), so bronze may hold messages committed after staging read it:
-- the next build stages them. "Landed" is therefore bronze up to what staging
-- has read: the data files committed no later than the newest one staged
-- (Iceberg data sequence numbers grow with every commit, so every file up to
-- that one was committed when staging read it).
--
-- On an incremental build it checks the messages of the bronze data files
-- that build's staging read, the messages it staged and their outcomes
-- (macro cdc_test_rows); an outcome invented for a message outside them is
-- found on a full refresh, with cdc_test_scope=all and by a `dbt test` on
-- its own, which check all.
{%- set source_formats = bronze_formats() %}
{%- set message_key = ['source_format', 'message_id'] %}
{%- set whole = cdc_tests_whole() %}
{%- set start = none if whole else cdc_test_scope_start() %}
{#- Scoped in a build when staging had read something before it (else every row is new
    anyway); a `dbt test` on its own checks everything. #}
{%- set whole = whole or start is none or not bronze_read_positions(start) %}

{#- Nothing staged by this build: then Spark reads no table. #}
{%- set nothing_staged = not whole and query_scalar(
    'select count(*) from ' ~ ref('stg_landed__messages') ~ ' where staged_at >= ' ~ timestamp_literal(start)
) == 0 %}

{#-
  Which data files of each bronze table "landed" reads: those no later than
  the newest one staging has read (Iceberg data sequence numbers), and in a
  scoped build only those committed after what staging had read before the
  build. Both bounds are found before the test's SQL is sent and written
  into it as literals, with the files' smallest ingested_at, so that
  Iceberg skips the older files by their column bounds: one query over
  staging (its rows in scope, or whole) and one over the bronze tables'
  `entries` (macro query_rows). As CTEs they would be computed again at
  each reference: staging read once per bronze table, twice per query. A
  format with no such file reads nothing.
-#}
{%- set in_scope = {} -%}
{%- if execute and not nothing_staged -%}
    {%- set before = {} if whole else bronze_read_positions(start) or {} -%}
    {%- for row in query_rows(
        'select source_format, max(bronze_sequence_number) from '
        ~ (ref('stg_landed__messages') if whole else cdc_test_rows(ref('stg_landed__messages')))
        ~ ' as staged group by source_format'
    ) if row[0] in source_formats and row[1] is not none -%}
        {%- do in_scope.update({row[0]: {'filter': iceberg_new_files_filter(before.get(row[0], -1))
            ~ ' and sequence_number <= ' ~ (row[1] | int)}}) -%}
    {%- endfor -%}
    {%- set files_queries = [] -%}
    {%- for source_format, files in in_scope.items() -%}
        {%- do files_queries.append(
            "select '" ~ source_format ~ "' as source_format, count(*) as files, "
            ~ 'cast(min(readable_metrics.ingested_at.lower_bound) as string) as lower_bound from '
            ~ source('bronze', 'raw_' ~ source_format) ~ '.entries where ' ~ files.filter
        ) -%}
    {%- endfor -%}
    {#- Nothing staged yet (a lakehouse with nothing landed): no query at all. -#}
    {%- if files_queries -%}
        {%- for row in query_rows(files_queries | join(' union all ')) -%}
            {%- do in_scope[row[0]].update({'files': row[1], 'lower_bound': row[2]}) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endif -%}
{#- Each bronze table's rows in scope, as cdc_test_rows selects them (iceberg_files_after): its
    files in scope, bounded below by their smallest ingested_at; false for a table with none. -#}
{%- set landed_scope = {} -%}
{%- for source_format in source_formats -%}
    {%- set files = in_scope.get(source_format, {}) -%}
    {%- set bronze = source('bronze', 'raw_' ~ source_format) -%}
    {%- set scope = 'false' -%}
    {%- if files.get('files', 0) > 0 -%}
        {%- set scope = '_file in (select data_file.file_path from ' ~ bronze ~ '.entries where ' ~ files.filter ~ ')' -%}
        {%- if files.lower_bound is not none -%}
            {%- set scope = iceberg_lower_bound_condition('ingested_at', files.lower_bound) ~ ' and ' ~ scope -%}
        {%- endif -%}
    {%- endif -%}
    {%- do landed_scope.update({source_format: scope}) -%}
    {%- if not whole -%}
        {#- Kept for the test materialization, as cdc_test_rows does. -#}
        {%- do record_test_scope(tested_node(bronze), scope) -%}
    {%- endif -%}
{%- endfor -%}

{%- set landed_ctes -%}
staged_in_scope as (
    select
        source_format,
        message_id,
        bronze_sequence_number
    {#- Whole (a `dbt test` on its own too): the table; scoped: the rows in scope (cdc_test_rows). #}
    from {{ ref('stg_landed__messages') if whole else cdc_test_rows(ref('stg_landed__messages')) }} as staged
),

landed as (
    {#- Bronze up to what staging has read: its data files in scope (above), each read once. #}
    {% for source_format in source_formats -%}
        select distinct
            '{{ source_format }}' as source_format,
            landed.message_id
        from {{ source('bronze', 'raw_' ~ source_format) }} as landed
        where {{ landed_scope[source_format] }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

landed_again as (
    -- Landed but not staged in scope: in a scoped build, redeliveries staged by an earlier one.
    select landed.*
    from landed
    left anti join staged_in_scope
        on {{ key_condition(message_key, 'landed', 'staged_in_scope') }}
)
{%- endset %}

{#-
  Scoped: the messages landed again (staged once, by an earlier build) are
  looked up whole in staging and in the outcomes. They are usually few, so
  they are found first and looked up by their keys: one pass over the
  landed files instead of one per lookup, and no join over whole tables.
  Beyond landed_again_limit of them, the lookups join instead.
#}
{%- set landed_again_limit = 5000 %}
{%- set landed_again_keys = none %}
{%- if execute and not whole and not nothing_staged %}
    {%- set found = run_query(
        'with ' ~ landed_ctes ~ ' select source_format, message_id from landed_again limit ' ~ (landed_again_limit + 1)
    ).rows %}
    {%- if found | length <= landed_again_limit %}
        {%- set landed_again_keys = {} %}
        {%- for row in found %}
            {%- do landed_again_keys.setdefault(row[0], []).append(row[1]) %}
        {%- endfor %}
    {%- endif %}
{%- endif %}
{%- set landed_again_condition = [] %}
{%- for source_format, message_ids in (landed_again_keys or {}).items() %}
    {%- do landed_again_condition.append(
        '(source_format = ' ~ grain_literals([source_format])
        ~ ' and message_id in (' ~ grain_literals(message_ids) ~ '))'
    ) %}
{%- endfor %}
{#- How staging and the outcomes (alias looked_up) are read for the messages landed again. #}
{%- set landed_again_lookup -%}
    {%- if landed_again_keys is none -%}
        left semi join landed_again on {{ key_condition(message_key, 'looked_up', 'landed_again') }}
    {%- else -%}
        where {{ landed_again_condition | join(' or ') or 'false' }}
    {%- endif -%}
{%- endset %}

with

{{ landed_ctes }},

{% if whole -%}
    staged as (
        select * from staged_in_scope
    ),

    outcomes as (
        select
            source_format,
            message_id,
            count(*) as n_outcomes
        from {{ ref('cdc_message_outcomes') }}
        group by source_format, message_id
    ),
{%- else -%}
    {#-
      Scoped: the messages this build staged, and those landed again (staged
      once, by an earlier build; usually none). A message gets its outcome
      in the build that stages it, so the outcomes of the new messages are
      rows the producers' outcome tables wrote in this build (staged_at);
      those of messages landed again are looked up whole.
    #}
    staged as (
        select * from staged_in_scope
        union all
        select
            looked_up.source_format,
            looked_up.message_id,
            looked_up.bronze_sequence_number
        from {{ ref('stg_landed__messages') }} as looked_up
        {{ landed_again_lookup }}
    ),

    new_outcomes as (
        {% for outcomes in upstream_table_nodes('model.' ~ project_name ~ '.cdc_message_outcomes')
            if outcomes.resource_type == 'model' and 'outcome' in outcomes.columns -%}
            select
                source_format,
                message_id
            from {{ node_relation(outcomes) }}
            where staged_at >= {{ timestamp_literal(start) }}
            union all
        {% endfor -%}
        {#- Formats without a parser: one outcome each, from staging (as in cdc_message_outcomes). #}
        select
            source_format,
            message_id
        from staged_in_scope
        where source_format = 'unknown'
    ),

    outcome_rows as (
        select new_outcomes.*
        from new_outcomes
        left semi join staged_in_scope
            on {{ key_condition(message_key, 'new_outcomes', 'staged_in_scope') }}
        union all
        select
            looked_up.source_format,
            looked_up.message_id
        from {{ ref('cdc_message_outcomes') }} as looked_up
        {{ landed_again_lookup }}
    ),

    outcomes as (
        select
            source_format,
            message_id,
            count(*) as n_outcomes
        from outcome_rows
        group by source_format, message_id
    ),
{%- endif %}

landed_and_staged as (
    select
        coalesce(landed.source_format, staged.source_format) as source_format,
        coalesce(landed.message_id, staged.message_id) as message_id,
        landed.message_id is not null as is_landed,
        staged.message_id is not null as is_staged
    from landed
    full outer join staged
        on {{ key_condition(message_key, 'landed', 'staged') }}
),

final as (
    select
        coalesce(landed_and_staged.source_format, outcomes.source_format) as source_format,
        coalesce(landed_and_staged.message_id, outcomes.message_id) as message_id,
        coalesce(landed_and_staged.is_landed, false) as is_landed,
        coalesce(landed_and_staged.is_staged, false) as is_staged,
        coalesce(outcomes.n_outcomes, 0) as n_outcomes
    from landed_and_staged
    full outer join outcomes
        on {{ key_condition(message_key, 'landed_and_staged', 'outcomes') }}
)

select * from final
where
    not {{ 'true' if nothing_staged else 'false' }}
    and (not is_landed or not is_staged or n_outcomes <> 1)
