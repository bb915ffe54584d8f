{#-
  Typed relations of every source table, from its first build
  (gold.cdc_typed_tables, docs/contract.md, "Typed tables"): for each table
  in silver.cdc_table_columns, a view of its live rows (gold.<name>) and one
  of its history (gold.<name>_history), with lower-case column names and the
  Spark types of silver.cdc_table_columns. A table published as a dbt model
  (`python -m python_ingest scaffold`) keeps its model; every other table's
  two views are created here, by the pre-hook of gold.cdc_typed_tables, before
  the model records their definitions. Names follow scaffold's rules
  (cdc_tools/scaffold.py, default_publish_name and typed_columns).
-#}

{#- A lower-case identifier from a text expression, as scaffold's sanitize_identifier: each run of
    characters other than [a-z0-9] as one `_` (none at the ends), `prefix` before a leading digit. -#}
{% macro typed_identifier_sql(text, prefix) -%}
    element_at(transform(
        array(regexp_replace(regexp_replace(lower({{ text }}), '[^a-z0-9]+', '_'), '^_+|_+$', '')),
        cleaned -> case
            when cleaned = '' then '{{ prefix | replace("_", "") }}'
            when cleaned rlike '^[0-9]' then concat('{{ prefix }}', cleaned)
            else cleaned
        end
    ), 1)
{%- endmacro %}


{#- A Spark type name that a view can declare: the column's spark_type when it is one of the types
    the producers' macros give (with a decimal's precision and scale in range), else string. -#}
{% macro typed_checked_type_sql(spark_type) -%}
    element_at(transform(
        array(regexp_replace(lower(coalesce({{ spark_type }}, 'string')), '\\s+', '')),
        name -> case
            when name in (
                'string', 'boolean', 'tinyint', 'smallint', 'int', 'bigint', 'float', 'double',
                'date', 'timestamp', 'binary'
            ) then name
            when name in ('integer') then 'int'
            when name in ('long') then 'bigint'
            when name rlike '^decimal\\([0-9]{1,2},[0-9]{1,2}\\)$'
                and try_cast(regexp_extract(name, '\\(([0-9]+),', 1) as int) between 1 and 38
                and try_cast(regexp_extract(name, ',([0-9]+)\\)', 1) as int)
                <= try_cast(regexp_extract(name, '\\(([0-9]+),', 1) as int)
                then name
            else 'string'
        end
    ), 1)
{%- endmacro %}


{#- The names of the project's models in gold (published typed models included): a generated
    view never takes one, nor its `_history`. -#}
{% macro typed_taken_names() -%}
    {%- set names = [] -%}
    {%- if execute -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.schema == 'gold' -%}
            {%- do names.append((node.alias or node.name) | lower) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(names | sort) }}
{%- endmacro %}


{#- The definition of every source table's typed relations (the rows of gold.cdc_typed_tables). -#}
{% macro typed_relation_definitions() -%}
    {%- set taken = typed_taken_names() -%}
    {%- set taken_sql = "cast(array(" ~ (taken | map('tojson') | join(', ') | replace('"', "'")) ~ ") as array<string>)" -%}
    {%- set reserved = typed_metadata_columns() -%}
with

declared as (
    select
        table_id,
        nullif(trim(publish_as), '') as publish_as
    from {{ ref('cdc_tables') }}
),

registry as (
    select * from {{ ref('cdc_table_columns') }}
),

tables as (
    select
        table_id,
        split(table_id, '[.]') as parts
    from (select distinct table_id from registry) as known
),

suffixes as (
    -- Each table's name candidates, narrowest first: its last part, its last two parts, …
    select
        tables.table_id,
        width,
        array_join(slice(tables.parts, -width, width), '.') as suffix,
        {{ typed_identifier_sql("array_join(slice(tables.parts, -width, width), '_')", 't_') }} as name
    from tables
        lateral view explode(sequence(1, size(tables.parts))) as width
),

free_suffixes as (
    -- A candidate no other table shares, whose views no model of the project takes.
    select
        suffixes.*,
        count(*) over (partition by width, suffix) = 1 as is_unique
    from suffixes
),

named as (
    select
        tables.table_id,
        declared.publish_as,
        coalesce(
            declared.publish_as,
            min_by(
                case
                    when free_suffixes.is_unique
                        and not array_contains({{ taken_sql }}, free_suffixes.name)
                        and not array_contains({{ taken_sql }}, concat(free_suffixes.name, '_history'))
                        then free_suffixes.name
                end,
                case
                    when free_suffixes.is_unique
                        and not array_contains({{ taken_sql }}, free_suffixes.name)
                        and not array_contains({{ taken_sql }}, concat(free_suffixes.name, '_history'))
                        then free_suffixes.width
                end
            )
        ) as first_choice
    from tables
    left join declared on tables.table_id = declared.table_id
    left join free_suffixes on tables.table_id = free_suffixes.table_id
    group by tables.table_id, declared.publish_as
),

relation_names as (
    -- A name that another table's view takes too (or none free, or one longer than 100
    -- characters) falls back to the table's full name (its first 80 characters) and a hash of its
    -- id: `__` never occurs in a name made of one identifier.
    select
        named.table_id,
        named.publish_as,
        case
            when named.publish_as is null and (
                named.first_choice is null or clashes.names > 1 or length(named.first_choice) > 100
            )
                then concat(
                    substr({{ typed_identifier_sql("array_join(split(named.table_id, '[.]'), '_')", 't_') }}, 1, 80),
                    '__', substr(md5(named.table_id), 1, 8)
                )
            else named.first_choice
        end as relation_name
    from named
    left join (
        select
            name,
            count(*) as names
        from (
            select first_choice as name from named
            union all
            select concat(first_choice, '_history') as name from named
        ) as all_names
        group by name
    ) as clashes on named.first_choice = clashes.name
),

columns as (
    -- scaffold's typed_columns: in ordinal order; a name taken by a metadata column or an earlier
    -- column gets `source_` (then a number); one still taken, or longer than 100 characters, its
    -- first 80, `__` and its position.
    select
        table_id,
        column_name,
        ordinal,
        column_position,
        is_primary_key,
        data_type,
        case
            when count(*) over (partition by table_id, candidate) > 1 or length(candidate) > 100
                then concat(substr(candidate, 1, 80), '__', column_position)
            else candidate
        end as name
    from (
        select
            *,
            case
                when repeats = 0 then base
                when repeats = 1 then concat('source_', base)
                else concat('source_', base, '_', repeats)
            end as candidate
        from (
            select
                *,
                row_number() over (partition by table_id, base order by column_position)
                - case when array_contains(array({{ "'" ~ (reserved | join("', '")) ~ "'" }}), base) then 0 else 1 end
                    as repeats
            from (
                select
                    table_id,
                    column_name,
                    ordinal,
                    coalesce(is_primary_key, false) as is_primary_key,
                    {{ typed_checked_type_sql('spark_type') }} as data_type,
                    {{ typed_identifier_sql('column_name', 'c_') }} as base,
                    row_number() over (
                        partition by table_id order by ordinal is null, ordinal, column_name
                    ) as column_position
                from registry
            ) as based
        ) as repeated
    ) as candidates
),

typed as (
    select
        table_id,
        transform(
            array_sort(collect_list(struct(column_position, name, column_name, data_type, ordinal, is_primary_key))),
            c -> named_struct(
                'column_name', c.name,
                'source_column', c.column_name,
                'data_type', c.data_type,
                'ordinal', c.ordinal,
                'is_primary_key', c.is_primary_key
            )
        ) as columns
    from columns
    group by table_id
),

final as (
    select
        relation_names.table_id,
        relation_names.relation_name,
        concat(relation_names.relation_name, '_history') as history_relation_name,
        array_contains({{ taken_sql }}, relation_names.relation_name) as is_published,
        typed.columns,
        {#- An upper bound of the history view's text (typed_relation_view_sql): a column costs at
            most its escaped source name twice, its name, its type and 110 characters. -#}
        case
            when 400 + 2 * length(relation_names.table_id) + aggregate(
                typed.columns,
                cast(0 as bigint),
                (total, c) -> total + 2 * length(c.source_column) + length(c.column_name) + length(c.data_type) + 110
            ) > 30000
                then concat(
                    'Not typed: its ', size(typed.columns), ' columns would make a view text longer than the ',
                    'metastore keeps (32,700 characters). gold.cdc_current and gold.cdc_history hold its rows.'
                )
        end as untyped_reason,
        md5(to_json(named_struct(
            'version', '{{ typed_relations_version() }}',
            'relation_name', relation_names.relation_name,
            'is_published', array_contains({{ taken_sql }}, relation_names.relation_name),
            'columns', typed.columns
        ))) as fingerprint
    from relation_names
    inner join typed on relation_names.table_id = typed.table_id
)

select * from final
{%- endmacro %}


{#- Changes when the views' SQL (typed_relation_view_sql) changes, so that every view is made again. -#}
{% macro typed_relations_version() -%}
    3
{%- endmacro %}


{#- The `create view` statement of one generated typed relation (`row`: a row of
    gold.cdc_typed_tables; `history`: the history view, else the live-row view). -#}
{% macro typed_relation_view_sql(row, history) -%}
    {%- set metadata = typed_metadata_columns() if history else typed_current_metadata_columns() -%}
    {%- set descriptions = {} -%}
    {%- for column in history_metadata_columns() -%}
        {%- do descriptions.update({
            column.name: (column.description if history else column.get('current_description', column.description))
        }) -%}
    {%- endfor -%}
    {%- set name = row['history_relation_name'] if history else row['relation_name'] -%}
    {%- set expressions = [] -%}
    {%- set comments = [] -%}
    {%- for column in row['columns'] -%}
        {%- set raw = 'row_data[' ~ typed_text_literal(column['source_column']) ~ ']' -%}
        {%- do expressions.append(typed_value(raw, column['data_type']) ~ ' as `' ~ column['column_name'] ~ '`') -%}
        {%- do comments.append('`' ~ column['column_name'] ~ '` comment ' ~ typed_text_literal(metastore_comment_text(
            'Source column ' ~ column['source_column'] ~ ' (' ~ column['data_type']
            ~ (', part of the primary key' if column['is_primary_key'] else '') ~ ').'
        ))) -%}
    {%- endfor -%}
    {%- for column in metadata -%}
        {%- do expressions.append(column) -%}
        {%- do comments.append('`' ~ column ~ '` comment ' ~ typed_text_literal(descriptions[column])) -%}
    {%- endfor -%}
create view gold.`{{ name }}` (
    {{ comments | join(',\n    ') }}
)
comment {{ typed_text_literal(metastore_comment_text(
    ('SCD type-2 history' if history else 'The live rows') ~ ' of source table ' ~ row['table_id']
    ~ ', typed (made by the build: gold.cdc_typed_tables).'
)) }}
as select
    {{ expressions | join(',\n    ') }}
from {{ ref('cdc_history') if history else ref('cdc_current') }}
where table_id = {{ typed_text_literal(row['table_id']) }}
{%- endmacro %}


{#- The definitions (typed_relation_definitions) that differ from those `recorded` holds (a relation
    of gold.cdc_typed_tables' rows; none: all of them). -#}
{% macro typed_changed_definitions(recorded) -%}
    select defined.*
    from ({{ typed_relation_definitions() }}) as defined
    {%- if recorded is not none %}
    left anti join {{ recorded }} as recorded
        on defined.table_id = recorded.table_id and defined.fingerprint = recorded.fingerprint
    {%- endif %}
{%- endmacro %}


{#- Whether gold.cdc_typed_tables has nothing to do (the adapter's idle_models.sql), so that a
    build leaves it and its views as they are, with no new snapshot. New rows in gold.cdc_history
    change nothing here: the views read it by name. What can change a definition is in
    typed_relations_inputs, which the model keeps in its property cdc.typed_relations_inputs:
    - the same inputs as recorded: idle, without a query;
    - else one query compares the definitions with the recorded rows (the column registry
      commits whenever a column is seen again, mostly with no definition changed). None differs:
      idle, and the new inputs are recorded (a property, no snapshot), so the next build with
      nothing new asks no query. One differs: the model is built. -#}
{% macro typed_relations_unchanged() -%}
    {%- if not execute or not is_incremental() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set inputs = typed_relations_inputs() -%}
    {%- if iceberg_table_property(this, 'cdc.typed_relations_inputs') == inputs -%}
        {{ return(true) }}
    {%- endif -%}
    {%- if run_query('select 1 from (' ~ typed_changed_definitions(this) ~ ') as changed limit 1') | length > 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {%- do run_query(record_typed_relations_inputs(inputs)) -%}
    {{ return(true) }}
{%- endmacro %}


{#- Records for gold.cdc_typed_tables, as it compiles, whether it is idle (typed_relations_unchanged,
    the adapter's idle_models.sql); nothing outside a build (no model: sqlfluff's lint). -#}
{% macro mark_typed_relations_idle() -%}
    {%- if execute and model.resource_type == 'model' -%}
        {%- do set_model_idle(typed_relations_unchanged()) -%}
    {%- endif -%}
{%- endmacro %}


{#- An MD5 of what gold.cdc_typed_tables' rows are computed from: the definitions' SQL (with the
    taken names and typed_relations_version in it) and the read positions
    (iceberg_read_position) of the column registry and the seed. -#}
{% macro typed_relations_inputs() -%}
    {{ return(local_md5(
        typed_relation_definitions()
        ~ '|' ~ iceberg_read_position(ref('cdc_table_columns'))
        ~ '|' ~ iceberg_read_position(ref('cdc_tables'))
    )) }}
{%- endmacro %}


{#- Keeps typed_relations_inputs (or `inputs`, those just checked) in gold.cdc_typed_tables'
    property cdc.typed_relations_inputs: its post-hook, and typed_relations_unchanged when nothing
    needs building. -#}
{% macro record_typed_relations_inputs(inputs=none) -%}
    alter table {{ this }} set tblproperties (
        'cdc.typed_relations_inputs' = '{{ inputs if inputs is not none else typed_relations_inputs() }}'
    )
{%- endmacro %}


{#- Pre-hook of gold.cdc_typed_tables: makes the views of every table whose definition is new or
    changed since the model last recorded it (all of them on a first build or --full-refresh).
    The model records the definitions after this, so a build stopped in between makes them again. -#}
{% macro create_typed_relations() -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set existing = load_cached_relation(this) -%}
    {%- set query -%}
        select
            defined.table_id,
            defined.relation_name,
            defined.history_relation_name,
            to_json(defined.columns) as columns_json
        from ({{ typed_changed_definitions(this if existing is not none and not should_full_refresh() else none) }}) as defined
        where not defined.is_published and defined.untyped_reason is null
    {%- endset -%}
    {%- for found in run_query(query) -%}
        {%- set row = {
            'table_id': found['table_id'],
            'relation_name': found['relation_name'],
            'history_relation_name': found['history_relation_name'],
            'columns': fromjson(found['columns_json']),
        } -%}
        {%- for history in (false, true) -%}
            {#- Drop, then create: `create or replace` of an Iceberg view whose columns change leaves
                it unreadable (the adapter's views.sql, spark_embedded__create_view_as). -#}
            {%- do run_query('drop view if exists gold.`' ~ row['history_relation_name' if history else 'relation_name'] ~ '`') -%}
            {%- do run_query(typed_relation_view_sql(row, history)) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}
