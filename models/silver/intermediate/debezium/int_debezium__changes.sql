{{ config(merge_keep_existing=true, unique_key='message_id') }}

{#-
  Debezium row changes and truncates in the unified silver shape, one row
  per message: the decoded images and key (int_debezium__decoded), the
  connector's commit position as `sequence`, and a `change_id` taken from
  the change itself (connector, table, op, source position, key), never
  from the Kafka offset, so a message redelivered after a connector restart
  (same or new offset) is a duplicate of the first copy. A primary-key
  change (delete of the old key, create of the new one, same LSN) is two
  changes; the create's before image is the old key (header
  `__debezium.oldkey`), which tells gold where the row came from. Incremental: a run takes the messages decoded since its last run
  and compares them with the changes already held.
-#}

{%- set since = last_staged_at() %}

with

messages as (
    select
        messages.*,
        decoded.primary_key,
        decoded.previous_key,
        decoded.before as before_image,
        decoded.after as after_image,
        decoded.source_columns,
        decoded.decode_error
    from {{ ref('stg_debezium__messages') }} as messages
    inner join {{ ref('int_debezium__decoded') }} as decoded
        on messages.message_id = decoded.message_id
    where {{ staged_after(ref('int_debezium__decoded'), since, 'decoded') }}
),

identified as (
    select
        *,
        concat_ws(
            ':',
            source_position,
            {#- PostgreSQL: snapshot rows, and some changes, share an LSN; the offset breaks the tie. -#}
            case
                when connector not in ('sqlserver', 'mysql', 'mariadb')
                    then lpad(cast(source_offset as string), 20, '0')
            end
        ) as sequence,
        sha2(
            concat_ws(
                '|', 'debezium', connector, server_name, table_id, operation_code, source_position,
                to_json(array_sort(map_entries(primary_key)))
            ),
            256
        ) as change_id
    from messages
),

{{ change_copies('identified') }}

final as (
    select
        copies.message_id,
        copies.change_id,
        'debezium' as source_format,
        copies.connector as source_connector,
        copies.source_database,
        copies.source_schema,
        copies.source_table,
        copies.table_id,
        copies.operation,
        copies.commit_ts,
        copies.sequence,
        copies.transaction_id,
        copies.primary_key,
        {#- A key change's create names the old key as its before image: gold carries the columns
            it did not send (unchanged TOASTed values) from the old key's last image. -#}
        case
            when copies.operation = 'insert' and copies.previous_key is not null then copies.previous_key
            else copies.before_image
        end as before,
        case when copies.operation <> 'delete' then copies.after_image end as after,
        case
            when copies.operation in ('insert', 'snapshot') then array_sort(map_keys(copies.after_image))
            when copies.operation = 'update' and copies.before_image is not null
                then {{ changed_keys('copies.before_image', 'copies.after_image') }}
        end as changed_columns,
        copies.ingested_at,
        copies.source_columns,
        copies.is_duplicate,
        case
            when copies.decode_error is not null
                then concat('A value could not be decoded against its schema: ', copies.decode_error, '.')
            when copies.operation = 'delete' and copies.primary_key is null and copies.before_image is null
                then concat(
                        'A delete of ', {{ shown("copies.table_id") }}, ' with neither a before image nor a key ',
                        '(REPLICA IDENTITY NOTHING, no Kafka key): the deleted row cannot be identified. ',
                        'Set REPLICA IDENTITY DEFAULT or FULL on the table, or keep the Kafka key.'
                    )
            when copies.primary_key is null or (copies.operation <> 'truncate' and size(copies.primary_key) = 0)
                then concat(
                        'The change of ', {{ shown("copies.table_id") }},
                        ' carries no key: no Kafka key came with it and the ',
                        'table has no key columns declared. Land the Kafka key (kcat) or declare the key ',
                        'columns in seeds/cdc_declared_columns.csv.'
                    )
        end as quarantine_reason,
        current_timestamp() as staged_at
    from copies
)

select * from final
