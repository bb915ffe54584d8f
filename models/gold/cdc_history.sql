{#- The folds need more analyzer rounds than Spark's default 100: the session targets set
    spark.sql.analyzer.maxIterations in profiles.yml, the pre-hook sets it on a Thrift Server. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['key_hash', 'version_number'],
        merge_replace_by='key_hash',
        merge_replace_from='version_number',
        on_schema_change='fail',
        test_scope_bound='written_at',
        pre_hook="set spark.sql.analyzer.maxIterations = 1000",
        post_hook=[
            "{{ record_read_positions([ref('cdc_changes')]) }}",
            "{{ drop_merge_replacement(this) }}",
            "{{ drop_history_scratch('fold_keys') }}",
            "{{ drop_history_scratch('marked_changes') }}",
            "{{ drop_history_scratch('stored_versions') }}",
            "{{ drop_history_scratch('chain_links') }}",
        ],
    )
}}

{#-
  Type-2 history of every source row (docs/contract.md, "gold.cdc_history"): one version per change
  of a key, in the source's commit order (`sequence`), whatever the arrival
  order. Each version's row image is the previous one with the change's
  columns laid over it, so columns a change did not carry keep their value;
  a delete keeps the last image before it; an insert after a delete starts
  afresh. A truncate closes every key of its table that is live at that
  point with a deleted version.

  Per-table settings (seed cdc_tables; defaults for tables not declared):
  key columns overriding the messages' key, SCD type 1 (one version per
  key, replaced by each change), columns whose changes do not open a new
  version, truncates ignored, the changes of one key within one source
  transaction collapsed into one version.

  Incremental: a run reads the silver changes committed since its last run
  (the read position is kept in the table property cdc.read.cdc_changes).
  A key they touch (a truncate touches every key of its table; a change of
  a key touches the keys its primary-key changes continued into, link
  after link) is either
  extended or folded again:
  - extended, when its new changes and its table's new truncates all come
    after its stored current version, none of them continues another key,
    it continues no touched key, and its table's settings update no version
    in place (no ignored columns, no collapsed transactions): the fold
    starts from the stored current version (history_start) and folds only
    the new changes and the table's truncates after that version, so the
    run reads none of the key's older changes;
  - otherwise its whole history is folded again from all of its changes
    in silver (a late change renumbers the versions after it).
  The keys to fold, their changes and the stored versions the passes
  carry through key changes are each computed once, into a scratch table
  (history_scratch), which the model drops after the merge.
  The versions either way are merged in place of the key's stored versions
  from the first one the run wrote on (merge_replace_by, merge_replace_from:
  versions a late change made obsolete are deleted), in one commit. Keys not
  touched are not read or rewritten; a run with no new change reads no
  change at all. The table is merge-on-read (the project's default,
  dbt_project.yml), so a merge writes only the rows it replaces. After
  changing a table's settings, rebuild with `--full-refresh`.
-#}

