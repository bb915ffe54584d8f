{#-
  Steps every producer's outcome model (int_<producer>__message_outcomes)
  takes the same way: which messages an incremental run decides again (its
  touched window), and the ladder that gives each message one outcome and
  the detail that explains it.
-#}

{% macro touched_messages(messages, since, revisited, members=none, key=none) -%}
    {#-
      On an incremental run, CTE `touched` (ending with a comma): the
      message_id of every message of `messages` staged since `since`, and of
      every message whose outcome may have changed because rows of
      `revisited` were staged since: `revisited`'s own message_id or, with
      `members` and `key`, the message_id of the rows of `members` whose
      `key` is that of a row of `revisited` (the messages of a regrouped
      event). Nothing on a full build, which decides every message.
    -#}
{%- if is_incremental() %}
touched as (
    select message_id
    from {{ messages }}
    where {{ staged_after(messages, since) }}
    union
    {% if members is none -%}
    select message_id
    from {{ revisited }}
    where {{ staged_after(revisited, since) }}
    {%- else -%}
    select members.message_id
    from {{ members }} as members
    left semi join {{ revisited }} as revisited
        on
            members.{{ key }} = revisited.{{ key }}
            and {{ staged_after(revisited, since, 'revisited') }}
    {%- endif %}
),
{%- endif %}
{%- endmacro %}


{% macro touched_landed_since(messages, since, revisited) -%}
    {#-
      On an incremental run, when the earliest message that touched_messages
      (without `members`) selects was landed: the smallest ingested_at of
      the rows of `messages` and `revisited` staged since `since`, as text
      (earliest_landed: one query, which Iceberg answers from the files
      staged since); '9999-12-31 23:59:59' when there is none. None on a
      full build. Every
      row of a touched message, in `messages` and in the models after it,
      carries that message's ingested_at, so only_touched can bound its
      reads by it and Iceberg skips the older files.
    -#}
    {{ return(earliest_landed(
        'select ingested_at from ' ~ messages ~ ' where ' ~ staged_after(messages, since)
        ~ ' union all select ingested_at from ' ~ revisited ~ ' where ' ~ staged_after(revisited, since)
    )) }}
{%- endmacro %}


{% macro only_touched(alias, key='message_id', touched='touched', landed_since=none) -%}
    {#-
      On an incremental run, a join keeping the rows of `alias` whose `key`
      is in the CTE `touched`, and with `landed_since` (from
      touched_landed_since) whose ingested_at is not older: a condition on
      `alias` alone, which Spark hands to the scan, so Iceberg skips the
      files landed before. Nothing on a full build.
    -#}
    {%- if is_incremental() -%}
        left semi join {{ touched }} on {{ alias }}.{{ key }} = {{ touched }}.{{ key }}
        {%- if landed_since is not none %}
            and {{ alias }}.ingested_at >= {{ timestamp_literal(landed_since) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}


{% macro message_outcome(source_format, steps, messages='messages', changes='changes', change_detail=none) -%}
    {#-
      The columns of an outcome model's row for a message of `messages`
      (the alias of the producer's staged messages): message_id,
      source_format (`source_format`), outcome and the detail that explains
      it, ingested_at and staged_at. The outcome comes from one ladder: a
      message quarantined in staging first, then the producer's own `steps`
      in order (each a dict: SQL condition `when`, `outcome` and SQL
      `detail`), then, with `changes` (the alias of the producer's change
      rows joined to the message), a change that was quarantined or is a
      redelivered copy; else the message is a change, explained by
      `change_detail` (SQL; default "Change <change_id>.").
    -#}
{{ messages }}.message_id,
'{{ source_format }}' as source_format,
case
    when {{ messages }}.quarantine_reason is not null then 'quarantined'
    {%- for step in steps %}
    when {{ step.when }} then '{{ step.outcome }}'
    {%- endfor %}
    {%- if changes %}
    when {{ changes }}.quarantine_reason is not null then 'quarantined'
    when {{ changes }}.is_duplicate then 'duplicate'
    {%- endif %}
    else 'change'
end as outcome,
case
    when {{ messages }}.quarantine_reason is not null then {{ messages }}.quarantine_reason
    {%- for step in steps %}
    when {{ step.when }}
        then {{ step.detail | indent(4) }}
    {%- endfor %}
    {%- if changes %}
    when {{ changes }}.quarantine_reason is not null then {{ changes }}.quarantine_reason
    when {{ changes }}.is_duplicate then concat('A redelivered copy of change ', {{ changes }}.change_id, '.')
    {%- endif %}
    else {{ change_detail or "concat('Change ', " ~ changes ~ ".change_id, '.')" }}
end as detail,
{{ messages }}.ingested_at,
current_timestamp() as staged_at
{%- endmacro %}
