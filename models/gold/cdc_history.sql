{#- The folds need more analyzer rounds than Spark's default 100: the session targets set
    spark.sql.analyzer.maxIterations in profiles.yml, the pre-hook sets it on a Thrift Server. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['key_hash', 'version_number'],
        merge_replace_by='key_hash',
        on_schema_change='fail',
        pre_hook="set spark.sql.analyzer.maxIterations = 1000",
        post_hook=[
            "{{ record_read_positions([ref('cdc_changes')]) }}",
            "{{ drop_merge_replacement(this) }}",
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
  (the read position is kept in the table property cdc.read.cdc_changes),
  recomputes the whole history of every key they touch (a truncate touches
  every key of its table; a change of a key touches the key its primary-key
  change continued into) from all of that key's changes, and merges it in
  place of the key's previous versions (merge_replace_by: versions a late
  change made obsolete are deleted), in one commit. Keys not touched are
  not read or rewritten; a run with no new change reads no change at all.
  The table is merge-on-read (the project's default, dbt_project.yml), so a
  merge writes only the touched keys' rows. After changing a table's
  settings, rebuild with `--full-refresh`.
-#}

{%- if is_incremental() %}
    {#- ingested_at bounds the new files' rows below, so Iceberg skips the older files. -#}
    {%- set new_rows = new_rows_of(ref('cdc_changes'), 'ingested_at') %}
{%- endif %}

{%- set changes_ctes -%}
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
),

{% if is_incremental() -%}
    new_changes as (
        {{ keyed_changes('(' ~ new_rows.sql ~ ')') }}
    ),

    touched_keys as (
        select distinct key_hash from new_changes
        where operation <> 'truncate' and primary_key is not null
    ),

    truncated_tables as (
        select distinct table_id from new_changes
        where operation = 'truncate'
    ),

    continuing_keys as (
        -- The keys whose insert continues a touched key (the insert of a primary-key change,
        -- below): when the old key's earlier changes arrive after the key change, the new key's
        -- carried image changes too, so it is folded again. One link: a chain of key changes
        -- whose links all arrive before the old key's late changes is carried one key further
        -- per run that touches it.
        select /*+ broadcast(touched_keys) */ distinct continuing.key_hash
        from row_changes as continuing
        inner join touched_keys
            on {{ key_hash(
                'continuing.table_id',
                'map_filter(continuing.before, (image_column, v) -> '
                ~ 'array_contains(map_keys(continuing.primary_key), image_column))'
            ) }} = touched_keys.key_hash
        where
            {{ 'false' if new_rows.is_empty else 'true' }}
            and continuing.operation = 'insert'
            and continuing.before is not null
    ),

    folded_keys as (
        select key_hash from touched_keys
        union
        select key_hash from continuing_keys
    ),

    key_changes as (
        -- Every change of a key that has a new change (or continues one that has), and of
        -- every key of a table with a new truncate: one pass over silver, the few new keys
        -- broadcast (a shuffle would move all of silver). Nothing when no
        -- silver change is new (`false`, folded away: Spark reads nothing).
        select /*+ broadcast(folded_keys, truncated_tables) */ row_changes.*
        from row_changes
        left join folded_keys on row_changes.key_hash = folded_keys.key_hash
        left join truncated_tables on row_changes.table_id = truncated_tables.table_id
        where
            {{ 'false' if new_rows.is_empty else 'true' }}
            and (folded_keys.key_hash is not null or truncated_tables.table_id is not null)
    ),
{%- else -%}
    key_changes as (
        select * from row_changes
    ),
    {%- endif %}

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
                    then {{ key_hash(
                        'table_id',
                        'map_filter(before, (image_column, v) -> array_contains(map_keys(primary_key), image_column))'
                    ) }}
            end as previous_key_hash
        from key_changes
    ) as keyed
)
{%- endset %}

