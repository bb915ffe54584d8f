{#-
  Redelivered copies of a change: a producer that sends a change again (a
  connector restarted, a message landed twice under another id) sends the
  same change_id, and only its first landed copy is applied.
-#}

{% macro copy_number(key) -%}
    {#- Each row's place among the rows with its `key`, in landing order: 1 for the first landed copy. -#}
    row_number() over (partition by {{ key }} order by ingested_at, message_id)
{%- endmacro %}


{% macro change_copies(changes, key='change_id') -%}
    {#-
      CTEs `numbered_changes`, `held_changes` (incremental runs only) and
      `copies`: the rows of the CTE `changes` with `copy_number` and
      `is_duplicate`, true for every copy but the first landed one of a
      `key` and, on an incremental run, for every copy of a `key` the
      model already holds as a change (not a duplicate). Ends with a comma:
      the model's next CTE follows.
    -#}
numbered_changes as (
    select
        *,
        {{ copy_number(key) }} as copy_number
    from {{ changes }}
),

{% if is_incremental() -%}
held_changes as (
    select distinct {{ key }}
    from {{ this }}
    where not is_duplicate
),

{% endif -%}
copies as (
    select
        numbered_changes.*,
        numbered_changes.copy_number > 1
        {%- if is_incremental() %} or held_changes.{{ key }} is not null{% endif %} as is_duplicate
    from numbered_changes
    {% if is_incremental() -%}
        left join held_changes on numbered_changes.{{ key }} = held_changes.{{ key }}
    {%- endif %}
),
{%- endmacro %}


{% macro explode_changes(operations, key_kept, before_image, after_image) -%}
    {#-
      A `lateral view` giving each row its changes as `change` (a struct
      of `operation` and the row `image` it applies): one for each
      [operation_code, operation, image] of `operations` whose
      operation_code is the row's; else, for an update, one `update` with
      `after_image` when SQL condition `key_kept` holds (the row kept its
      key), or a `delete` of `before_image` and an `insert` of
      `after_image` when the update changed the key.
    -#}
lateral view explode(
    case
        {%- for operation_code, operation, image in operations %}
        when operation_code = '{{ operation_code }}'
            then array(named_struct('operation', '{{ operation }}', 'image', {{ image }}))
        {%- endfor %}
        when {{ key_kept }} then array(named_struct('operation', 'update', 'image', {{ after_image }}))
        else array(
                named_struct('operation', 'delete', 'image', {{ before_image }}),
                named_struct('operation', 'insert', 'image', {{ after_image }})
            )
    end
) as change
{%- endmacro %}
