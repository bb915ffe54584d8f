{#-
  Reading an Iceberg table incrementally from a model whose own columns are
  fixed by contract: the model remembers, in a table property of its own,
  how far it has read the upstream table (a read position), and the next
  run reads only the rows of data files committed after it.
-#}

{% macro iceberg_read_position(relation) -%}
    {#-
      The read position of `relation` now, as text `<snapshot id>:<sequence
      number>`: its current snapshot and that snapshot's sequence number,
      which no data file committed so far exceeds and every later commit
      does. '' on an empty table. A session target reads it through
      Iceberg's API (adapter iceberg_table_facts); another, from the table's
      newest metadata log entry, so no manifest is read.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- if in_session_target() -%}
        {{ return(adapter.iceberg_table_facts(relation | string).position) }}
    {%- endif -%}
    {%- set rows = run_query(
        "select cast(latest_snapshot_id as string), cast(latest_sequence_number as string)"
        ~ " from " ~ relation ~ ".metadata_log_entries order by timestamp desc limit 1"
    ).rows -%}
    {%- if rows | length == 0 or rows[0][0] is none or rows[0][1] is none -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(rows[0][0] ~ ':' ~ rows[0][1]) }}
{%- endmacro %}


{% macro iceberg_read_after(relation, position) -%}
    {#-
      The data sequence number after which rows of `relation` are new to a
      model that read it up to `position` (from iceberg_read_position): -1,
      meaning every row, when there is no position or its snapshot is no
      longer in the table's history (the table was recreated, e.g. by a full
      refresh, or its snapshots expired).
    -#}
    {%- if not execute or not position or ':' not in position -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set snapshot_id, sequence_number = position.split(':') -%}
    {%- if in_session_target() -%}
        {%- set known = adapter.iceberg_table_facts(relation | string, snapshot_id | int).has_snapshot -%}
        {{ return((sequence_number | int) if known else -1) }}
    {%- endif -%}
    {%- set known = run_query(
        'select count(*) from ' ~ relation ~ '.snapshots where snapshot_id = ' ~ (snapshot_id | int)
    ).rows[0][0] -%}
    {{ return((sequence_number | int) if known > 0 else -1) }}
{%- endmacro %}


