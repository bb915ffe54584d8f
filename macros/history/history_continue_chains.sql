{#-
  Carries gold.cdc_history's fold_keys (its scratch table, history_scratch) along chains of
  primary-key changes, round after round. fold_keys holds the keys the run's new changes touch and
  the keys whose insert continues one of those (continuing_keys: round 1, in `continuing_round`).
  When the old key's earlier changes arrive after its key changes, each later key's carried image
  changes as well: a round finds, in silver (`row_changes` of `base_ctes`), the inserts that
  continue a key the round before reached, and merges their keys in, folded again (not extended)
  with their round. A reached key with a new row change of its own (`has_new_changes`) is left
  out of the next round: every key that continues it is in continuing_keys already, with round 1.
  So the usual primary-key change, whose delete and insert are both new, needs no round (its new
  key is reached in round 1, and has a new change). It stops at a round that reaches no other key,
  or after `most` rounds: a longer chain among the keys folded is more than the fold's passes
  carry, which history_passes warns of. A run whose new changes continue no key, or only keys with
  new changes, costs one query of the scratch table; a round, one scan of silver (the few keys
  reached broadcast), a merge into the scratch table and a count of it. Nothing without execution
  (parse, lint, unit tests), where fold_keys is a CTE.
-#}
{% macro history_continue_chains(base_ctes, most) -%}
    {%- if not execute or model is not defined or model.resource_type != 'model'
        or flags.WHICH not in ['run', 'build'] -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set relation = history_scratch_relation('fold_keys') -%}
    {%- set state = namespace(reached=query_scalar(
        'select count(*) from ' ~ relation ~ ' where ' ~ history_chain_reached(1)
    ) | int) -%}
    {%- set columns = adapter.get_columns_in_relation(relation) | map(attribute='name') | list
        if state.reached > 0 else [] -%}
    {%- for round in range(2, most + 1) -%}
        {%- if state.reached > 0 -%}
            {%- do run_query(history_chain_round_sql(base_ctes, relation, columns, round)) -%}
            {%- set state.reached = query_scalar(
                'select count(*) from ' ~ relation ~ ' where ' ~ history_chain_reached(round)
            ) | int -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if state.reached > 0 -%}
        {%- do log(
            model.name ~ ': a chain of primary-key changes goes on past ' ~ most ~ ' links from a key this '
            ~ 'run touches; the keys after those are not folded again (history_continue_chains)'
        ) -%}
    {%- endif -%}
{%- endmacro %}


{#- The keys of fold_keys' scratch table that round `round` of history_continue_chains reached and the
    next round starts from: those without a new row change of their own (their continuing keys
    are in round 1 already). A key a round merges in has none (has_new_changes null). -#}
{% macro history_chain_reached(round) -%}
    continuing_round = {{ round }} and not coalesce(has_new_changes, false)
{%- endmacro %}


{#- One round of history_continue_chains: the MERGE that adds to `relation` (fold_keys' scratch
    table, with `columns`) the keys whose insert continues a key of round `round` - 1, as round
    `round`. A key already there that no round reached yet is folded again from now on; one a
    round reached stays as it is (so a chain that comes back to a key ends). -#}
{% macro history_chain_round_sql(base_ctes, relation, columns, round) -%}
merge into {{ relation }} as fold_keys
using (
    {{ base_ctes }},

    reached as (
        select key_hash from {{ relation }}
        where {{ history_chain_reached(round - 1) }}
    )

    {{ continuing_key_hashes('reached') }}
) as continuing
    on fold_keys.key_hash = continuing.key_hash
when matched and fold_keys.continuing_round is null then update set
    is_extended = false,
    continuing_round = {{ round }}
when not matched then insert ({{ columns | join(', ') }}) values (
    {%- for column in columns %}
    {{ 'continuing.key_hash' if column == 'key_hash' else 'false' if column == 'is_extended'
        else round if column == 'continuing_round' else 'null' }}{{ ',' if not loop.last }}
    {%- endfor %}
)
{%- endmacro %}


{#- The distinct keys of `row_changes` (silver's row changes, keyed_changes) whose insert continues a
    key of the relation or CTE `reached` (its few keys broadcast): the inserts of primary-key
    changes, whose before image names the key they continue. `condition`: one more, such as
    `false` when the run has nothing new. -#}
{% macro continuing_key_hashes(reached, condition='true') -%}
select /*+ broadcast({{ reached }}) */ distinct continuing.key_hash
from row_changes as continuing
inner join {{ reached }}
    on
        {{ previous_key_hash('continuing.table_id', 'continuing.before', 'continuing.primary_key') }}
        = {{ reached }}.key_hash
where
    {{ condition }}
    and continuing.operation = 'insert'
    and continuing.before is not null
{%- endmacro %}
