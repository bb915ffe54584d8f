{#-
  The project's first on-run-start hook: a command that writes to the lakehouse (build, run,
  seed, snapshot) holds the lakehouse's build lock until it ends, so a second one started
  meanwhile fails at once, with one line naming the running build, before it changes anything
  (the adapter's hold_build_lock, dbt/adapters/spark_embedded/services.py). Landing and SQL
  queries are not held back: they run side by side with a build.
-#}
{% macro hold_build_lock() %}
    {%- if execute and flags.WHICH in ('build', 'run', 'seed', 'snapshot') -%}
        {{ adapter.hold_build_lock(flags.WHICH) }}
    {%- endif -%}
{% endmacro %}
