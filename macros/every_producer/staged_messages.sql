{#-
  Steps every producer's staging model (stg_<producer>__messages) takes the
  same way: reading its new messages from stg_landed__messages, and the
  reasons a message cannot be used that come from landing, before its
  contents are looked at.
-#}

{% macro new_bronze_messages(source_format, columns) -%}
    {#-
      The query of a staging model's `messages` CTE: `columns` of the bronze
      messages of `source_format` staged since the model's last run. When
      none was, and stg_landed__messages is all the model reads, the model is
      idle (the adapter's idle_models.sql): a build that brought only other
      producers' messages commits nothing to it, so the producer's models
      downstream stay idle too instead of merging nothing.
      The model's merge on message_id reads only its rows landed no earlier
      than the earliest new message (bound_merge_target): a message reaches
      it again only as the same first landed copy, with the same ingested_at.
    -#}
    {%- set bronze = ref('stg_landed__messages') -%}
    {%- set of_format = "source_format = '" ~ source_format ~ "'" -%}
    {%- set is_new = staged_after(bronze, condition=of_format) -%}
    {%- if execute and is_new == 'false' and is_incremental()
        and upstream_tables(model.unique_id) == [bronze.schema ~ '.' ~ bronze.identifier] -%}
        {%- do set_model_idle(true) -%}
    {%- else -%}
        {%- do bound_merge_by_landing('select ingested_at from ' ~ bronze ~ ' where ' ~ of_format ~ ' and ' ~ is_new) -%}
    {%- endif -%}
    select
        {{ columns | join(',\n        ') }}
    from {{ bronze }}
    where
        {{ of_format }}
        and {{ is_new }}
{%- endmacro %}


{% macro landing_quarantine_reasons(not_utf8_note, no_value_reason=none) -%}
    {#-
      The first `when … then …` steps of a staging model's quarantine_reason
      case, over the bronze columns `headers` and `message_value`: a message
      landed as base64 (not UTF-8 text), a malformed landing container record,
      optionally a message without a value, and one over the size limit.
    -#}
    when headers['x-cdc-encoding'] = 'base64'
        then concat('The message is not UTF-8 text (landed as base64): ', {{ not_utf8_note }})
    when headers['x-cdc-ingest-error'] is not null
        then concat('The landing container record was malformed: ', headers['x-cdc-ingest-error'], '.')
    {%- if no_value_reason is not none %}
    when message_value is null
        then {{ no_value_reason }}
    {%- endif %}
    when octet_length(message_value) > {{ var('cdc_max_message_bytes') }}
        then {{ over_size_reason('message_value') }}
{%- endmacro %}


{% macro unreadable_json_reason(text, subject, not_recognised, not_object=none) -%}
    {#-
      Why JSON text `text` (null: none) could not be read as the object a
      producer sends: nested beyond the limit (too_deep_reason, `subject`
      being SQL naming it), else `not_recognised`; with `not_object`, that
      one when `text` is not a JSON object at all.
    -#}
case {{ json_shape(text) }}
    when 'too_deep' then {{ too_deep_reason(subject) }}
    {%- if not_object is none %}
    else {{ not_recognised }}
    {%- else %}
    when 'object' then {{ not_recognised }}
    else {{ not_object }}
    {%- endif %}
end
{%- endmacro %}
