{#-
  Generic data test of a typed history model (models/gold/published/): the
  columns of its source table in silver.cdc_table_columns that the model does
  not declare, or declares with another type (a column added or retyped at
  the source after the model was scaffolded). Attached with severity warn by
  scaffold; each row says what to do: re-run scaffold, which adds the column
  (or its new type) to the model, and `dbt build` recreates the view.
-#}
{% test source_columns_are_published(model, table_id) %}
    {%- set node = typed_model_node(model) -%}
    {%- set declared = typed_declared_source_columns(node) if node is not none else [] -%}
    with

    registry as (
        select
            column_name,
            ordinal,
            source_type,
            coalesce(spark_type, 'string') as spark_type
        from {{ ref('cdc_table_columns') }}
        where table_id = {{ typed_text_literal(table_id) }}
    ),

    declared as (
        {% if declared -%}
            select * from values
            {%- for column in declared %}
                ({{ typed_text_literal(column.source_column) }}, {{ typed_text_literal(column.data_type | lower) }})
                {{- ',' if not loop.last }}
            {%- endfor %}
            as declared_columns (source_column, data_type)
        {%- else -%}
            select
                cast(null as string) as source_column,
                cast(null as string) as data_type
            where false
        {%- endif %}
    ),

    final as (
        select
            registry.column_name,
            registry.ordinal,
            registry.source_type,
            registry.spark_type,
            declared.data_type as declared_type,
            concat(
                'source column ', registry.column_name, ' (', registry.spark_type, ') of ',
                {{ typed_text_literal(table_id) }},
                case when declared.source_column is null then ' is not in ' else ' has another type in ' end,
                {{ typed_text_literal(model.identifier) }},
                ': run `python -m python_ingest scaffold`, then `dbt build`'
            ) as remedy
        from registry
        left join declared
            on registry.column_name = declared.source_column
        where declared.source_column is null or lower(registry.spark_type) <> declared.data_type
    )

    select * from final
{% endtest %}
