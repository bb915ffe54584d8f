"""Incremental gold and per-table CDC settings, end to end.

Generated CES, Debezium and DataWorks traffic (late partitions, redeliveries,
key changes, truncates, split events) and hand-written CES events for tables
with declared settings land over three runs, each followed by a `dbt build`
of a copy of the project whose seeds/cdc_tables.csv declares those
settings. Then gold.cdc_history is rebuilt with `--full-refresh`: it must be
identical to what the incremental runs left, and a further run of every
model with nothing new must change nothing and read nothing new.

Among them, a PostgreSQL row whose key changes twice (:func:`key_chain_partitions`): its
large text column is not sent by either key change (an unchanged TOASTed value), and the
partition of its first key lags, so that an update of that column, made before the key
changes, arrives a run after them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cdc_tools.generators import ces_traffic, dataworks_traffic, debezium_traffic
from cdc_tools.generators.ces_messages import ces_event, jsonl
from cdc_tools.generators.debezium_messages import (
    UNAVAILABLE,
    Column,
    Connector,
    Record,
    SentRecord,
    Table,
    change_value,
    kcat_record,
    key_change_records,
    key_message,
    key_only_image,
    postgresql_source,
)
from tests.helpers.tables import SNAPSHOT, history

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/dbt")
DB = "settingsdb"
SETTINGS = (
    (ROOT / "seeds" / "cdc_tables.csv").read_text().splitlines()[0]
    + f"""
{DB}.dbo.accounts,,,last_seen,2,true,false
{DB}.dbo.prices,,,,1,true,false
{DB}.dbo.readings,,sensor;day,,,,
{DB}.dbo.orders,,,,2,true,true
incshop.customers,,,,2,false,false
"""
)
COLUMNS = {
    "accounts": [("id", "int"), ("name", "nvarchar"), ("last_seen", "datetime2")],
    "prices": [("id", "int"), ("price", "decimal")],
    "readings": [("sensor", "nvarchar"), ("day", "date"), ("value", "int")],
    "orders": [("id", "int"), ("status", "nvarchar")],
}


class Clock:
    """Commit positions for hand-written CES events: one commit LSN per transaction."""

    def __init__(self) -> None:
        self.lsn = 0x1000

    def transaction(
        self, table: str, changes: list[tuple[str, dict, dict | None, dict | None]]
    ) -> list[dict]:
        self.lsn += 1
        return [
            ces_event(
                (DB, "dbo", table),
                operation,
                COLUMNS[table],
                key,
                old,
                row,
                f"0x{self.lsn:08X}:00000000:0001",
                number,
                f"2025-07-01 10:{self.lsn % 60:02d}:00.000",
            )
            for number, (operation, key, old, row) in enumerate(changes, start=1)
        ]

    def event(self, table: str, operation: str, key: dict, old: dict | None, row: dict | None) -> list[dict]:
        return self.transaction(table, [(operation, key, old, row)])


CHAIN = Table(
    Connector("postgresql", "chainpg", "chaindb"),
    "public",
    "documents",
    (Column("id", "int32", optional=False), Column("title", "string"), Column("body", "string")),
    ("id",),
)
CHAIN_BODY = "the body as updated before both key changes"


def key_chain_partitions() -> dict[str, list[list[SentRecord]]]:
    """A row of CHAIN inserted with key 1, its `body` updated, then its key changed 1 -> 2 -> 3,
    each key change without `body` (PostgreSQL's placeholder for an unchanged TOASTed value), and
    key 3 retitled, as Kafka partitions them (one partition per key here): per landing run
    (`first`, `late`), each partition's records in offset order. The update and the first key
    change's delete are in the partition of key 1, which lands a run late, and so does the
    retitle."""
    lsn = iter(range(1000, 10_000, 100))

    def value(op: str, before: dict | None, after: dict | None, position: int) -> dict:
        source = postgresql_source(
            CHAIN.connector, 1_751_000_000_000_000 + position, 700, position, position - 50, table=CHAIN
        )
        return change_value(CHAIN, op, before, after, source, position * 1000)

    def key(number: int) -> dict:
        return {"id": number}

    row = {"id": 1, "title": "draft", "body": "the first body"}
    inserted = Record(CHAIN.topic, key_message(CHAIN, key(1)), value("c", None, row, next(lsn)))
    updated_row = {**row, "body": CHAIN_BODY}
    updated = Record(CHAIN.topic, key_message(CHAIN, key(1)), value("u", None, updated_row, next(lsn)))
    changes = []
    for old, new in ((1, 2), (2, 3)):
        position = next(lsn)
        deleted = value("d", key_only_image(CHAIN, key(old)), None, position)
        created = value("c", None, {"id": new, "title": "draft", "body": UNAVAILABLE}, position)
        changes.append(key_change_records(CHAIN, key(old), key(new), deleted, created))
    first_change, second_change = changes
    # Key 3 changes again, in the late run too: a new change after its stored current version, which
    # alone would extend that version (with the body from before the late update).
    retitled = {"id": 3, "title": "final", "body": UNAVAILABLE}
    retitle = Record(CHAIN.topic, key_message(CHAIN, key(3)), value("u", None, retitled, next(lsn)))
    sent = [
        [SentRecord.of(record, 1_751_000_000_000) for record in records]
        for records in (
            [inserted],  # partition 0 (key 1), as far as the first run reads it
            [updated, *first_change[:2]],  # partition 0, the rest: a run late
            [first_change[2], *second_change[:2]],  # partition 1 (key 2)
            [second_change[2]],  # partition 2 (key 3)
            [retitle],  # partition 2, the rest: a run late
        )
    ]
    return {"first": [sent[0], sent[2], sent[3]], "late": [sent[1], sent[4]]}


def write_key_chain(out: Path) -> dict[str, list[Path]]:
    """key_chain_partitions as kcat dumps, one file per partition and run."""
    partitions = {"first": (0, 1, 2), "late": (0, 2)}
    offsets = {0: 0, 1: 0, 2: 0}
    files: dict[str, list[Path]] = {}
    for run, logs in key_chain_partitions().items():
        for partition, log in zip(partitions[run], logs, strict=True):
            lines = []
            for record in log:
                lines.append(kcat_record(record, partition, offsets[partition]))
                offsets[partition] += 1
            path = out / f"{CHAIN.topic}-{partition}-{run}.kcat.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            files.setdefault(run, []).append(path)
    return files


def settings_runs() -> list[list[dict]]:
    clock = Clock()
    account = {"id": "1", "name": "Ann", "last_seen": "2025-07-01 09:00:00.0000000"}
    seen = {**account, "last_seen": "2025-07-01 11:00:00.0000000"}
    renamed = {**seen, "name": "Anna"}
    price = {"id": "7", "price": "1.50"}
    reading = {"sensor": "s1", "day": "2025-07-01", "value": "3"}
    order = {"id": "5", "status": "new"}
    first = [
        *clock.event("accounts", "INS", {"id": "1"}, None, account),
        *clock.event("prices", "INS", {"id": "7"}, None, price),
        *clock.event("readings", "INS", {}, None, reading),
        *clock.transaction(
            "orders",
            [
                ("INS", {"id": "5"}, None, order),
                ("UPD", {"id": "5"}, order, {**order, "status": "paid"}),
            ],
        ),
    ]
    second = [
        *clock.event("accounts", "UPD", {"id": "1"}, account, seen),  # only last_seen: in place
        *clock.event("prices", "UPD", {"id": "7"}, price, {**price, "price": "1.75"}),
        *clock.event("readings", "UPD", {}, reading, {**reading, "value": "4"}),
        *clock.event("orders", "UPD", {"id": "5"}, None, {**order, "status": "shipped"}),
    ]
    third = [
        *clock.event("accounts", "UPD", {"id": "1"}, seen, renamed),  # a tracked column: new version
        *clock.event("prices", "DEL", {"id": "7"}, {**price, "price": "1.75"}, None),
    ]
    return [first, second, third]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("settings-project")
    for name in PROJECT_FILES:
        source, target = ROOT / name, copy / name
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    (copy / "seeds" / "cdc_tables.csv").write_text(SETTINGS)
    return copy


@pytest.fixture(scope="module")
def runs(spark, land, dbt, project, tmp_path_factory):
    out = tmp_path_factory.mktemp("gold-incremental")
    ces = ces_traffic.generate(changes=150, seed=21, db="incdb", partitions=3).write(out / "ces")
    # Topics of its own too: test_debezium_generated lands the same connectors' topics, and a
    # Kafka message's id is its topic, partition and offset.
    debezium = debezium_traffic.generate(changes=150, seed=21, db="incdb", server_prefix="inc")
    debezium.write(out / "debezium")
    kcat = sorted((out / "debezium" / "kcat").glob("*.jsonl"))
    # databases of their own: other tests generate the same tables into the shared lakehouse
    dataworks = dataworks_traffic.generate(changes=120, seed=21, mysql_db="incshop", oracle_db="INCORCL")
    dataworks = dataworks.write(out / "dataworks")
    settings = []
    for number, messages in enumerate(settings_runs()):
        path = out / f"settings-{number}.jsonl"
        path.write_text(jsonl(messages))
        settings.append(path)
    redelivered = out / "ces-redelivered.jsonl"
    shutil.copy(ces[0], redelivered)  # the same messages from another file: duplicates
    chain = write_key_chain(out)
    deliveries = [
        {"ces": [ces[0], settings[0]], "debezium": kcat[::3] + chain["first"], "dataworks": [dataworks[0]]},
        {"ces": [ces[2], settings[1]], "debezium": kcat[1::3] + chain["late"], "dataworks": [dataworks[2]]},
        {"ces": [ces[1], settings[2], redelivered], "debezium": kcat[2::3], "dataworks": [dataworks[1]]},
    ]
    containers = {"ces": "jsonl", "debezium": "kcat", "dataworks": "jsonl"}
    for number, delivery in enumerate(deliveries, start=1):
        for source_format, paths in delivery.items():
            landed = land("--format", source_format, "--container", containers[source_format], *paths)
            assert landed.exit_code == 0
        # Seeds and data tests at the first and the last delivery.
        dbt("run" if number == 2 else "build", "--project-dir", str(project))
    incremental = set(history(spark, columns=SNAPSHOT))
    chain = [
        (row.primary_key, row.row_data.get("title"), row.row_data.get("body"))
        for row in spark.sql(
            f"select primary_key, row_data from gold.cdc_current where table_id = '{CHAIN.table_id}'"
        ).collect()
    ]
    dbt("run", "--project-dir", str(project), "--full-refresh", "--select", "cdc_history")
    full_refresh = set(history(spark, columns=SNAPSHOT))
    silver = row_counts(spark, "silver")
    again = dbt("run", "--project-dir", str(project))
    return {
        "incremental": incremental,
        "chain": chain,
        "full_refresh": full_refresh,
        "again": set(history(spark, columns=SNAPSHOT)),
        "silver": (silver, row_counts(spark, "silver")),
        "compiled": {result.node.name: result.node.compiled_code for result in again.result.results},
    }


def row_counts(spark, schema: str) -> dict[str, int]:
    tables = [row.tableName for row in spark.sql(f"show tables in {schema}").collect() if not row.isTemporary]
    return {name: spark.table(f"{schema}.{name}").count() for name in tables}


def test_incremental_history_equals_a_full_refresh(runs) -> None:
    assert runs["incremental"] == runs["full_refresh"]
    assert len(runs["incremental"]) > 300


def test_a_late_change_reaches_a_row_through_every_later_key_change(runs) -> None:
    """The body updated before the key changes 1 -> 2 -> 3 arrived after them, with a later
    change of key 3: after the incremental runs, the row's current version (key 3) has both."""
    assert runs["chain"] == [({"id": "3"}, "final", CHAIN_BODY)]


def test_a_build_with_nothing_new_changes_nothing(runs) -> None:
    assert runs["again"] == runs["full_refresh"]
    before, after = runs["silver"]
    assert before == after and before["cdc_changes"] > 0


def test_a_build_with_nothing_new_tells_spark_so(runs) -> None:
    """Each incremental filter renders `false`, so Spark plans an empty query and reads no table."""
    compiled = runs["compiled"]
    for model in ("stg_ces__messages", "stg_debezium__messages", "int_ces__changes", "int_dataworks__events"):
        assert "staged_at >" not in compiled[model] and "false" in compiled[model], model
    assert "where false" in compiled["cdc_history"]
    # The outcome models' reads of touched messages are bounded by the landing time of the
    # earliest one (macro touched_landed_since): with none touched, the end of time.
    for model in (
        "int_canal__message_outcomes",
        "int_goldengate__message_outcomes",
        "int_qlik__message_outcomes",
    ):
        assert ".ingested_at >= timestamp'9999-12-31 23:59:59'" in compiled[model], model
    # No Debezium message is pending: its outcomes read the new rows alone (macro new_or_held).
    assert "still_pending" not in compiled["int_debezium__message_outcomes"]


def test_ignored_columns_update_the_current_version_in_place(spark, runs) -> None:
    versions = history(spark, f"{DB}.dbo.accounts")
    assert [v[:4] for v in versions] == [(1, "insert", False, False), (2, "update", True, False)]
    assert versions[0][4]["last_seen"] == "2025-07-01 11:00:00"  # updated in place, no version of its own
    assert versions[1][4]["name"] == "Anna"


def test_scd_type_1_keeps_one_version_per_key(spark, runs) -> None:
    versions = history(spark, f"{DB}.dbo.prices")
    assert [v[:4] for v in versions] == [(1, "delete", True, True)]
    assert versions[0][4]["price"] == "1.75"
    assert (
        spark.sql(f"select count(*) from gold.cdc_current where table_id = '{DB}.dbo.prices'").first()[0] == 0
    )


def test_declared_key_columns_key_a_table_without_a_primary_key(spark, runs) -> None:
    [key] = spark.sql(
        f"select primary_key from gold.cdc_history where table_id = '{DB}.dbo.readings' "
        "and version_number = 1"
    ).collect()
    assert key.primary_key == {"sensor": "s1", "day": "2025-07-01"}
    assert [v[:2] for v in history(spark, f"{DB}.dbo.readings")] == [(1, "insert"), (2, "update")]


def test_changes_of_one_transaction_collapse_into_one_version(spark, runs) -> None:
    versions = history(spark, f"{DB}.dbo.orders")
    assert [v[:4] for v in versions] == [(1, "insert", False, False), (2, "update", True, False)]
    assert versions[0][4]["status"] == "paid" and versions[1][4]["status"] == "shipped"


def test_a_table_can_ignore_truncates(spark, runs) -> None:
    assert (
        spark.sql(
            "select count(*) from silver.cdc_changes where table_id = 'incshop.customers' "
            "and operation = 'truncate'"
        ).first()[0]
        > 0
    )
    truncated = spark.sql(
        "select count(*) from gold.cdc_history where table_id = 'incshop.customers' "
        "and operation = 'truncate'"
    ).first()[0]
    assert truncated == 0


def test_the_merge_leaves_no_scratch_table_behind(spark, runs) -> None:
    # Tables, not the session's temporary views (dbt's `cdc_history__dbt_tmp`).
    tables = [row.tableName for row in spark.sql("show tables in gold").collect() if not row.isTemporary]
    assert "cdc_history" in tables
    assert not [name for name in tables if name.startswith("cdc_history__")]  # the merge's and the fold's
