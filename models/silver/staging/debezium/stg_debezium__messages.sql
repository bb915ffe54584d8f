{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Every distinct Debezium message (SQL Server, PostgreSQL, MySQL, MariaDB:
  one envelope) with its value and key parsed, with or without JsonConverter
  schemas: what kind of message it is (row change, truncate, logical
  decoding message, tombstone; and what a connector writes to its other
  topics: transaction markers of `<prefix>.transaction`, schema change events
  of the `<prefix>` topic, records of the schema history topic), where it
  sits in the source's commit order, and the reason it cannot be used, if
  it cannot. Row images stay JSON text here; int_debezium__decoded decodes
  them against their schemas. Incremental: a run parses only the messages
  staged since its last run.
-#}

{%- set sqlserver_lsn = '^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{4}$' %}
{%- set no_op_reason -%}
    concat(
        'The message has no op field: it is not a Debezium change event ',
        '(with schemas.enable it must be {"schema": ..., "payload": {...}}).'
    )
{%- endset %}
{%- set not_object_reason -%}
    concat('The message is not a JSON object: ', 'a Debezium value is a JSON object (with or without schema).')
{%- endset %}

with

messages as (
    {{ new_bronze_messages('debezium', [
        'message_id', 'source_uri', 'source_partition', 'source_offset', 'message_key', 'message_value', 'headers',
        'ingested_at',
    ]) }}
),

enveloped as (
    select
        *,
        from_json({{ within_size('message_value') }}, '{{ json_converter_envelope_schema() }}', {{ json_options() }})
            as value_envelope,
        from_json(message_key, '{{ json_converter_envelope_schema() }}', {{ json_options() }}) as key_envelope
    from messages
),

unwrapped as (
    select
        *,
        value_envelope.schema is not null and value_envelope.payload is not null as has_schema,
        case
            when value_envelope.schema is not null and value_envelope.payload is not null
                then value_envelope.payload
            else {{ within_size('message_value') }}
        end as payload_text,
        case
            when key_envelope.schema is not null and key_envelope.payload is not null
                then key_envelope.payload
            else message_key
        end as key_text,
        case
            when key_envelope.schema is not null and key_envelope.payload is not null
                then key_envelope.schema
        end as key_schema_text,
        filter(
            from_json(
                value_envelope.schema, 'struct<fields:array<struct<field:string,fields:string>>>', {{ json_options() }}
            ).fields,
            f -> f.field in ('after', 'before')
        ) as image_schemas
    from enveloped
),

parsed as (
    select
        *,
        from_json(payload_text, '{{ debezium_payload_schema() }}', {{ json_options() }}) as payload
    from unwrapped
),

classified as (
    select
        *,
        payload.source,
        case
            when message_value is null then 'tombstone'
            when payload.op in ('c', 'u', 'd', 'r') then 'row'
            when payload.op = 't' then 'truncate'
            when payload.op = 'm' then 'logical_message'
            {#- The topics a connector writes besides its table topics: none has an op. -#}
            when payload.op is null and payload.status in ('BEGIN', 'END') and payload.id is not null
                then 'transaction'
            when payload.op is null and payload.ddl is not null and payload.source.connector is not null
                then 'schema_change'
            when payload.op is null and payload.ddl is not null and payload.source.server is not null
                then 'schema_history'
        end as message_kind,
        lower(payload.source.connector) as connector,
        upper(regexp_replace(payload.source.commit_lsn, '[^0-9A-Fa-f]', '')) as commit_lsn_hex,
        upper(regexp_replace(payload.source.change_lsn, '[^0-9A-Fa-f]', '')) as change_lsn_hex
    from parsed
),

final as (
    select
        message_id,
        message_kind,
        payload.op as operation_code,
        case payload.op
            when 'c' then 'insert' when 'u' then 'update' when 'd' then 'delete'
            when 'r' then 'snapshot' when 't' then 'truncate'
        end as operation,
        connector,
        source.name as server_name,
        nullif(source.db, '') as source_database,
        nullif(source.schema, '') as source_schema,
        nullif(source.table, '') as source_table,
        lower(concat_ws('.', nullif(source.db, ''), nullif(source.schema, ''), nullif(source.table, '')))
            as table_id,
        lower(coalesce(source.snapshot, 'false')) not in ('false', '') as is_snapshot,
        coalesce(
            {{ epoch_micros_timestamp('source.ts_us') }},
            {{ epoch_micros_timestamp('source.ts_ns div 1000') }},
            {{ epoch_millis_timestamp('source.ts_ms') }},
            {{ epoch_millis_timestamp('payload.ts_ms') }}
        ) as commit_ts,
        {#- Commit order within a table, as sortable text, per connector. -#}
        case
            when connector = 'sqlserver'
                then concat_ws(
                        ':',
                        lpad(commit_lsn_hex, 20, '0'),
                        lpad(coalesce(change_lsn_hex, ''), 20, '0'),
                        lpad(coalesce(source.event_serial_no, '0'), 20, '0')
                    )
            when connector = 'postgresql' then lpad(source.lsn, 20, '0')
            when connector in ('mysql', 'mariadb')
                then concat_ws(
                        ':',
                        coalesce(source.file, ''),
                        lpad(coalesce(source.pos, '0'), 20, '0'),
                        lpad(coalesce(source.row, '0'), 10, '0')
                    )
            else lpad(cast(coalesce(source.ts_us, try_multiply(source.ts_ms, 1000)) as string), 20, '0')
        end as source_position,
        coalesce(
            payload.transaction.id,
            source.txid,
            source.gtid,
            case when message_kind = 'transaction' then payload.id end
        ) as transaction_id,
        case when message_kind = 'transaction' then payload.status end as transaction_status,
        case when message_kind in ('schema_change', 'schema_history') then payload.ddl end as ddl_text,
        case
            when message_kind in ('schema_change', 'schema_history')
                then upper(
                        coalesce(
                            get_json_object(payload.tablechanges, '$[0].type'),
                            nullif(regexp_extract(payload.ddl, '^\\s*([A-Za-z]+)', 1), '')
                        )
                    )
        end as ddl_operation,
        payload.before as before_text,
        payload.after as after_text,
        element_at(filter(image_schemas, f -> f.field = 'after'), 1).fields as after_schema_text,
        element_at(filter(image_schemas, f -> f.field = 'before'), 1).fields as before_schema_text,
        has_schema,
        key_text,
        key_schema_text,
        headers['__debezium.oldkey'] as old_key_text,
        headers['__debezium.newkey'] as new_key_text,
        payload.message.prefix as message_prefix,
        payload.message.content as message_content,
        source_uri,
        source_partition,
        source_offset,
        ingested_at,
        case
            {# A message without a value is a tombstone: not quarantined. -#}
            {{ landing_quarantine_reasons(
                not_utf8_note="\"Debezium's JsonConverter writes UTF-8 JSON; "
                    ~ "check the converter settings of the connector or sink.\""
            ) | indent(12) }}
            when message_key is not null and {{ json_shape('message_key') }} = 'too_deep'
                then {{ too_deep_reason("'The Kafka key'") }}
            when message_value is null then null
            when message_kind in ('transaction', 'schema_change', 'schema_history') then null
            when payload is null or payload.op is null
                then {{ unreadable_json_reason(
                    'message_value', "'The message'", not_recognised=no_op_reason, not_object=not_object_reason
                ) | indent(16) }}
            when payload.op not in ('c', 'u', 'd', 'r', 't', 'm')
                then concat(
                        "Unknown Debezium op '", {{ shown("payload.op") }},
                        "': expected c (create), u (update), d (delete), r (read), t (truncate) or m (message)."
                    )
            when payload.op <> 'm' and coalesce(source.table, '') = ''
                then 'The source block names no table (source.table is missing or empty).'
            when payload.op <> 'm' and source.connector is null
                then 'The source block has no connector: the change cannot be ordered.'
            when payload.op in ('c', 'u', 'r') and payload.after is null
                then concat('A ', {{ shown("payload.op") }}, ' event without an after image: the new row is missing.')
            when payload.op = 'm' then null
            when
                json_array_length(coalesce(after_schema_text, before_schema_text)) > {{ var('cdc_max_columns') }}
                then {{ over_limit_reason(
                    "'fields in its row schema'",
                    'json_array_length(coalesce(after_schema_text, before_schema_text))',
                    'cdc_max_columns'
                ) }}
            when connector = 'sqlserver' and not coalesce(source.commit_lsn rlike '{{ sqlserver_lsn }}', false)
                then concat(
                        'The source.commit_lsn ',
                        coalesce(concat("'", {{ shown("source.commit_lsn") }}, "'"), '(missing)'),
                        ' is not an SQL Server LSN (xxxxxxxx:xxxxxxxx:xxxx): the change cannot be ordered.'
                    )
            when
                connector = 'sqlserver'
                and (
                    not coalesce(source.change_lsn rlike '{{ sqlserver_lsn }}', source.change_lsn is null)
                    or not (source.event_serial_no is null or {{ is_digits('source.event_serial_no', 20) }})
                )
                then concat(
                        'The source.change_lsn or source.event_serial_no is not an SQL Server LSN or a whole ',
                        'number of at most 20 digits: the change cannot be ordered.'
                    )
            when connector = 'postgresql' and not {{ is_digits('source.lsn', 20) }}
                then concat(
                        'The source.lsn ', coalesce(concat("'", {{ shown("source.lsn") }}, "'"), '(missing)'),
                        ' is not a whole number of at most 20 digits (a PostgreSQL LSN): the change cannot be ordered.'
                    )
            when
                connector in ('mysql', 'mariadb')
                and (
                    not coalesce(source.file rlike '^[A-Za-z0-9._-]{1,255}$', false)
                    or not {{ is_digits('source.pos', 20) }}
                    or not (source.row is null or {{ is_digits('source.row', 10) }})
                )
                then concat(
                        'The binlog position (source.file, pos, row) is not a binlog file name with whole numbers ',
                        '(pos at most 20 digits, row at most 10): the change cannot be ordered.'
                    )
            when
                connector not in ('sqlserver', 'postgresql', 'mysql', 'mariadb')
                and coalesce(source.ts_us, source.ts_ms) < 0
                then 'The source.ts_us / ts_ms is negative: the change cannot be ordered.'
            when commit_ts is null
                then concat(
                        'The event has no usable commit time (source.ts_us, ts_ns or ts_ms, else ts_ms: ',
                        'epoch time between the years 1 and 9999).'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from classified
)

select * from final
