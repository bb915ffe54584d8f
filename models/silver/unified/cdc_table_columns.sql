{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['table_id', 'column_name'],
        on_schema_change='fail',
    )
}}

{#-
  Column registry: one row per source table and column ever seen, fed by
  each producer's column metadata: by default the `source_columns` (an
  array of column_name, ordinal, source_type, spark_type, is_primary_key)
  of its int_<producer>__changes (CES `eventsource.cols`, Debezium value
  schemas or declared columns, DataWorks `dataColumn`); a producer whose
  columns come from elsewhere has its own `<producer>_column_facts(since)`
  macro (Qlik Replicate: its table versions, macros/qlik/qlik_column_facts.sql). Ordinal, types and key
  membership are those of the latest change that carried the column (by
  sequence); first / last seen are commit times. Typed gold tables take their
  Spark types from here. Incremental: a run folds the changes staged since
  its last run into the rows of the columns they carry.
-#}

{%- set since = last_staged_at('updated_at') %}

with

observed as (
    {% for producer in cdc_producer_names() -%}
        {%- set own_step = producer_step(producer, 'column_facts') -%}
        {%- if own_step is not none -%}
            {{ own_step(since) }}
        {%- else -%}
            {%- set changes = ref('int_' ~ producer ~ '__changes') -%}
            select
                changes.table_id,
                source_column.column_name,
                struct(changes.sequence, changes.change_id) as seen_order,
                changes.sequence,
                changes.change_id,
                source_column.ordinal,
                source_column.source_type,
                source_column.spark_type,
                source_column.is_primary_key,
                changes.commit_ts as first_seen_at,
                changes.commit_ts as last_seen_at
            from {{ changes }} as changes
                lateral view explode(changes.source_columns) as source_column
            where
                changes.quarantine_reason is null
                and not changes.is_duplicate
                and {{ staged_after(changes, since, 'changes') }}
        {%- endif %}
        {% if not loop.last %}union all{% endif %}
    {% endfor -%}
),

{% if is_incremental() -%}
    held as (
        select
            held.table_id,
            held.column_name,
            struct(held.last_seen_sequence as sequence, held.last_seen_change_id as change_id) as seen_order,
            held.last_seen_sequence as sequence,
            held.last_seen_change_id as change_id,
            held.ordinal,
            held.source_type,
            held.spark_type,
            held.is_primary_key,
            held.first_seen_at,
            held.last_seen_at
        from {{ this }} as held
        left semi join observed
            on held.table_id = observed.table_id and held.column_name = observed.column_name
    ),

    facts as (
        select * from observed
        union all
        select * from held
    ),
{%- else -%}
    facts as (
        select * from observed
    ),
{%- endif %}

final as (
    select
        table_id,
        column_name,
        max_by(ordinal, seen_order) as ordinal,
        max_by(source_type, seen_order) as source_type,
        max_by(spark_type, seen_order) as spark_type,
        max_by(is_primary_key, seen_order) as is_primary_key,
        min(first_seen_at) as first_seen_at,
        max(last_seen_at) as last_seen_at,
        max_by(sequence, seen_order) as last_seen_sequence,
        max_by(change_id, seen_order) as last_seen_change_id,
        current_timestamp() as updated_at
    from facts
    group by table_id, column_name
)

select * from final
