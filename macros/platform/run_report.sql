{#-
  What became of the messages a build decided (docs/operations.md, "What a build says about its
  messages"): the rows of every producer's outcome model (int_<producer>__message_outcomes)
  staged by the build, reported per producer at the end of `dbt build` (on-run-end hook
  report_message_outcomes) and checked against a threshold by the data test
  warn_when_a_build_quarantines_too_many_messages.
-#}

{% macro run_outcome_rows(relations, start) -%}
    {#- SQL: `source_format`, `outcome`, `detail` of the rows of the outcome tables `relations`
        staged at or after `start` (text, UTC), or of every row when `start` is none. -#}
    {%- for relation in relations %}
    select source_format, outcome, detail
    from {{ relation }}
    {%- if start is not none %}
    where staged_at >= {{ timestamp_literal(start) }}
    {%- endif %}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
{%- endmacro %}


{% macro quarantine_threshold() -%}
    {#- The share of a build's messages above which it warns (var cdc_max_quarantined_share, default 1 %). -#}
    {{ return(var('cdc_max_quarantined_share', 0.01) | float) }}
{%- endmacro %}


{% macro outcome_tables() -%}
    {#- The relations of the producers' outcome models that exist (none before a first build). -#}
    {%- set relations = [] -%}
    {%- for name in cdc_producer_names() -%}
        {%- set node = graph.nodes.get('model.' ~ project_name ~ '.int_' ~ name ~ '__message_outcomes') -%}
        {%- if node is not none -%}
            {%- set relation = adapter.get_relation(
                database=node.database, schema=node.schema, identifier=node.alias or node.name
            ) -%}
            {%- if relation is not none -%}
                {%- do relations.append(relation) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(relations) }}
{%- endmacro %}


{% macro report_message_outcomes() -%}
    {#-
      An on-run-end hook: at the end of `dbt build` (or `dbt run`), one line per producer with the
      messages the build staged and how many of them were applied (outcome `change`), duplicate,
      control, pending and quarantined, the most frequent quarantine reasons, and a warning line
      when the quarantined share passes quarantine_threshold(). Logged, nothing to execute.
    -#}
    {%- if execute and flags.WHICH in ('build', 'run') and cdc_test_scope_start() is not none -%}
        {%- set relations = outcome_tables() -%}
        {%- if relations | length > 0 -%}
            {%- set rows_sql = run_outcome_rows(relations, none if flags.FULL_REFRESH else cdc_test_scope_start()) -%}
            {%- set counts = run_query(
                'select source_format, outcome, count(*) as messages from (' ~ rows_sql ~ ') as decided '
                ~ 'group by source_format, outcome'
            ) -%}
            {%- set reasons = run_query(
                'select source_format, detail, count(*) as messages from (' ~ rows_sql ~ ') as decided '
                ~ "where outcome = 'quarantined' group by source_format, detail "
                ~ 'order by messages desc, source_format, detail limit 5'
            ) -%}
            {{ log(outcome_report_lines(counts, reasons) | join('\n'), info=True) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}


{% macro outcome_report_lines(counts, reasons) -%}
    {#- The report's lines from the query results of report_message_outcomes (agate tables). -#}
    {%- set per_producer = {} -%}
    {%- for row in counts.rows -%}
        {%- do per_producer.setdefault(row[0], {}).update({row[1]: row[2] | int}) -%}
    {%- endfor -%}
    {%- set lines = ['Messages this build decided (silver.cdc_message_outcomes):'] -%}
    {%- if per_producer | length == 0 -%}
        {%- do lines.append('  none: nothing new was landed since the last build') -%}
    {%- endif -%}
    {%- set totals = {'staged': 0, 'quarantined': 0} -%}
    {%- for producer in per_producer | sort -%}
        {%- set found = per_producer[producer] -%}
        {%- set staged = found.values() | sum -%}
        {%- do totals.update({
            'staged': totals.staged + staged, 'quarantined': totals.quarantined + found.get('quarantined', 0)
        }) -%}
        {%- do lines.append(
            '  ' ~ producer ~ ': ' ~ staged ~ ' staged: ' ~ found.get('change', 0) ~ ' applied, '
            ~ found.get('duplicate', 0) ~ ' duplicate, ' ~ found.get('control', 0) ~ ' control, '
            ~ found.get('pending', 0) ~ ' pending, ' ~ found.get('quarantined', 0) ~ ' quarantined'
        ) -%}
    {%- endfor -%}
    {%- for row in reasons.rows -%}
        {%- set reason = row[1] if row[1] | length <= 160 else row[1][:157] ~ '...' -%}
        {%- do lines.append('    ' ~ row[2] ~ ' x ' ~ row[0] ~ ': ' ~ reason) -%}
    {%- endfor -%}
    {%- if totals.quarantined > 0 -%}
        {%- set share = totals.quarantined / totals.staged -%}
        {%- set where = 'read silver.cdc_quarantine for every message and its reason' -%}
        {%- if share > quarantine_threshold() -%}
            {%- do lines.append(
                'WARNING: ' ~ totals.quarantined ~ ' of ' ~ totals.staged ~ ' messages ('
                ~ '%.1f' | format(share * 100) ~ ' %) were quarantined, above the threshold of '
                ~ '%g' | format(quarantine_threshold() * 100) ~ ' % (var cdc_max_quarantined_share): ' ~ where
            ) -%}
        {%- else -%}
            {%- do lines.append('  ' ~ totals.quarantined ~ ' quarantined: ' ~ where) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(lines) }}
{%- endmacro %}