{#- The passes that carry a row through primary-key changes (below) only when a change of the
    keys this run folds continues another key: otherwise one fold is the whole history, and the
    query is a third of the size (macro history_passes). -#}
{%- set passes = history_passes(changes_ctes) %}

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

per_key as (
    select
        key_rows.key_hash,
        key_rows.table_id,
        key_rows.primary_key,
        array_sort(
            concat(
                key_rows.changes,
                coalesce(
                    filter(table_truncates.truncates, t -> t.sequence > key_rows.first_sequence),
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
    from key_rows
    left join table_truncates on key_rows.table_id = table_truncates.table_id
),

{%- set fold_settings = {
    'scd_type': 'scd_type', 'ignore_columns': 'ignore_columns', 'collapse_transactions': 'collapse_transactions'
} %}

folded_1 as (
    select
        keyed.*,
        {{ history_fold('keyed.changes', **fold_settings) }} as history
    from (
        select
            per_key.*,
            coalesce(settings.scd_type, 2) as scd_type,
            coalesce(settings.ignore_columns, cast(array() as array<string>)) as ignore_columns,
            coalesce(settings.collapse_transactions, false) as collapse_transactions
        from per_key
        left join settings on per_key.table_id = settings.table_id
    ) as keyed
),

{# A key change's insert carries the old key's image just before it: the old key's last
    version before the insert's sequence, from this run's fold or, for an old key this run does
    not fold, from the stored history. Each further pass folds the continuing keys again with
    those images, so a chain of key changes within one run (1 → 2 → 1) is carried through as
    many links as there are passes after the first (`passes`, above). #}
{% set fold_columns = [
    '@key_hash', '@table_id', '@primary_key', '@scd_type', '@ignore_columns', '@collapse_transactions'
] %}
{% if is_incremental() -%}
    stored_versions as (
        select /*+ broadcast(previous_keys) */
            stored.key_hash,
            stored.sequence,
            stored.row_data
        from {{ this }} as stored
        inner join previous_keys on stored.key_hash = previous_keys.previous_key_hash
        left anti join key_changes on stored.key_hash = key_changes.key_hash
    ),
{%- endif %}
{% for pass in range(1, passes) %}
    versions_{{ pass }} as (
        select /*+ broadcast(previous_keys) */
            folded_{{ pass }}.key_hash,
            version.sequence,
            version.row_data
        from folded_{{ pass }}
        inner join previous_keys on folded_{{ pass }}.key_hash = previous_keys.previous_key_hash
            lateral view explode(folded_{{ pass }}.history) as version
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

    folded_{{ pass + 1 }} as (
        select
            {{ fold_columns | join(', ') | replace('@', 'refolded.') }},
            refolded.changes,
            case
                when refolded.images is null then refolded.history
                else {{ history_fold('refolded.changes', **fold_settings) }}
            end as history
        from (
            select
                {{ fold_columns | join(', ') | replace('@', 'folded_' ~ pass ~ '.') }},
                folded_{{ pass }}.history,
                carried_{{ pass }}.images,
                case
                    when carried_{{ pass }}.images is null then folded_{{ pass }}.changes
                    else transform(folded_{{ pass }}.changes, change -> named_struct(
                            'sequence', change.sequence,
                            'change_id', change.change_id,
                            'operation', change.operation,
                            'commit_ts', change.commit_ts,
                            'transaction_id', change.transaction_id,
                            'before', change.before,
                            'after', change.after,
                            'carried', coalesce(
                                try_element_at(
                                    filter(carried_{{ pass }}.images, image -> image.change_id = change.change_id),
                                    1
                                ).image,
                                change.carried
                            )
                        ))
                end as changes
            from folded_{{ pass }}
            left join carried_{{ pass }} on folded_{{ pass }}.key_hash = carried_{{ pass }}.key_hash
        ) as refolded
    ),
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
    from folded_{{ passes }} as folded
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
        provenance.source_format,
        provenance.transaction_id,
        provenance.ingested_at
    from exploded
    left join provenance on exploded.change_id = provenance.change_id
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
        ingested_at
    from closed
)

select * from final