{#- The most fold passes a run takes (macro history_passes): they carry a row through one link fewer
    of a chain of primary-key changes. -#}
{%- set most_passes = 5 %}

{%- if is_incremental() %}
    {#- ingested_at bounds the new files' rows below, so Iceberg skips the older files. -#}
    {%- set new_rows = new_rows_of(ref('cdc_changes'), 'ingested_at') %}
{%- endif %}

{#- The SQL of the model comes in groups of CTEs (Jinja variables), so that an incremental run can
    compute the two inputs of its fold once each (fold_keys, marked_changes), each into a scratch
    table, and read them from there in the query that folds and in the one that decides the
    passes (macro history_scratch). Several references to a CTE each compute it again in
    Spark: each would read silver, or this table, once more. -#}

{%- set base_ctes -%}
with

settings as (
    select
        table_id,
        {{ declared_list('key_columns') }} as key_columns,
        {{ declared_list('history_ignore_columns') }} as ignore_columns,
        coalesce(scd_type, 2) as scd_type,
        coalesce(apply_truncate, true) as apply_truncate,
        coalesce(collapse_transactions, false) as collapse_transactions
    from {{ ref('cdc_tables') }}
),

keyed_changes as (
    -- Every silver change, with its key as the table's settings define it.
    {{ keyed_changes(ref('cdc_changes')) }}
),

row_changes as (
    select * from keyed_changes
    where operation <> 'truncate' and primary_key is not null
),

truncates as (
    select * from keyed_changes
    where operation = 'truncate'
)
{%- endset %}

{%- if is_incremental() %}
    {%- set any_new = 'false' if new_rows.is_empty else 'true' %}
    {#- A change's place in the fold's order (per_key's sort), comparable as one value. #}
    {%- set position = "named_struct('sequence', coalesce(@.sequence, ''), "
        ~ "'change_id', coalesce(@.change_id, ''))" %}

    {%- set new_ctes -%}
    new_changes as (
        {{ keyed_changes('(' ~ new_rows.sql ~ ')') }}
    ),

    new_row_changes as (
        select * from new_changes
        where operation <> 'truncate' and primary_key is not null
    ),

    touched_keys as (
        select distinct key_hash from new_row_changes
    ),

    truncated_tables as (
        select
            table_id,
            min(coalesce(sequence, '')) as first_sequence
        from new_changes as new_truncates
        where operation = 'truncate'
        group by table_id
    )
    {%- endset %}

    {%- set fold_keys_ctes -%}
    new_key_changes as (
        -- Per key the new row changes touch: its table, its first new change in the fold's order,
        -- and whether one of them continues another key (the insert of a primary-key change).
        select
            key_hash,
            first(table_id) as table_id,
            min({{ position | replace('@', 'new_row_changes') }}) as first_position,
            bool_or(coalesce(
                operation = 'insert' and before is not null
                and {{ previous_key_hash('table_id', 'before', 'primary_key') }} <> key_hash,
                false
            )) as continues_key
        from new_row_changes
        group by key_hash
    ),

    stored_current as (
        -- The stored current version of every key the new changes touch (a new truncate: every
        -- key of its table). The few keys and tables broadcast; nothing when nothing is new.
        select /*+ broadcast(touched_keys, truncated_tables) */ stored.*
        from {{ this }} as stored
        left join touched_keys on stored.key_hash = touched_keys.key_hash
        left join truncated_tables on stored.table_id = truncated_tables.table_id
        where
            {{ any_new }}
            and stored.is_current
            and (touched_keys.key_hash is not null or truncated_tables.table_id is not null)
    ),

    continuing_keys as (
        -- The keys whose insert continues a touched key (the insert of a primary-key change,
        -- below): when the old key's earlier changes arrive after the key change, the new key's
        -- carried image changes too, so it is folded again. The keys that continue those, link
        -- after link, are added to the scratch table of fold_keys in rounds, one a link
        -- (macro history_continue_chains, from these: round 1).
        {{ continuing_key_hashes('touched_keys', any_new) }}
    ),

    tied_truncates as (
        select distinct
            table_id,
            sequence
        from truncates
    ),

    touched as (
        -- Every key the new changes touch, with its stored current version (null for a key new
        -- to its table).
        select
            coalesce(new_key_changes.key_hash, stored.key_hash) as key_hash,
            coalesce(new_key_changes.table_id, stored.table_id) as table_id,
            new_key_changes.first_position,
            coalesce(new_key_changes.continues_key, false) as continues_key,
            stored.primary_key as stored_primary_key,
            stored.version_number as stored_version_number,
            stored.change_id as stored_change_id,
            stored.sequence as stored_sequence,
            stored.operation as stored_operation,
            stored.valid_from as stored_valid_from,
            stored.transaction_id as stored_transaction_id,
            stored.is_deleted as stored_is_deleted,
            stored.row_data as stored_row_data,
            stored.source_format as stored_source_format,
            stored.ingested_at as stored_ingested_at,
            {{ position | replace('@', 'stored') }} as stored_position
        from new_key_changes
        full outer join stored_current as stored on new_key_changes.key_hash = stored.key_hash
    ),

    fold_keys as (
        -- The keys this run folds: each touched key, extended or folded again (the model's
        -- description), and the keys that continue a touched key (folded again). One join of
        -- the two, so that each is computed once: Spark computes a CTE again at each
        -- reference, and each computation of `touched` reads this table, and of
        -- `continuing_keys` silver.
        select
            coalesce(touched.key_hash, continuing_keys.key_hash) as key_hash,
            touched.table_id,
            touched.key_hash is not null
            and not touched.continues_key
            and continuing_keys.key_hash is null
            and (
                -- A key new to its table: all of its changes are new.
                touched.stored_version_number is null
                or (
                    -- A stored key: every new change and truncate comes after its current
                    -- version, which then is the one its last change opened.
                    touched.stored_sequence is not null
                    and size(coalesce(settings.ignore_columns, cast(array() as array<string>))) = 0
                    and not coalesce(settings.collapse_transactions, false)
                    and (touched.first_position is null or touched.first_position > touched.stored_position)
                    and (
                        truncated_tables.table_id is null
                        or truncated_tables.first_sequence > touched.stored_sequence
                    )
                    -- A truncate at the same source position as the stored version: whether it
                    -- reaches the key depends on the key's first change, which is not read.
                    and tied_truncates.table_id is null
                )
            ) as is_extended,
            -- False for a key that only continues a touched one: its whole history is folded again.
            touched.key_hash is not null and touched.stored_version_number is null as is_new,
            -- Whether the key has a new row change (it is one of touched_keys): every key that
            -- continues it is then in continuing_keys already, so the later rounds of
            -- history_continue_chains need not look for them.
            touched.first_position is not null as has_new_changes,
            touched.stored_primary_key,
            touched.stored_version_number,
            touched.stored_change_id,
            touched.stored_sequence,
            touched.stored_operation,
            touched.stored_valid_from,
            touched.stored_transaction_id,
            touched.stored_is_deleted,
            touched.stored_row_data,
            touched.stored_source_format,
            touched.stored_ingested_at,
            -- The round of history_continue_chains that reached the key: 1 for continuing_keys.
            case when continuing_keys.key_hash is not null then 1 end as continuing_round
        from touched
        full outer join continuing_keys on touched.key_hash = continuing_keys.key_hash
        left join settings on touched.table_id = settings.table_id
        left join truncated_tables on touched.table_id = truncated_tables.table_id
        left join tied_truncates
            on touched.table_id = tied_truncates.table_id and touched.stored_sequence = tied_truncates.sequence
    )
    {%- endset %}

    {%- set fold_changes_ctes -%}
    extended_keys as (
        select * from fold_keys
        where is_extended
    ),

    folded_keys as (
        -- The keys whose whole history this run folds again.
        select key_hash from fold_keys
        where not is_extended
    ),

    key_changes as (
        -- Every change of a key that is folded again, and of every key of a table with a new
        -- truncate that the run does not extend: one pass over silver, the few new keys
        -- broadcast (a shuffle would move all of silver). Nothing when no silver change is
        -- new (`false`, folded away: Spark reads nothing).
        select /*+ broadcast(folded_keys, truncated_tables, extended_keys) */ row_changes.*
        from row_changes
        left join folded_keys on row_changes.key_hash = folded_keys.key_hash
        left join truncated_tables on row_changes.table_id = truncated_tables.table_id
        left anti join extended_keys on row_changes.key_hash = extended_keys.key_hash
        where
            {{ any_new }}
            and (folded_keys.key_hash is not null or truncated_tables.table_id is not null)
    ),

    extension_changes as (
        -- The new changes of the keys the run extends.
        select /*+ broadcast(extended_keys) */ new_row_changes.*
        from new_row_changes
        left semi join extended_keys on new_row_changes.key_hash = extended_keys.key_hash
    ),

    fold_changes as (
        select * from key_changes
        union all
        select * from extension_changes
    ),
    {%- endset %}
{%- else %}
    {%- set fold_changes_ctes -%}
    fold_changes as (
        select * from row_changes
    ),
    {%- endset %}
{%- endif %}

{%- set marked_changes_cte -%}
marked_changes as (
    -- Each change with the key its insert continues, if any: an insert whose before image
    -- names another key of its table (the insert of a primary-key change, int_debezium__changes:
    -- the old key as its before image). The columns it did not send (unchanged TOASTed values)
    -- keep the old key's last values.
    select
        *,
        coalesce(previous_key_hash <> key_hash, false) as continues_key
    from (
        select
            *,
            case
                when operation = 'insert' and before is not null
                    then {{ previous_key_hash('table_id', 'before', 'primary_key') }}
            end as previous_key_hash
        from fold_changes
    ) as keyed
)
{%- endset %}

{#- The CTEs up to the fold's inputs: computed in the query, or, in an incremental run of the
    model, read from the scratch tables the run writes them to first (history_scratch). -#}
{%- if is_incremental() and new_rows.is_empty %}
    {#- Nothing new: every read of a table is `false`, and Spark reads nothing. -#}
    {%- set changes_ctes = base_ctes ~ ',\n' ~ new_ctes ~ ',\n' ~ fold_keys_ctes ~ ',\n'
        ~ fold_changes_ctes ~ '\n' ~ marked_changes_cte %}
{%- elif is_incremental() %}
    {%- set fold_keys_part = history_scratch('fold_keys', base_ctes ~ ',\n' ~ new_ctes, fold_keys_ctes) %}
    {%- do history_continue_chains(base_ctes, most_passes) %}
    {%- set prefix = base_ctes ~ ',\n' ~ new_ctes ~ ',\n' ~ fold_keys_part %}
    {%- set marked_part = history_scratch('marked_changes', prefix, fold_changes_ctes ~ '\n' ~ marked_changes_cte) %}
    {%- set changes_ctes = prefix ~ ',\n' ~ marked_part %}
{%- else %}
    {%- set changes_ctes = base_ctes ~ ',\n' ~ fold_changes_ctes ~ '\n' ~ marked_changes_cte %}
{%- endif %}

{#- The passes that carry a row through primary-key changes (below) only when a change of the
    keys this run folds continues another key, and a third only for a chain of them: otherwise
    one fold is the whole history, and the query is a third of the size (macro history_passes). -#}
{%- set passes = history_passes(changes_ctes, most=most_passes) %}

{{ changes_ctes }},

key_rows as (
    select
        key_hash,
        first(table_id) as table_id,
        first(primary_key) as primary_key,
        min(sequence) as first_sequence,
        collect_list(struct(
            sequence,
            change_id,
            operation,
            commit_ts,
            transaction_id,
            before,
            after,
            {#- What a continuing insert starts from: nothing known yet (the passes below fill in
                the old key's image); null for every other change. #}
            case
                when continues_key then cast(map() as map<string, string>)  -- noqa: LT01
            end as carried
        )) as changes
    from marked_changes
    group by key_hash
),

continuations as (
    -- The inserts that continue another key's row.
    select
        key_hash,
        change_id,
        sequence,
        previous_key_hash
    from marked_changes
    where continues_key
),

previous_keys as (
    select distinct previous_key_hash from continuations
),

table_truncates as (
    -- The truncates of each table, one small list per table. A truncate
    -- reaches every key of its table seen before it; the fold skips the keys
    -- that are not live at that point. The fold closes a live key with its
    -- last image, so a truncate's images are not needed (and its scan of
    -- silver then skips the image columns).
    select
        table_id,
        collect_list(struct(
            sequence,
            change_id,
            operation,
            commit_ts,
            transaction_id,
            cast(null as map<string, string>) as before,  -- noqa: LT01
            cast(null as map<string, string>) as after,  -- noqa: LT01
            cast(null as map<string, string>) as carried  -- noqa: LT01
        )) as truncates
    from truncates
    group by table_id
),

{% if is_incremental() -%}
    starts as (
        -- The stored current version each extended key's fold starts from (not a key new to its
        -- table, whose fold starts empty).
        select
            key_hash,
            table_id,
            stored_primary_key as primary_key,
            stored_version_number as version_number,
            stored_change_id as change_id,
            stored_sequence as sequence,
            stored_source_format as source_format,
            stored_transaction_id as transaction_id,
            stored_ingested_at as ingested_at,
            {{ history_start(
                'stored_version_number', 'stored_change_id', 'stored_sequence', 'stored_operation',
                'stored_valid_from', 'stored_transaction_id', 'stored_is_deleted', 'stored_row_data'
            ) }} as history
        from fold_keys
        where is_extended and not is_new
    ),

    start_rows as (
        -- The keys to fold, each with its new changes (an extended key touched only by a
        -- truncate has none) and the history its fold starts from.
        select
            coalesce(key_rows.key_hash, starts.key_hash) as key_hash,
            coalesce(starts.table_id, key_rows.table_id) as table_id,
            coalesce(starts.primary_key, key_rows.primary_key) as primary_key,
            {#- A stored key's fold takes its table's truncates after its current version (the
                ones before are in it); a key's first fold those after its first change. #}
            coalesce(starts.sequence, key_rows.first_sequence) as first_sequence,
            coalesce(key_rows.changes, array()) as changes,
            coalesce(starts.history, {{ empty_history() }}) as start
        from key_rows
        full outer join starts on key_rows.key_hash = starts.key_hash
    ),
{%- else -%}
    start_rows as (
        select
            *,
            {{ empty_history() }} as start
        from key_rows
    ),
{%- endif %}

per_key as (
    select
        start_rows.key_hash,
        start_rows.table_id,
        start_rows.primary_key,
        start_rows.start,
        array_sort(
            concat(
                start_rows.changes,
                coalesce(
                    filter(table_truncates.truncates, t -> t.sequence > start_rows.first_sequence),
                    array()
                )
            ),
            (l, r) -> case
                when coalesce(l.sequence, '') < coalesce(r.sequence, '') then -1
                when coalesce(l.sequence, '') > coalesce(r.sequence, '') then 1
                when coalesce(l.change_id, '') < coalesce(r.change_id, '') then -1
                when coalesce(l.change_id, '') > coalesce(r.change_id, '') then 1
                else 0
            end
        ) as changes
    from start_rows
    left join table_truncates on start_rows.table_id = table_truncates.table_id
),

{%- set fold_settings = {
    'scd_type': 'scd_type', 'ignore_columns': 'ignore_columns', 'collapse_transactions': 'collapse_transactions'
} %}

fold_rows as (
    -- Each key to fold, with its table's settings.
    select
        per_key.*,
        coalesce(settings.scd_type, 2) as scd_type,
        coalesce(settings.ignore_columns, cast(array() as array<string>)) as ignore_columns,
        coalesce(settings.collapse_transactions, false) as collapse_transactions
    from per_key
    left join settings on per_key.table_id = settings.table_id
),

{# A key change's insert carries the old key's image just before it: the old key's last
    version before the insert's sequence, from this run's fold or, for an old key this run does
    not fold, from the stored history. The passes before the last fold only the old keys
    (`previous_keys`), each with the images the pass before found for their own continuing
    inserts, so pass n has the right image for the n-th link of a chain of key changes within one
    run (1 → 2 → 3); the last pass folds every key with the images of the one before it. Each
    pass refers to the one before once, so the query grows by one fold a pass (`passes`, above). #}
{% set fold_columns = [
    '@key_hash', '@table_id', '@primary_key', '@start', '@scd_type', '@ignore_columns', '@collapse_transactions'
] %}
{% if is_incremental() and passes > 1 -%}
    {#- Read by every pass before the last: with more than one of them, computed once, into a
        scratch table (history_scratch), so that this table is read once for it rather than once
        per pass. The scratch table's query has only fold_keys and marked_changes before it, so
        previous_keys, starts and the keys of start_rows whose fold starts empty are worked out
        from those two here. -#}
    {%- set stored_versions_ctes -%}
    extended_starts as (
        -- The stored current version each extended key's fold starts from (starts, above).
        select
            key_hash,
            stored_version_number as version_number
        from fold_keys
        where is_extended and not is_new
    ),

    stored_versions as (
        select /*+ broadcast(previous_keys, folded_whole, extended_starts) */
            stored.key_hash,
            stored.sequence,
            stored.row_data
        from {{ this }} as stored
        inner join (
            select distinct previous_key_hash from marked_changes
            where continues_key
        ) as previous_keys
            on stored.key_hash = previous_keys.previous_key_hash
        {#- This run's versions of the keys it folds: all of a key folded again (its fold starts
            empty: a key with changes to fold and no stored start), an extended key's from its
            current one on. #}
        left anti join (
            select distinct changed.key_hash from marked_changes as changed
            left anti join extended_starts on changed.key_hash = extended_starts.key_hash
        ) as folded_whole
            on stored.key_hash = folded_whole.key_hash
        left anti join extended_starts
            on stored.key_hash = extended_starts.key_hash and stored.version_number >= extended_starts.version_number
    )
    {%- endset %}
    {%- if passes > 2 %}
        {{ history_scratch('stored_versions', changes_ctes, stored_versions_ctes) }},
    {%- else %}
        {{ stored_versions_ctes }},
    {%- endif %}
{%- endif %}
{% for pass in range(1, passes + 1) %}
    {%- set name = 'folded' if pass == passes else 'chain_' ~ pass %}
    {{ name }} as (
        {%- if pass == passes %}
        -- Every key this run folds{{ ', with the images the passes before carried' if passes > 1 }}.
        {%- else %}
        -- The keys that inserts of this run continue (pass {{ pass }} of {{ passes }}).
        {%- endif %}
        select
            {{ fold_columns | join(', ') | replace('@', 'carrying.') }},
            {{ history_fold('carrying.changes', start='carrying.start', **fold_settings) }} as history
        from (
            select {{ '/*+ broadcast(previous_keys) */' if pass < passes }}
                {{ fold_columns | join(', ') | replace('@', 'fold_rows.') }},
                {%- if pass == 1 %}
                    fold_rows.changes
                {%- else %}
                    case
                        when carried_{{ pass - 1 }}.images is null then fold_rows.changes
                        else transform(fold_rows.changes, change -> named_struct(
                                'sequence', change.sequence,
                                'change_id', change.change_id,
                                'operation', change.operation,
                                'commit_ts', change.commit_ts,
                                'transaction_id', change.transaction_id,
                                'before', change.before,
                                'after', change.after,
                                'carried', coalesce(
                                    try_element_at(
                                        filter(
                                            carried_{{ pass - 1 }}.images,
                                            image -> image.change_id = change.change_id
                                        ),
                                        1
                                    ).image,
                                    change.carried
                                )
                            ))
                    end as changes
                {%- endif %}
            from fold_rows
            {%- if pass > 1 %}
            left join carried_{{ pass - 1 }} on fold_rows.key_hash = carried_{{ pass - 1 }}.key_hash
            {%- endif %}
            {%- if pass < passes %}
                where fold_rows.key_hash in (select previous_keys.previous_key_hash from previous_keys)
            {%- endif %}
        ) as carrying
    ),
    {%- if pass < passes %}

        versions_{{ pass }} as (
            select
                chain_{{ pass }}.key_hash,
                version.sequence,
                version.row_data
            from chain_{{ pass }}
                lateral view explode(chain_{{ pass }}.history) as version
            {%- if is_incremental() %}
                union all
                select * from stored_versions
            {%- endif %}
        ),

        carried_{{ pass }} as (
            select
                key_hash,
                collect_list(struct(change_id, image)) as images
            from (
                select
                    continuations.key_hash,
                    continuations.change_id,
                    max_by(versions_{{ pass }}.row_data, versions_{{ pass }}.sequence) as image
                from continuations
                inner join versions_{{ pass }}
                    on
                        continuations.previous_key_hash = versions_{{ pass }}.key_hash
                        and versions_{{ pass }}.sequence < continuations.sequence
                group by continuations.key_hash, continuations.change_id
            ) as images
            group by key_hash
        ),
    {%- endif %}
{% endfor %}

exploded as (
    select
        folded.table_id,
        folded.primary_key,
        folded.key_hash,
        version.version_number,
        version.change_id,
        version.sequence,
        version.operation,
        version.commit_ts,
        version.is_deleted,
        version.row_data
    from folded
        lateral view explode(history) as version
),

provenance as (
    -- Where each version came from: the producer, source transaction and landing time of the
    -- change that started it (a row change of the keys this run folds, or a truncate).
    select
        change_id,
        source_format,
        transaction_id,
        ingested_at
    from marked_changes
    union all
    select
        change_id,
        source_format,
        transaction_id,
        ingested_at
    from truncates
),

sourced as (
    select
        exploded.*,
        {%- if is_incremental() %}
            {#- The stored version an extended key's fold starts from keeps where it came from. #}
            coalesce(provenance.source_format, starts.source_format) as source_format,
            coalesce(provenance.transaction_id, starts.transaction_id) as transaction_id,
            coalesce(provenance.ingested_at, starts.ingested_at) as ingested_at
        {%- else %}
            provenance.source_format,
            provenance.transaction_id,
            provenance.ingested_at
        {%- endif %}
    from exploded
    left join provenance on exploded.change_id = provenance.change_id
    {%- if is_incremental() %}
        left join starts
            on exploded.key_hash = starts.key_hash and exploded.change_id = starts.change_id
    {%- endif %}
),

periods as (
    -- A version starts at its change's commit time, or at the previous version's start when
    -- the source's clock went back (commit times out of commit order), so no period inverts.
    select
        *,
        max(commit_ts) over (
            partition by key_hash order by version_number rows between unbounded preceding and current row
        ) as valid_from
    from sourced
),

closed as (
    select
        *,
        lead(valid_from) over (partition by key_hash order by version_number) as valid_to,
        version_number = max(version_number) over (partition by key_hash) as is_current
    from periods
),

final as (
    select
        table_id,
        primary_key,
        key_hash,
        version_number,
        valid_from,
        valid_to,
        is_current,
        is_deleted,
        -- The live version of a key: current and not a delete (a delete keeps a version of its own).
        is_current and not is_deleted as is_active,
        -- The last instant this version was live, for "as of" in one line
        -- (`t between valid_from and live_until`): just before valid_to, 9999-12-31 while open,
        -- and null on a delete, which is never live.
        case
            when not is_deleted
                then coalesce(valid_to - interval 1 microsecond, timestamp '9999-12-31 00:00:00')
        end as live_until,
        operation,
        row_data,
        change_id,
        sequence,
        source_format,
        transaction_id,
        ingested_at,
        -- When a build last wrote this row: the build's data tests read the files it wrote, and
        -- this bounds them below so that Iceberg skips the older files (test_scope_bound above).
        current_timestamp() as written_at
    from closed
)

select * from final
