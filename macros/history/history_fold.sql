{#-
  The versions of one key from its changes: a left fold (Spark `aggregate`)
  over the key's changes in sequence order, each change either opening a
  new version or updating the last one in place (history_step). Row images
  carry forward the columns a change did not send; a truncate of a key that
  is not live is skipped.

  Linear in a key's changes: Spark's `aggregate` copies its whole state at
  every step, so a single fold whose state holds every version so far costs
  the square of the key's changes (docs/benchmarks.md, "A hot key's history
  costs the square of its changes"). A step reads only the last version, so
  a key with more than `chunk_size` changes is folded in chunks of that
  many: a first pass carries only the last version from chunk to chunk (the
  state each chunk starts from), then each chunk is folded from its start
  on its own, and the chunks' versions are joined, each chunk's first
  version replacing the last version of the chunk before (the same version,
  updated in place by the chunk's first changes or not). Only the list of
  chunk starts still grows at every step of its fold, one version a chunk:
  quadratic in the number of chunks, small against the chunks' folds up to
  millions of changes a key.

  `start` is the state the fold starts from: an empty history (the default),
  or, to extend a key's stored history with changes that all come after it,
  its current version alone (history_start), so that the versions the fold
  returns are that version, updated in place or not, and the ones after it.
-#}

{% macro history_fold(changes, scd_type='2', ignore_columns='cast(array() as array<string>)', collapse_transactions='false', chunk_size=128, start=none) -%}
    {%- set start = start if start is not none else empty_history() -%}
    {%- set step = history_step(scd_type, ignore_columns, collapse_transactions) -%}
    case
        when size({{ changes }}) <= {{ chunk_size }}
            then aggregate({{ changes }}, {{ start }}, (acc, change) -> {{ step }})
        else element_at(transform(
            array(transform(
                sequence(0, (size({{ changes }}) - 1) div {{ chunk_size }}),
                fold_index -> slice({{ changes }}, fold_index * {{ chunk_size }} + 1, {{ chunk_size }})
            )),
            fold_chunks -> element_at(transform(
                {#- The state each chunk starts from: the last version after the chunks before it. #}
                array(aggregate(
                    slice(fold_chunks, 1, size(fold_chunks) - 1),
                    array({{ start }}),
                    (fold_starts, fold_chunk) -> concat(fold_starts, array(aggregate(
                        fold_chunk, element_at(fold_starts, -1), (acc, change) -> slice({{ step }}, -1, 1)
                    )))
                )),
                fold_starts -> flatten(transform(fold_chunks, (fold_chunk, fold_index) -> element_at(transform(
                    array(aggregate(fold_chunk, element_at(fold_starts, fold_index + 1), (acc, change) -> {{ step }})),
                    fold_versions -> case
                        when fold_index < size(fold_chunks) - 1
                            then slice(fold_versions, 1, greatest(size(fold_versions) - 1, 0))
                        else fold_versions
                    end
                ), 1)))
            ), 1)
        ), 1)
    end
{%- endmacro %}


{#-
  One step of history_fold: the versions `acc` (the fold's state; only its
  last version is read) after the change `change`, both lambda variables of
  the fold.
-#}

{% macro history_step(scd_type, ignore_columns, collapse_transactions) -%}
    {%- set last = 'element_at(acc, -1)' -%}
    {%- set is_live = '(size(acc) > 0 and not element_at(acc, -1).is_deleted)' -%}
    {%- set deletes = "change.operation in ('delete', 'truncate')" -%}
    {%- set empty_image = 'cast(map() as map<string, string>)' -%}
    {#- The change's row image: computed once per change and bound to `image`
        in the step below (a one-element transform), not repeated in each use. -#}
    {%- set opens_row = "change.operation in ('insert', 'snapshot') and not " ~ is_live -%}
    {%- set image_expression -%}
        case
            when {{ deletes }}
                then coalesce({{ last }}.row_data, change.before, {{ empty_image }})
            when {{ opens_row }} and change.carried is null
                then coalesce(change.after, {{ empty_image }})
            {#- The insert of a key change continues the old key's row: the columns it did not send
                keep the old key's last values (`carried`, cdc_history). Any other change lays its
                columns over the live image, or its before image. One merge_images for both: each
                copy of the step is planned again in every fold pass. #}
            else {{ merge_images(
                'case when ' ~ opens_row ~ ' then change.carried else coalesce(case when ' ~ is_live
                ~ ' then ' ~ last ~ '.row_data end, change.before, ' ~ empty_image ~ ') end',
                'coalesce(change.after, ' ~ empty_image ~ ')'
            ) }}
        end
    {%- endset -%}
    {%- set image = 'image' -%}
    {#- Columns whose value this change alters, compared with the live version. -#}
    {%- set altered = changed_keys(last ~ '.row_data', image) -%}
    {%- set replaces_version = 'size(acc) > 0 and ' ~ scd_type ~ ' = 1' -%}
    {%- set joins_transaction -%}
        size(acc) > 0 and {{ collapse_transactions }}
        and change.transaction_id is not null and change.transaction_id = {{ last }}.transaction_id
    {%- endset -%}
    {%- set touches_only_ignored -%}
        {{ is_live }} and not {{ deletes }} and size({{ ignore_columns }}) > 0
        and size({{ altered }}) > 0 and size(array_except({{ altered }}, {{ ignore_columns }})) = 0
    {%- endset -%}
    element_at(transform(array({{ image_expression }}), image -> case
        when change.operation = 'truncate' and not {{ is_live }} then acc
        when {{ replaces_version }} then concat(slice(acc, 1, size(acc) - 1), array({{ history_version(
            '1', 'change.change_id', 'change.sequence', 'change.operation', 'change.commit_ts', deletes, image
        ) }}))
        when {{ joins_transaction }} then concat(slice(acc, 1, size(acc) - 1), array({{ history_version(
            last ~ '.version_number', last ~ '.change_id', last ~ '.sequence',
            'case when ' ~ deletes ~ ' or ' ~ last ~ '.is_deleted then change.operation else ' ~ last ~ '.operation end',
            last ~ '.commit_ts', deletes, image
        ) }}))
        when {{ touches_only_ignored }} then concat(slice(acc, 1, size(acc) - 1), array({{ history_version(
            last ~ '.version_number', last ~ '.change_id', last ~ '.sequence', last ~ '.operation',
            last ~ '.commit_ts', 'false', image
        ) }}))
        else concat(acc, array({{ history_version(
            'case when size(acc) > 0 then ' ~ last ~ '.version_number + 1 else 1 end',
            'change.change_id', 'change.sequence', 'change.operation', 'change.commit_ts', deletes, image
        ) }}))
    end), 1)
{%- endmacro %}


{#- The fields of one version in the fold's state, in order, with their Spark
    types: the metadata columns of gold.cdc_history it carries (their types
    from history_metadata_columns), the source position (`sequence`) of the
    change that started it, the commit time of that change (valid_from's
    type), the transaction of its last change, and its row image. -#}
{% macro history_version_fields() -%}
    {%- set types = {} -%}
    {%- for column in history_metadata_columns() -%}
        {%- do types.update({column.name: column.data_type}) -%}
    {%- endfor -%}
    {{ return([
        ('version_number', types.version_number),
        ('change_id', types.change_id),
        ('sequence', 'string'),
        ('operation', types.operation),
        ('commit_ts', types.valid_from),
        ('transaction_id', 'string'),
        ('is_deleted', types.is_deleted),
        ('row_data', 'map<string,string>'),
    ]) }}
{%- endmacro %}


{#- One version in the fold's state (of the type of empty_history), for the change `change` of the fold. -#}
{% macro history_version(version_number, change_id, sequence, operation, commit_ts, is_deleted, row_data, transaction_id='change.transaction_id') -%}
    {%- set values = {
        'version_number': version_number,
        'change_id': change_id,
        'sequence': sequence,
        'operation': operation,
        'commit_ts': commit_ts,
        'transaction_id': transaction_id,
        'is_deleted': is_deleted,
        'row_data': row_data,
    } -%}
    {%- set fields = [] -%}
    {%- for name, data_type in history_version_fields() -%}
        {%- do fields.append('cast(' ~ values[name] ~ ' as ' ~ data_type ~ ') as ' ~ name) -%}
    {%- endfor -%}
    struct(
        {{ fields | join(',\n        ') }}
    )
{%- endmacro %}


{#- The type of the fold's state: an array of versions. -#}
{% macro history_type() -%}
    {%- set fields = [] -%}
    {%- for name, data_type in history_version_fields() -%}
        {%- do fields.append(name ~ ':' ~ data_type) -%}
    {%- endfor -%}
    array<struct<{{ fields | join(', ') }}>>
{%- endmacro %}


{#- An empty history: the start value of the fold in cdc_history. -#}
{% macro empty_history() -%}
    cast(array() as {{ history_type() }})
{%- endmacro %}


{#- A history of one stored version, to start a fold from (history_fold's `start`): the
    arguments are SQL expressions of its fields, `commit_ts` the version's valid_from (the
    latest commit time of the versions up to it). -#}
{% macro history_start(version_number, change_id, sequence, operation, commit_ts, transaction_id, is_deleted, row_data) -%}
    cast(array({{ history_version(
        version_number, change_id, sequence, operation, commit_ts, is_deleted, row_data, transaction_id
    ) }}) as {{ history_type() }})
{%- endmacro %}
