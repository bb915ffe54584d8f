{#-
  How many fold passes gold.cdc_history takes this run (at most `most`): the links of the longest
  chain of primary-key changes among the keys the run folds, plus one. A change that continues
  another key (a row of the CTE `marked_changes`, in the SQL `changes_ctes` that defines it, with
  `continues_key`: the insert of a primary-key change) needs a second pass, which carries the
  old key's image; a third only when that old key itself continues a key in this run before
  that change (1 → 2 → 1), since an old key that continues none has its whole history after the
  first pass; and so on, one pass a link. Only links whose insert leaves out a column count
  (history_chain_links): one that sends them all needs no carried image. Decided before the
  model runs: one query (history_passes_sql), and for a chain a second one that counts its links
  in source order (history_chain_sql). A chain longer than the passes carry is logged as a
  warning: the keys past its last carried link miss the columns that only the rows before them
  held. A render without execution (parse, lint), or a dbt unit test that does not set the
  count (`overrides: macros: history_passes`, models/gold/_gold__unit_tests.yml), takes three
  passes (`most` if fewer): a first, a middle and a last pass are every form a pass takes, so
  lint sees each, and more would only repeat the middle one (sqlfluff's time grows with the
  rendered SQL: 82 s for the model at three, 141 s at five). Each pass refers to the one before
  once, so the query grows by one fold a pass, about six seconds of Spark's planning here
  (docs/benchmarks.md, "Fold passes in a line").
-#}
{% macro history_passes(changes_ctes, most=5) -%}
    {%- if not execute or model is not defined or model.resource_type != 'model' -%}
        {{ return([most, 3] | min) }}
    {%- endif -%}
    {%- set passes = query_scalar(history_passes_sql(changes_ctes)) | int -%}
    {%- if passes > 2 -%}
        {#- The links, read once per link counted: computed once (history_scratch). -#}
        {%- set links = history_scratch(
            'chain_links', changes_ctes, history_chain_links(this if is_incremental() else none)
        ) -%}
        {%- set passes = query_scalar(history_chain_sql(changes_ctes, most, links=links)) | int -%}
        {%- if passes > most -%}
            {%- do exceptions.warn(
                model.name ~ ': a chain of more than ' ~ (most - 1) ~ ' primary-key changes of one row in '
                ~ 'this run; its fold passes carry ' ~ (most - 1) ~ ', so the keys after those lack any '
                ~ 'column their inserts did not send (macro history_passes)'
            ) -%}
        {%- endif -%}
    {%- endif -%}
    {%- set passes = [passes, most] | min -%}
    {%- do log(model.name ~ ': ' ~ passes ~ ' fold pass(es) this run (history_passes)') -%}
    {{ return(passes) }}
{%- endmacro %}


{#- The first query of history_passes: one row, 1 when no change of `marked_changes` continues
    another key, 2 when changes do but no key they continue continues a key itself, and 3 when
    one does, whatever their order (a chain, perhaps: history_chain_sql tells). One scan of the
    continuing changes. -#}
{% macro history_passes_sql(changes_ctes) -%}
{{ changes_ctes }}
select
    case
        when count(*) = 0 then 1
        when size(array_intersect(collect_set(previous_key_hash), collect_set(key_hash))) = 0 then 2
        else 3
    end as passes
from marked_changes
where continues_key
{%- endmacro %}


{#- The links of chains of key changes in `marked_changes` that a pass must carry: one row per change
    that continues another key and leaves out a column that an image of a key in a chain may
    hold (its table's columns in the changes of the keys that continue or are continued, and,
    with `stored`, in their stored versions), with the key it continues and its source position
    (as the fold orders them). A continuing insert that sends all of those columns starts from
    its own image whatever the old key's was, so the fold's first pass has it right, and a chain
    through it is two shorter ones (the keyed-by-all-columns tables' updates, for one). -#}
{% macro history_chain_links(stored=none) -%}
chain_keys as (
    -- The keys that continue or are continued: one scan of the continuing changes.
    select distinct chain_key as key_hash
    from marked_changes
        lateral view explode(array(key_hash, previous_key_hash)) as chain_key
    where continues_key
),

chain_columns as (
    select
        table_id,
        collect_set(image_column) as image_columns
    from (
        select
            changes.table_id,
            image_column
        from marked_changes as changes
        left semi join chain_keys on changes.key_hash = chain_keys.key_hash
            lateral view explode(concat(
                map_keys(coalesce(changes.after, cast(map() as map<string, string>))),  -- noqa: LT01
                map_keys(coalesce(changes.before, cast(map() as map<string, string>)))  -- noqa: LT01
            )) as image_column
        {%- if stored is not none %}
            union all
            select
                stored.table_id,
                image_column
            from {{ stored }} as stored
            left semi join chain_keys on stored.key_hash = chain_keys.key_hash
                lateral view explode(map_keys(stored.row_data)) as image_column
        {%- endif %}
    ) as chain_images
    group by table_id
),

chain_links as (
    select
        links.key_hash,
        links.previous_key_hash,
        coalesce(links.sequence, '') as link_sequence
    from marked_changes as links
    left join chain_columns on links.table_id = chain_columns.table_id
    where
        links.continues_key
        and size(array_except(
            coalesce(chain_columns.image_columns, cast(array() as array<string>)),
            map_keys(coalesce(links.after, cast(map() as map<string, string>)))  -- noqa: LT01
        )) > 0
)
{%- endmacro %}


{#- The second query of history_passes, for a chain: one row, the links of the longest chain of
    key changes in `marked_changes` plus one, counted up to `most` links (so at most `most` + 1).
    A link of depth n + 1 is a change continuing a key that a link of depth n continued at an
    earlier source position (`sequence`, as the fold orders them): each depth's first position
    per key, one aggregate per depth. `links` is the CTE of the links (history_chain_links, the
    default), or one that reads them from a scratch table. -#}
{% macro history_chain_sql(changes_ctes, most=3, links=none) -%}
{{ changes_ctes }},

{{ links if links is not none else history_chain_links() }},

chain_depth_1 as (
    select * from chain_links
),

{% for depth in range(2, most + 1) -%}
chain_depth_{{ depth }} as (
    select chain_links.*
    from chain_links
    inner join (
        select
            key_hash,
            min(link_sequence) as first_sequence
        from chain_depth_{{ depth - 1 }}
        group by key_hash
    ) as reached
        on chain_links.previous_key_hash = reached.key_hash and reached.first_sequence < chain_links.link_sequence
),

{% endfor -%}
chain_lengths as (
    {%- for depth in range(1, most + 1) %}
        select {{ depth }} as depth from (select 1 from chain_depth_{{ depth }} limit 1) as found_{{ depth }}
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select 1 + coalesce(max(depth), 0) as passes
from chain_lengths
{%- endmacro %}