{% macro iceberg_new_files(relation, after_sequence, bound_column=none) -%}
    {#-
      The live data files of `relation` committed with a data sequence number
      above `after_sequence`, as a dict: `filter` (the condition selecting
      them in its `entries` metadata table), `count`, and `lower_bound` (the
      smallest value of the column `bound_column` in them, as text; none
      without a bound column, without new files or without column
      statistics). `count` and `lower_bound` are none at parse time. One
      query (iceberg_new_files_each).
    -#}
    {{ return(iceberg_new_files_each([relation], [after_sequence], bound_column)[0]) }}
{%- endmacro %}


{% macro iceberg_new_files_each(relations, after_sequences, bound_column=none, landed=false) -%}
    {#-
      iceberg_new_files for each of `relations`, after the data sequence
      number at the same place in `after_sequences`, in one query over their
      `entries` metadata tables (none for an empty list): a list of those
      dicts, in the order of `relations`. With `landed`, each also has
      `landed_since`: the smallest ingested_at in its new files, as text,
      from their column statistics; none when a new file has no such
      statistic (the files' rows may then be older than any bound known), or
      at parse time; '9999-12-31 23:59:59' with no new file.
    -#}
    {%- set filters = [] -%}
    {%- for after_sequence in after_sequences -%}
        {%- do filters.append(iceberg_new_files_filter(after_sequence)) -%}
    {%- endfor -%}
    {%- set found = {} -%}
    {%- if execute and relations -%}
        {%- set bound_select = 'cast(min(readable_metrics.' ~ bound_column ~ '.lower_bound) as string)' if bound_column else 'null' -%}
        {%- set landed_select = 'case when count(readable_metrics.ingested_at.lower_bound) = count(*)'
            ~ ' then cast(min(readable_metrics.ingested_at.lower_bound) as string) end' if landed else 'null' -%}
        {%- set queries = [] -%}
        {%- for relation in relations -%}
            {%- do queries.append(
                'select ' ~ loop.index0 ~ ' as relation_index, count(*) as files, ' ~ bound_select ~ ' as lower_bound, '
                ~ landed_select ~ ' as landed_since from ' ~ relation ~ '.entries where ' ~ filters[loop.index0]
            ) -%}
        {%- endfor -%}
        {%- for row in run_query(queries | join(' union all ')).rows -%}
            {%- do found.update({row[0] | int: row}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set files = [] -%}
    {%- for relation in relations -%}
        {%- set row = found.get(loop.index0) -%}
        {%- set landed_since = none -%}
        {%- if row is not none and landed -%}
            {%- set landed_since = row[3] if row[1] > 0 else '9999-12-31 23:59:59' -%}
        {%- endif -%}
        {%- do files.append({
            'filter': filters[loop.index0],
            'count': row[1] if row is not none else none,
            'lower_bound': row[2] if row is not none else none,
            'landed_since': landed_since,
        }) -%}
    {%- endfor -%}
    {{ return(files) }}
{%- endmacro %}


{% macro iceberg_new_files_filter(after_sequence) -%}
    {#- The condition on a table's `entries` metadata table selecting its live data files committed with a data sequence number above `after_sequence`. -#}
    {{ return('status <> 2 and data_file.content = 0 and sequence_number > ' ~ after_sequence) }}
{%- endmacro %}


{% macro iceberg_lower_bound_condition(column, lower_bound) -%}
    {#-
      The condition that keeps the rows whose timestamp `column` is at or
      above `lower_bound` (text), or null: the new files' lower bound in the
      column's statistics ignores nulls, and a row must not be lost for one.
      Iceberg skips a data file whose values are all below the bound and that
      holds no null in the column.
    -#}
    {{ return('(' ~ column ~ ' >= ' ~ timestamp_literal(lower_bound) ~ ' or ' ~ column ~ ' is null)') }}
{%- endmacro %}


{% macro iceberg_rows_after(relation, after_sequence, bound_column=none, new_files=none) -%}
    {#-
      The rows of `relation` stored in data files committed with a data
      sequence number above `after_sequence` (-1: every row), as a dict:
      `sql`, selecting them with all of the table's columns, and `is_empty`,
      true when the model runs and there is no such file (then the SQL
      selects nothing without reading the table; false at parse time).
      `bound_column`, a timestamp column whose value only grows from one
      commit to the next (a processing time such as staged_at), lets Iceberg
      skip the older data files: the rows are bounded below by its smallest
      value in the new files. `new_files`: those files as iceberg_new_files
      (or iceberg_new_files_each) gives them, when asked already.
    -#}
    {%- if after_sequence < 0 -%}
        {{ return({'sql': 'select * from ' ~ relation, 'is_empty': false}) }}
    {%- endif -%}
    {%- set new_files = new_files if new_files is not none else iceberg_new_files(relation, after_sequence, bound_column) -%}
    {%- set sql -%}
    select rows_after.*
    from {{ relation }} as rows_after
    left semi join (
        select data_file.file_path
        from {{ relation }}.entries
        where {{ new_files.filter }}
    ) as new_files
        on rows_after._file = new_files.file_path
    {%- if new_files.count == 0 %}
    where false
    {%- elif new_files.lower_bound is not none %}
    where {{ iceberg_lower_bound_condition('rows_after.' ~ bound_column, new_files.lower_bound) }}
    {%- endif %}
    {%- endset -%}
    {{ return({'sql': sql, 'is_empty': new_files.count == 0}) }}
{%- endmacro %}


{% macro read_position_property(upstream) -%}
    {#- The table property in which a model keeps its read position of `upstream`. -#}
    {{ return('cdc.read.' ~ upstream.identifier) }}
{%- endmacro %}


{% macro new_rows_of(upstream, bound_column=none) -%}
    {#-
      The rows of the Iceberg table `upstream` that the model being built
      has not read yet: those committed after the read position kept in its
      table property (record_read_positions); every row on a first or
      full-refresh build. A dict, as from iceberg_rows_after: `sql` and
      `is_empty` (nothing new to read). `bound_column`: see iceberg_rows_after.
    -#}
    {{ return(new_rows_of_each([upstream], bound_column)[upstream.identifier]) }}
{%- endmacro %}


{% macro new_rows_of_each(upstreams, bound_column=none, landed=false) -%}
    {#-
      new_rows_of for each of `upstreams`, a dict by upstream identifier,
      with one query over their metadata for all of them
      (iceberg_new_files_each) rather than one each. With `landed`, each
      dict also has `landed_since`: the smallest ingested_at of its new rows
      or less, as text, from the new files' column statistics: '9999-12-31
      23:59:59' when nothing is new, none when it is not known (every row is
      read, or a new file has no statistic for ingested_at).
    -#}
    {%- set reads = {} -%}
    {%- set asked = {'relations': [], 'after': []} -%}
    {%- for upstream in upstreams -%}
        {%- if model_is_idle() -%}
            {%- do reads.update({upstream.identifier: {
                'sql': 'select * from ' ~ upstream ~ ' where false', 'is_empty': true,
                'landed_since': '9999-12-31 23:59:59',
            }}) -%}
        {%- else -%}
            {%- set position = iceberg_table_property(this, read_position_property(upstream)) if is_incremental() else none -%}
            {%- set after = iceberg_read_after(upstream, position) -%}
            {%- if after < 0 -%}
                {%- do reads.update({upstream.identifier: {
                    'sql': 'select * from ' ~ upstream, 'is_empty': false, 'landed_since': none,
                }}) -%}
            {%- else -%}
                {%- do asked.relations.append(upstream) -%}
                {%- do asked.after.append(after) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set files = iceberg_new_files_each(asked.relations, asked.after, bound_column, landed) -%}
    {%- for upstream in asked.relations -%}
        {%- set rows = iceberg_rows_after(upstream, asked.after[loop.index0], bound_column, files[loop.index0]) -%}
        {%- do rows.update({'landed_since': files[loop.index0].landed_since}) -%}
        {%- do reads.update({upstream.identifier: rows}) -%}
    {%- endfor -%}
    {{ return(reads) }}
{%- endmacro %}


{% macro record_read_positions(upstreams) -%}
    {#-
      A post-hook of a model that reads `upstreams` with new_rows_of: keeps
      how far it has read each of them (iceberg_read_position) in its table
      properties, in one commit. Upstream models finish before this one
      starts, so their position now is the one the model has just read.
    -#}
    alter table {{ this }} set tblproperties (
        {%- for upstream in upstreams %}
        '{{ read_position_property(upstream) }}' = '{{ iceberg_read_position(upstream) }}'
        {{- ',' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
