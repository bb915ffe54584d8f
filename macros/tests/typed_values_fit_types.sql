{#-
  Generic data test of a typed history model (models/gold/published/): every
  value of the table in gold.cdc_history that is not null as text but does
  not fit the type its column declares (and so is null in the typed model).
  Returns the row's key and version, the column, the raw text and the
  declared type. Attached with severity warn by scaffold: a value is
  reported, never silently nulled.
-#}
{% test typed_values_fit_types(model, table_id) %}
    {%- set node = typed_model_node(model) -%}
    {%- set declared = typed_declared_source_columns(node) if node is not none else [] -%}
    with

    history as (
        select
            primary_key,
            version_number,
            row_data
        {#- All of the table's history when this build created or redefined the model. #}
        from {{ ref('cdc_history') if node is none or built_anew(node) else cdc_test_rows(ref('cdc_history')) }} as history_rows
        where table_id = {{ typed_text_literal(table_id) }}
    ),

    {% if declared -%}
        checked as (
            select
                history.primary_key,
                history.version_number,
                value_check.column_name,
                value_check.source_column,
                value_check.raw_value,
                value_check.declared_type,
                value_check.fits
            from history
                lateral view explode(array(
                    {%- for column in declared %}
                        {%- set raw = 'row_data[' ~ typed_text_literal(column.source_column) ~ ']' %}
                        named_struct(
                            'column_name', {{ typed_text_literal(column.name) }},
                            'source_column', {{ typed_text_literal(column.source_column) }},
                            'raw_value', {{ raw }},
                            'declared_type', {{ typed_text_literal(column.data_type) }},
                            'fits', ({{ typed_value(raw, column.data_type) }}) is not null
                        ){{ ',' if not loop.last }}
                    {%- endfor %}
                )) as value_check
        )
    {%- else -%}
        checked as (
            select
                primary_key,
                version_number,
                cast(null as string) as column_name,
                cast(null as string) as source_column,
                cast(null as string) as raw_value,
                cast(null as string) as declared_type,
                true as fits
            from history
        )
    {%- endif %}

    select
        primary_key,
        version_number,
        column_name,
        source_column,
        raw_value,
        declared_type
    from checked
    where raw_value is not null and not fits
{% endtest %}
