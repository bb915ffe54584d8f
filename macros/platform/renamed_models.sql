{#-
  Run-start hook: a lakehouse built before a model was renamed keeps its table. The
  table of each renamed model (`renamed_models`) that still carries the old name, where
  no table has the new one yet, is renamed in the metastore, so that the model goes on
  incrementally from what it holds instead of starting again from every bronze message.
-#}
{% macro rename_renamed_models() %}
    {%- if execute -%}
        {%- for renamed in renamed_models() -%}
            {%- set old = adapter.get_relation(database=none, schema=renamed.schema, identifier=renamed.old) -%}
            {%- set new = adapter.get_relation(database=none, schema=renamed.schema, identifier=renamed.new) -%}
            {%- if old is not none and new is none -%}
                {#- through the adapter, so that its relation cache knows the table by its new name -#}
                {%- set target_relation = old.incorporate(path={'identifier': renamed.new}) -%}
                {% do adapter.rename_relation(old, target_relation) %}
                {{ log('Renamed ' ~ old ~ ' to ' ~ target_relation ~ ' (the model was renamed).', info=true) }}
            {%- elif old is not none -%}
                {{ log('Both ' ~ old ~ ' and ' ~ renamed.schema ~ '.' ~ renamed.new ~ ' exist: '
                    ~ old ~ ' is a renamed model\'s old table, no longer built; drop it once nothing reads it.', info=true) }}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{#- The models renamed since lakehouses were first built: schema, old and new table name. -#}
{% macro renamed_models() %}
    {{ return([
        {'schema': 'silver', 'old': 'stg_bronze__messages', 'new': 'stg_landed__messages'},
        {'schema': 'silver', 'old': 'int_bronze__batch_profiles', 'new': 'int_landed__batch_profiles'},
    ]) }}
{% endmacro %}
