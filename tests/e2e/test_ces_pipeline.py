"""End to end for SQL Server CES: land + dbt build over two landing runs,
then silver changes, quarantine, outcomes and gold history checked exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cdc_tools.generators.ces_messages import ces_event, jsonl, split_event
from python_ingest.bronze import BRONZE_FORMATS
from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import history

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("scenario", "dbo", "Docs")
DOC_COLUMNS = [
    ("doc_id", "int"),
    ("title", "nvarchar(200)"),
    ("body", "nvarchar(max)"),
    ("updated", "datetime2(7)"),
]
BIG_BODY = "x" * 300_000  # over CES's default 256 KB: sent as a split event
READINGS = ("scenario", "dbo", "Readings")
READING_COLUMNS = [
    ("reading_id", "int"),
    ("taken_at", "datetimeoffset(7)"),
    ("received_at", "datetimeoffset(3)"),
    ("ok", "bit"),
    ("amount", "decimal(10,2)"),
    ("raw", "varbinary(16)"),
]
STAGED_TABLES = [
    "silver.stg_landed__messages",
    "silver.stg_ces__messages",
    "silver.int_ces__segments",
    "silver.int_ces__events",
    "silver.int_ces__changes",
    "silver.int_ces__message_outcomes",
]


def outcome_of(spark, message_ids: list[str]) -> dict[str, str]:
    ids = ", ".join(f"'{m}'" for m in message_ids)
    rows = spark.sql(
        f"select message_id, outcome from silver.cdc_message_outcomes where message_id in ({ids})"
    )
    return {r.message_id: r.outcome for r in rows.collect()}


def staged_times(spark) -> dict[str, dict[str, str]]:
    """Per incremental table: each row's processing time, by the row's key."""
    keys = {
        "silver.int_ces__events": "event_key",
        "silver.int_ces__changes": "change_id",
    }
    return {
        table: {
            r[0]: str(r[1])
            for r in spark.sql(f"select {keys.get(table, 'message_id')}, staged_at from {table}").collect()
        }
        for table in STAGED_TABLES
    }


def event_keys(spark, directory: Path) -> set[str]:
    """The events of the messages landed from the files under `directory`."""
    rows = spark.sql(
        "select segments.event_key from silver.int_ces__segments as segments "
        "join bronze.raw_ces as bronze on segments.message_id = bronze.message_id "
        f"where bronze.source_uri like '{directory.resolve().as_uri()}/%'"
    )
    return {r.event_key for r in rows.collect()}


def message_ids(spark, path: Path) -> list[str]:
    uri = path.resolve().as_uri()
    rows = spark.sql(
        f"select message_id from bronze.raw_ces where source_uri = '{uri}' order by source_offset"
    )
    return [r.message_id for r in rows.collect()]


def scenario(spark, work: Path) -> Scenario:
    """Two runs, one build after each (tests/helpers/pipeline_scenarios.py)."""
    insert_big = ces_event(
        DOCS,
        "INS",
        DOC_COLUMNS,
        {"doc_id": "7"},
        None,
        {"doc_id": "7", "title": "Big", "body": BIG_BODY, "updated": "2025-03-14 10:00:00.1234567"},
        "0x0000002C:00000400:0001",
        1,
        "2025-03-14 10:00:01.000",
    )
    segments = split_event(insert_big, 3)
    insert_8 = ces_event(
        DOCS,
        "INS",
        DOC_COLUMNS,
        {"doc_id": "8"},
        None,
        {"doc_id": "8", "title": "Eight", "body": "b", "updated": "2025-03-14 11:00:00.000"},
        "0x0000002C:00000500:0001",
        1,
        "2025-03-14 11:00:00.000",
    )
    update_8 = ces_event(  # only the changed column is sent ("include all columns" off)
        DOCS,
        "UPD",
        [("doc_id", "int"), ("title", "nvarchar(200)")],
        {"doc_id": "8"},
        {"doc_id": "8", "title": "Eight"},
        {"doc_id": "8", "title": "Eight, revised"},
        "0x0000002C:00000600:0001",
        1,
        "2025-03-14 12:00:00.000",
    )
    first = work / "run1.jsonl"
    first.write_text(jsonl([segments[1], segments[0], update_8]))
    bad = work / "bad.jsonl"
    no_key = ces_event(
        ("scenario", "dbo", "Heap"),
        "INS",
        [("a", "int")],
        {},
        None,
        {"a": "1"},
        "0x0000002C:00000700:0001",
        1,
        "2025-03-14 13:00:00.000",
    )
    unknown_op = {**update_8, "id": "op-1", "operation": "MRG"}
    bad_data = {**update_8, "id": "data-1", "logicalid": "x:1:2", "data": "{not json"}
    not_ces = {**update_8, "id": "type-1", "type": "com.example.Other"}
    bad.write_text(jsonl(["not json at all", no_key, unknown_op, bad_data, not_ces]))
    reference = work / "reference.jsonl"
    shutil.copy(ROOT / "sample_data" / "ces" / "jsonl" / "reference_purchases.jsonl", reference)
    insert_reading = ces_event(
        READINGS,
        "INS",
        READING_COLUMNS,
        {"reading_id": "1"},
        None,
        {
            "reading_id": "1",
            "taken_at": "2025-03-14 10:00:00.1234567 +05:30",
            "received_at": "2025-03-14 23:30:00.5 -01:00",
            "ok": "1",
            "amount": "12.50",
            "raw": "0x0102FF",
        },
        "0x0000002C:00000800:0001",
        1,
        "2025-03-14 14:00:00.000",
    )
    readings = work / "readings.jsonl"
    readings.write_text(jsonl([insert_reading]))
    yield [Land("ces", "jsonl", (first, bad, reference, readings))]
    after_first = {
        "history_7": history(spark, "scenario.dbo.docs", ("doc_id", "7")),
        "history_8": history(spark, "scenario.dbo.docs", ("doc_id", "8")),
        "outcomes": outcome_of(spark, message_ids(spark, first)),
        "staged": staged_times(spark),
    }
    second = work / "run2.jsonl"
    update_reading = ces_event(  # the old image is "{}" and only the changed columns are sent
        READINGS,
        "UPD",
        [("reading_id", "int"), ("ok", "bit"), ("taken_at", "datetimeoffset(7)")],
        {"reading_id": "1"},
        None,
        {"reading_id": "1", "ok": "0", "taken_at": "2025-03-14T10:00:00-08:00"},
        "0x0000002C:00000900:0001",
        1,
        "2025-03-14 15:00:00.000",
    )
    second.write_text(
        jsonl([segments[2], segments[0], insert_8, update_reading])
    )  # final segment, a redelivery, the late insert, an update with old = {}
    redelivered = work / "reference-again.jsonl"
    shutil.copy(reference, redelivered)
    yield [Land("ces", "jsonl", (second, redelivered))]
    return {
        "first": first,
        "second": second,
        "bad": bad,
        "redelivered": redelivered,
        "after_first": after_first,
    }


@pytest.fixture(scope="module")
def runs(pipeline_scenarios):
    return pipeline_scenarios["ces"]


def test_reference_examples_give_three_versions_and_no_current_row(spark, runs) -> None:
    rows = spark.sql(
        "select version_number, operation, is_current, is_deleted, row_data['product_name'] as product "
        "from gold.cdc_history where table_id = 'db1.dbo.purchases' and primary_key['purchase_id'] = '105' "
        "order by version_number"
    ).collect()
    assert [tuple(r) for r in rows] == [
        (1, "insert", False, False, "Game 2077"),
        (2, "update", False, False, "Game 2066"),
        (3, "delete", True, True, "Game 2066"),
    ]
    assert spark.sql("select * from gold.cdc_current where table_id = 'db1.dbo.purchases'").count() == 0
    # Landed again from another file in a later run: redelivered copies, not new changes.
    assert set(outcome_of(spark, message_ids(spark, runs["redelivered"])).values()) == {"duplicate"}


def test_split_event_waits_for_its_final_segment(spark, runs) -> None:
    first_run = runs["after_first"]
    assert first_run["history_7"] == []
    pending = [o for o in first_run["outcomes"].values() if o == "pending"]
    assert len(pending) == 2
    [(version, operation, current, deleted, row)] = history(spark, "scenario.dbo.docs", ("doc_id", "7"))
    assert (version, operation, current, deleted) == (1, "insert", True, False)
    assert row["body"] == BIG_BODY
    assert row["updated"] == "2025-03-14 10:00:00.123456"
    first_ids = message_ids(spark, runs["first"])
    assert outcome_of(spark, first_ids[:2]) == {first_ids[0]: "change", first_ids[1]: "change"}
    second_ids = message_ids(spark, runs["second"])
    assert outcome_of(spark, second_ids) == {
        second_ids[0]: "change",
        second_ids[1]: "duplicate",
        second_ids[2]: "change",
        second_ids[3]: "change",
    }


def test_late_insert_is_slotted_before_the_update_and_unsent_columns_are_kept(spark, runs) -> None:
    assert [v[:4] for v in runs["after_first"]["history_8"]] == [(1, "update", True, False)]
    versions = history(spark, "scenario.dbo.docs", ("doc_id", "8"))
    assert [v[:4] for v in versions] == [(1, "insert", False, False), (2, "update", True, False)]
    assert versions[1][4] == {
        "doc_id": "8",
        "title": "Eight, revised",
        "body": "b",
        "updated": "2025-03-14 11:00:00",
    }
    current = spark.sql(
        "select row_data from gold.cdc_current where key_hash in "
        "(select key_hash from gold.cdc_history where table_id = 'scenario.dbo.docs')"
    ).collect()
    assert len(current) == 2


def test_malformed_messages_are_quarantined_once_with_a_reason(spark, runs) -> None:
    ids = message_ids(spark, runs["bad"])
    reasons = dict(
        spark.sql(
            "select message_id, reason from silver.cdc_quarantine where message_id in ("
            + ", ".join(f"'{i}'" for i in ids)
            + ")"
        ).collect()
    )
    assert len(reasons) == len(ids) == 5
    expected = [
        "not a JSON object",
        "no primary key",
        "Unknown operation 'MRG'",
        "not JSON with an eventsource",
        "not com.microsoft.SQL.CES.DML",
    ]
    for message_id, fragment in zip(ids, expected, strict=True):
        assert fragment in reasons[message_id], reasons[message_id]


def test_every_bronze_message_has_one_outcome(spark, runs) -> None:
    bronze = spark.sql(
        " union ".join(f"select '{f}', message_id from bronze.raw_{f}" for f in BRONZE_FORMATS)
    ).count()
    outcomes = spark.table("silver.cdc_message_outcomes")
    assert outcomes.count() == bronze
    assert outcomes.select("source_format", "message_id").distinct().count() == bronze


def test_building_again_changes_nothing(spark, dbt, runs) -> None:
    tables = [
        "silver.cdc_changes",
        "silver.cdc_quarantine",
        "silver.cdc_message_outcomes",
        "silver.cdc_table_columns",
        "gold.cdc_history",
        "gold.cdc_current",
    ]
    before = {t: sorted(map(str, spark.table(t).collect())) for t in tables}
    staged = staged_times(spark)
    dbt("build")
    assert {t: sorted(map(str, spark.table(t).collect())) for t in tables} == before
    # Nothing new: no row of any incremental table was processed again.
    assert staged_times(spark) == staged


def test_a_run_processes_only_the_new_messages_and_the_events_they_touch(spark, runs) -> None:
    before, after = runs["after_first"]["staged"], staged_times(spark)
    first_ids = set(message_ids(spark, runs["first"]))
    new_ids = set(message_ids(spark, runs["second"])) | set(message_ids(spark, runs["redelivered"]))
    for table in ("silver.stg_landed__messages", "silver.stg_ces__messages", "silver.int_ces__segments"):
        old_rows = {k: v for k, v in after[table].items() if k in before[table]}
        assert old_rows == before[table], table  # rows of the first run were not processed again
        assert new_ids & set(after[table]) - set(before[table]) == new_ids & set(after[table])
    # Of this scenario's events (the generated traffic's land in the same builds), only those
    # that got a new (non-duplicate) segment were regrouped: doc 7 (its final segment), doc 8
    # (the late insert) and the reading's update; the redelivered reference messages are
    # duplicates and touch nothing.
    events = event_keys(spark, runs["first"].parent)
    restaged = {
        k
        for k, v in after["silver.int_ces__events"].items()
        if k in events and before["silver.int_ces__events"].get(k) != v
    }
    assert len(restaged) == 3
    # Outcomes revisited: the new messages, plus the first run's pending segments of doc 7.
    outcomes_restaged = {
        k
        for k, v in after["silver.int_ces__message_outcomes"].items()
        if before["silver.int_ces__message_outcomes"].get(k) != v
    }
    assert first_ids & outcomes_restaged == set(message_ids(spark, runs["first"])[:2])


def test_datetimeoffset_values_are_converted_to_utc(spark, runs) -> None:
    [insert] = spark.sql(
        "select after from silver.cdc_changes "
        "where table_id = 'scenario.dbo.readings' and operation = 'insert'"
    ).collect()
    assert insert.after == {
        "reading_id": "1",
        "taken_at": "2025-03-14 04:30:00.123456",
        "received_at": "2025-03-15 00:30:00.5",
        "ok": "true",
        "amount": "12.50",
        "raw": "AQL/",
    }


def test_update_with_an_empty_old_image_keeps_the_columns_it_did_not_send(spark, runs) -> None:
    [update] = spark.sql(
        "select before, after, changed_columns from silver.cdc_changes "
        "where table_id = 'scenario.dbo.readings' and operation = 'update'"
    ).collect()
    assert update.before is None and update.changed_columns is None
    assert update.after == {"reading_id": "1", "ok": "false", "taken_at": "2025-03-14 18:00:00"}
    rows = spark.sql(
        "select version_number, is_current, row_data from gold.cdc_history "
        "where table_id = 'scenario.dbo.readings' order by version_number"
    ).collect()
    assert [(r.version_number, r.is_current) for r in rows] == [(1, False), (2, True)]
    assert rows[1].row_data == {
        "reading_id": "1",
        "taken_at": "2025-03-14 18:00:00",
        "received_at": "2025-03-15 00:30:00.5",
        "ok": "false",
        "amount": "12.50",
        "raw": "AQL/",
    }


def test_column_registry_has_types_keys_and_first_last_seen(spark, runs) -> None:
    rows = spark.sql(
        "select column_name, ordinal, source_type, spark_type, is_primary_key, first_seen_at, last_seen_at "
        "from silver.cdc_table_columns where table_id = 'scenario.dbo.docs' order by ordinal"
    ).collect()
    assert [tuple(r)[:5] for r in rows] == [
        ("doc_id", 1, "int", "int", True),
        ("title", 2, "nvarchar(200)", "string", False),
        ("body", 3, "nvarchar(max)", "string", False),
        ("updated", 4, "datetime2(7)", "timestamp", False),
    ]
    title = rows[1]
    assert (str(title.first_seen_at), str(title.last_seen_at)) == (
        "2025-03-14 10:00:01",
        "2025-03-14 12:00:00",
    )


def test_a_commit_with_an_older_landing_time_is_still_staged(spark, dbt, runs) -> None:
    """A landing run that started before the last build but committed after it (two `land`
    runs overlapping a `dbt build`): its messages carry an older ingested_at, yet are read,
    because bronze is read by Iceberg commit order, not by landing time."""
    spark.sql(
        "insert into bronze.raw_ces select 'late-commit-1', 'file:///late.jsonl', null, 1, null, "
        "'not json', cast(map() as map<string,string>), null, timestamp'2000-01-01 00:00:00', 'late-batch'"
    )
    dbt("build")
    assert outcome_of(spark, ["late-commit-1"]) == {"late-commit-1": "quarantined"}
