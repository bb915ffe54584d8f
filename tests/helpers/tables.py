"""The lakehouse's tables as the tests read and expect them: reads by the test session's Spark
(a table's gold history and live rows, what silver made of the messages landed from one source)
and the columns the tests expect of bronze and of the typed gold models.

Values are spliced into the SQL as literals: they come from the tests themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

# The columns of every bronze table, in order (models/bronze/_bronze__sources.yml).
BRONZE_COLUMNS = (
    "message_id",
    "source_uri",
    "source_partition",
    "source_offset",
    "message_key",
    "message_value",
    "headers",
    "enqueued_at",
    "ingested_at",
    "ingest_batch_id",
)
# The columns a typed history model (gold.<publish_as>_history) has after the source's, with
# their Spark types.
TYPED_HISTORY_METADATA = (
    ("version_number", "int"),
    ("valid_from", "timestamp"),
    ("valid_to", "timestamp"),
    ("is_current", "boolean"),
    ("is_deleted", "boolean"),
    ("is_active", "boolean"),
    ("live_until", "timestamp"),
    ("operation", "string"),
    ("change_id", "string"),
    ("sequence", "string"),
    ("source_format", "string"),
    ("transaction_id", "string"),
    ("ingested_at", "timestamp"),
)
# The same for a typed live model (gold.<publish_as>).
TYPED_LIVE_METADATA = (("valid_from", "timestamp"), ("change_id", "string"))

# One version of a key: what most tests check.
VERSION = ("version_number", "operation", "is_current", "is_deleted", "row_data")
# The same, each version led by its key, for the history of a whole table.
KEYED_VERSION = ("primary_key", *VERSION)
# Every column of a version as a hashable, comparable value (the maps as sorted JSON): for
# comparing whole histories, e.g. before and after a build.
SNAPSHOT = (
    "table_id",
    "to_json(array_sort(map_entries(primary_key)))",
    "key_hash",
    "version_number",
    "cast(valid_from as string)",
    "cast(valid_to as string)",
    "is_current",
    "is_deleted",
    "operation",
    "to_json(array_sort(map_entries(row_data)))",
    "change_id",
)


def stored_tables(spark: Any, schema: str) -> list[str]:
    """The names of `schema`'s tables, not its views nor temporary views. By SQL: the catalog
    API's `spark.catalog.listTables` fails where Spark runs without generated code, as the test
    suite's does (docs/testing.md, "Spark without generated code")."""
    views = {row.viewName for row in spark.sql(f"show views in {schema}").collect()}
    return [
        row.tableName
        for row in spark.sql(f"show tables in {schema}").collect()
        if not row.isTemporary and row.tableName not in views
    ]


def literal(value: str) -> str:
    """`value` as a Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def history(
    spark: Any,
    tables: str | Iterable[str] | None = None,
    key: tuple[str, str] | None = None,
    columns: Sequence[str] = VERSION,
) -> list[tuple]:
    """The versions in gold.cdc_history of `tables` (one table id, several, or None: every table),
    as tuples of `columns` (column names or SQL expressions over them), ordered by table, key and
    version number. With `key` = (column, value), only the versions of the key whose primary key
    has that value in that column."""
    conditions = []
    if tables is not None:
        ids = [tables] if isinstance(tables, str) else list(tables)
        conditions.append(f"table_id in ({', '.join(map(literal, ids))})")
    if key is not None:
        conditions.append(f"primary_key[{literal(key[0])}] = {literal(key[1])}")
    where = f"where {' and '.join(conditions)} " if conditions else ""
    return [
        tuple(r)
        for r in spark.sql(
            f"select {', '.join(columns)} from gold.cdc_history {where}"
            "order by table_id, key_hash, version_number"
        ).collect()
    ]


def live_rows(spark: Any, table_id: str, key_columns: Sequence[str]) -> dict[str, dict[str, str | None]]:
    """The live rows of a table in gold.cdc_current, each under its key as the generators' expected
    rows name it: ``column=value`` pairs in `key_columns` order, joined by ``,``."""
    rows = spark.sql(
        f"select primary_key, row_data from gold.cdc_current where table_id = {literal(table_id)}"
    ).collect()
    return {",".join(f"{c}={r.primary_key[c]}" for c in key_columns): r.row_data for r in rows}


def _from_source(source_format: str, source: Path | str) -> str:
    """The join of a silver table `s` to the messages of bronze.raw_<source_format> landed from
    `source` (a landed file, or a LIKE pattern of source URIs), `b`, each once with its
    `position` in the source."""
    match = (
        f"= {literal(source.resolve().as_uri())}" if isinstance(source, Path) else f"like {literal(source)}"
    )
    # One row per message, however often it was landed (several tests land the same samples):
    # at the first place the source holds it.
    return (
        "join (select message_id, min(struct(source_uri, source_partition, source_offset)) as position "
        f"from bronze.raw_{source_format} where source_uri {match} group by message_id) b "
        "on s.message_id = b.message_id"
    )


def outcomes(spark: Any, source_format: str, source: Path | str) -> list[str]:
    """The outcome (silver.cdc_message_outcomes) of each message landed into
    bronze.raw_<source_format> from `source` (a landed file, or a LIKE pattern of source URIs
    such as ``kafka:orders.%``), in the order the source holds them."""
    return [
        r.outcome
        for r in spark.sql(
            f"select s.outcome from silver.cdc_message_outcomes s {_from_source(source_format, source)} "
            f"where s.source_format = {literal(source_format)} "
            "order by b.position"
        ).collect()
    ]


def quarantine_reasons(spark: Any, source_format: str, source: Path | str) -> list[str]:
    """The reason (silver.cdc_quarantine) of each message landed into bronze.raw_<source_format>
    from `source` (as for :func:`outcomes`) that silver quarantined, in the order the source
    holds them."""
    return [
        r.reason
        for r in spark.sql(
            f"select s.reason from silver.cdc_quarantine s {_from_source(source_format, source)} "
            "order by b.position"
        ).collect()
    ]
