{#-
  Typed, per-table gold models for analysts (models/gold/published/, written
  by `python -m python_ingest scaffold` from seeds/cdc_tables.csv). Each
  model is one call of typed_history / typed_current; its columns are the
  model's own YAML columns (`model.columns`): a column whose meta has
  `source_column` is that source column read from `row_data` and converted
  to its `data_type`; the others are metadata columns of gold.cdc_history.
  A value that does not fit its type is null here and reported by the warn
  test typed_values_fit_types.
-#}

{#- The metadata columns of gold.cdc_history a typed history model may declare (history_metadata_columns). -#}
{% macro typed_metadata_columns() -%}
    {{ return(history_metadata_columns() | map(attribute='name') | list) }}
{%- endmacro %}


{#- Those of them a typed live-row model may declare (from gold.cdc_current). -#}
{% macro typed_current_metadata_columns() -%}
    {%- set columns = history_metadata_columns() | selectattr('current_description', 'defined') -%}
    {{ return(columns | map(attribute='name') | list) }}
{%- endmacro %}


{#- A Spark string literal of a text (a map key of row_data). -#}
{% macro typed_text_literal(text) -%}
    '{{ text | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}


{#- The source column a declared column reads, or none for a metadata column. -#}
{% macro typed_source_column(column) -%}
    {%- set meta = column.get('meta') or {} -%}
    {%- set config_meta = (column.get('config') or {}).get('meta') or {} -%}
    {{ return(config_meta.get('source_column', meta.get('source_column'))) }}
{%- endmacro %}


{#- The declared source columns of a model node (dict), in YAML order. -#}
{% macro typed_declared_source_columns(node) -%}
    {%- set declared = [] -%}
    {%- for column in node.columns.values() -%}
        {%- set source_column = typed_source_column(column) -%}
        {%- if source_column is not none -%}
            {%- do declared.append({
                'name': column.name, 'source_column': source_column, 'data_type': column.data_type or 'string'
            }) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(declared) }}
{%- endmacro %}


{#- A contract-text value (docs/contract.md, "Values as text") as a value of a Spark type; null when
    it does not fit the type. -#}
{% macro typed_value(raw, data_type) -%}
    {%- set spark_type = (data_type or 'string') | lower | trim -%}
    {%- if spark_type == 'string' -%}
        {{ raw }}
    {%- elif spark_type == 'boolean' -%}
        case lower({{ raw }}) when 'true' then true when 'false' then false end
    {%- elif spark_type == 'timestamp' -%}
        try_to_timestamp({{ raw }}, 'yyyy-MM-dd HH:mm:ss[.SSSSSS]')
    {%- elif spark_type == 'date' -%}
        cast(try_to_timestamp({{ raw }}, 'yyyy-MM-dd') as date)
    {%- elif spark_type == 'binary' -%}
        try_to_binary({{ raw }}, 'base64')
    {%- else -%}
        try_cast({{ raw }} as {{ spark_type }})
    {%- endif -%}
{%- endmacro %}


{#- The select list of a typed model: its YAML columns, in order. -#}
{% macro typed_select_list(metadata_columns) -%}
    {%- if execute and model.columns | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            'Typed model ' ~ model.name ~ ' declares no columns: run `python -m python_ingest scaffold`.'
        ) }}
    {%- endif -%}
    {%- set expressions = [] -%}
    {%- for column in model.columns.values() -%}
        {%- set source_column = typed_source_column(column) -%}
        {%- if source_column is not none -%}
            {%- set raw = 'row_data[' ~ typed_text_literal(source_column) ~ ']' -%}
            {%- do expressions.append(typed_value(raw, column.data_type) ~ ' as `' ~ column.name ~ '`') -%}
        {%- elif column.name in metadata_columns -%}
            {%- do expressions.append(column.name) -%}
        {%- else -%}
            {{ exceptions.raise_compiler_error(
                'Column ' ~ column.name ~ ' of ' ~ model.name ~ ' is neither a source column (meta.source_column) '
                ~ 'nor one of ' ~ (metadata_columns | join(', '))
            ) }}
        {%- endif -%}
    {%- endfor -%}
    {{ expressions | join(',\n    ') }}
{%- endmacro %}


{#- gold.<name>_history: the SCD type-2 versions of one source table, typed. -#}
{% macro typed_history(table_id) -%}
select
    {{ typed_select_list(typed_metadata_columns()) }}
from {{ ref('cdc_history') }}
where table_id = {{ typed_text_literal(table_id) }}
{%- endmacro %}


{#- gold.<name>: the live rows of one source table, typed. -#}
{% macro typed_current(table_id) -%}
select
    {{ typed_select_list(typed_current_metadata_columns()) }}
from {{ ref('cdc_current') }}
where table_id = {{ typed_text_literal(table_id) }}
{%- endmacro %}


{#- The model node (dict) of a relation, found in the graph; none at parse time. -#}
{% macro typed_model_node(relation) -%}
    {%- if execute -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
            {%- if (node.alias or node.name) | lower == relation.identifier | lower
                and node.schema | lower == relation.schema | lower -%}
                {{ return(node) }}
            {%- endif -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error('No model in the project builds ' ~ relation) }}
    {%- endif -%}
    {{ return(none) }}
{%- endmacro %}
