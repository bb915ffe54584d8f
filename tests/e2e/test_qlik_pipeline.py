"""End to end for Qlik Replicate: the reference examples (MD, REFRESH, INSERT,
UPDATE, DELETE in the atMSG envelope, an INSERT without it), then data that
arrives before its metadata (pending, applied in the next run), a LOB left
out by columnMask, a new table version adding a column, a key-changing
update, redelivered copies and malformed messages, over two landing runs."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from cdc_tools.generators import qlik_messages as qm
from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import history, outcomes, quarantine_reasons

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
V1, V2 = "a1" * 16, "b2" * 16
COLUMNS = [
    ("ID", "INT4", 0, 0, 1),
    ("TITLE", "STRING", 0, 0, 0),
    ("BODY", "CLOB", 0, 0, 0),
    ("PRICE", "NUMERIC", 8, 2, 0),
    ("ISSUED", "DATETIME", 0, 6, 0),
    ("FLAG", "BOOLEAN", 0, 0, 0),
    ("PICTURE", "BYTES", 0, 0, 0),
]


def metadata(schema_id: str, version: int, columns=COLUMNS, table: str = "DOCS") -> str:
    """A metadata message with this test's own schema id (data can name it before it lands)."""
    described = qm.TableVersion(
        server="r1",
        task="docs",
        schema="SALES",
        table=table,
        version=version,
        columns=tuple(
            qm.Column(n, kind, precision=p, scale=s, key_position=k) for n, kind, p, s, k in columns
        ),
        timestamp=datetime(2025, 5, version),
    )
    message = qm.metadata(described)
    message["message"].update(schemaId=schema_id, dataSchema="{}")
    return json.dumps(message)


def data(operation: str, seq: int, row: dict, before=None, change="7F", column="7F", schema_id=V1) -> str:
    cdc = operation != "REFRESH"
    return json.dumps(
        {
            "magic": "atMSG",
            "type": "DT",
            "headers": None,
            "messageSchemaId": schema_id,
            "messageSchema": None,
            "message": {
                "data": row,
                "beforeData": before,
                "headers": {
                    "operation": operation,
                    "changeSequence": f"{20250601000000000000000000000000000 + seq}" if cdc else "",
                    "timestamp": f"2025-06-01 00:00:{seq:02d}.000001" if cdc else "",
                    "streamPosition": "",
                    "transactionId": f"T{seq}" if cdc else "",
                    "changeMask": change,
                    "columnMask": column,
                    "transactionEventCounter": 1 if cdc else None,
                    "transactionLastEvent": True if cdc else None,
                },
            },
        }
    )


DOC1 = {
    "ID": "1",
    "TITLE": "Draft",
    "BODY": "long text",
    "PRICE": "12.5",
    "ISSUED": "2025-01-02 03:04:05.123400",
    "FLAG": "1",
    "PICTURE": "DEADBEEF",
}
DOC2 = {**DOC1, "ID": "2", "TITLE": "Second", "PICTURE": None}
N1, N2 = "c3" * 16, "d4" * 16
NOTES = [("ID", "INT4", 0, 0, 1), ("TEXT", "STRING", 0, 0, 0)]


def bare_note(row: dict) -> str:
    """A data message without the envelope and without externalSchemaId: found by its table's name."""
    return json.dumps(
        {
            "schema": "SALES",
            "table": "NOTES",
            "data": row,
            "beforeData": None,
            "headers": {
                "operation": "INSERT",
                "changeSequence": "20250601000000000000000000000000099",
                "timestamp": "2025-06-01 00:01:39.000001",
                "streamPosition": "",
                "transactionId": "T99",
                "changeMask": "",
                "columnMask": "",
                "transactionEventCounter": 1,
                "transactionLastEvent": True,
            },
        }
    )


def note_detail(spark, path: Path) -> str:
    """The outcome detail of the SALES.NOTES row landed from `path`."""
    return spark.sql(
        "select o.detail from silver.cdc_message_outcomes o join bronze.raw_qlik b on o.message_id = "
        f"b.message_id where b.source_uri = '{path.resolve().as_uri()}' and b.message_value like '%LANG%'"
    ).first()[0]


def scenario(spark, work: Path) -> Scenario:
    """Two runs, one build after each (tests/helpers/pipeline_scenarios.py)."""
    reference = work / "reference.jsonl"
    shutil.copy(ROOT / "sample_data" / "qlik" / "jsonl" / "reference_examples.jsonl", reference)
    first = work / "run1.jsonl"
    first.write_text(
        "\n".join(
            [
                data("INSERT", 1, DOC1),  # its metadata comes in the second run
                data("REFRESH", 0, DOC2, change="", column="7F"),
                '{"magic": "atMSG", "type": "XX", "message": {}}',
                data("UPSERT", 2, DOC1),
                data("INSERT", 3, DOC1, change="7G"),
                "not json",
                # SALES.NOTES: version 1 is known, but the row has LANG, which only version 2
                # (landed in the second run) has: the row waits for it, nothing is dropped.
                metadata(N1, 1, NOTES, table="NOTES"),
                bare_note({"ID": "1", "TEXT": "hello", "LANG": "en"}),
            ]
        )
        + "\n"
    )
    yield [Land("qlik", "jsonl", (reference, first))]
    after_first = {
        "outcomes": outcomes(spark, "qlik", first),
        "docs": spark.sql("select count(*) from silver.cdc_changes where table_id = 'sales.docs'").first()[0],
        "notes_detail": note_detail(spark, first),
    }
    second = work / "run2.jsonl"
    with_note = [*COLUMNS, ("NOTE", "STRING", 0, 0, 0)]
    retitled = {**DOC1, "TITLE": "Final", "BODY": None}  # BODY not sent (columnMask bit 3 clear)
    second.write_text(
        "\n".join(
            [
                metadata(V1, 1),
                data("UPDATE", 4, retitled, change="02", column="7B"),
                data("UPDATE", 4, retitled, change="02", column="7B"),  # redelivered
                metadata(V1, 1),  # redelivered
                metadata(V2, 2, with_note),
                data("UPDATE", 5, {**retitled, "NOTE": "hi"}, change="80", column="FB", schema_id=V2),
                data("UPDATE", 6, {**DOC2, "ID": "3"}, before=DOC2, change="01", schema_id=V2),
                metadata(N2, 2, [*NOTES, ("LANG", "STRING", 0, 0, 0)], table="NOTES"),
            ]
        )
        + "\n"
    )
    yield [Land("qlik", "jsonl", (second,))]
    return {"after_first": after_first, "first": first, "second": second, "reference": reference}


@pytest.fixture(scope="module")
def runs(pipeline_scenarios):
    return pipeline_scenarios["qlik"]


def test_reference_examples(spark, runs) -> None:
    assert [v[:4] for v in history(spark, "hr.employees", ("EMPLOYEE_ID", "101"))] == [
        (1, "snapshot", False, False),
        (2, "update", True, False),
    ]
    assert history(spark, "hr.employees", ("EMPLOYEE_ID", "101"))[1][4]["SALARY"] == "5500.00"
    assert [v[:4] for v in history(spark, "hr.employees", ("EMPLOYEE_ID", "102"))] == [
        (1, "insert", False, False),
        (2, "delete", True, True),
    ]
    # Without the envelope: the table comes from schema / table, the version from externalSchemaId.
    assert [v[:4] for v in history(spark, "hr.employees", ("EMPLOYEE_ID", "103"))] == [
        (1, "insert", True, False)
    ]
    current = spark.sql(
        "select primary_key['EMPLOYEE_ID'] as id, row_data['NAME'] as name from gold.cdc_current "
        "where table_id = 'hr.employees' order by id"
    ).collect()
    assert [tuple(r) for r in current] == [("101", "Anna Doe"), ("103", "Mia Poe")]
    [update] = spark.sql(
        "select changed_columns, sequence, transaction_id, commit_ts from silver.cdc_changes "
        "where table_id = 'hr.employees' and operation = 'update'"
    ).collect()
    assert update.changed_columns == ["SALARY"]
    assert update.sequence == "1:20250314164501000000000000000000002"
    assert update.transaction_id == "0000000000000000000000000000A1B2"
    assert str(update.commit_ts) == "2025-03-14 16:45:01.123456"
    # Other tests may have landed the same reference messages from sample_data before this one (one
    # lakehouse per test run): then these copies are duplicates of those, which carry the outcome.
    reference_uri = runs["reference"].resolve().as_uri()
    first_copies = [
        r.outcome
        for r in spark.sql(
            "select first(o.outcome) as outcome from bronze.raw_qlik b join silver.cdc_message_outcomes o "
            "on o.message_id = b.message_id where b.message_value in "
            f"(select message_value from bronze.raw_qlik where source_uri = '{reference_uri}') "
            "and o.outcome <> 'duplicate' group by b.message_value order by min(b.source_offset)"
        ).collect()
    ]
    assert first_copies == ["control", "change", "change", "change", "change", "change"]
    assert set(outcomes(spark, "qlik", runs["reference"])) <= {"control", "change", "duplicate"}


def test_data_before_its_metadata_is_pending_then_applied(spark, runs) -> None:
    first = runs["after_first"]
    assert first["docs"] == 0
    assert first["outcomes"] == [
        "pending",
        "pending",
        "quarantined",
        "quarantined",
        "quarantined",
        "quarantined",
        "control",
        "pending",
    ]
    assert outcomes(spark, "qlik", runs["first"])[:2] == ["change", "change"]
    assert outcomes(spark, "qlik", runs["first"])[-1] == "change"
    second = outcomes(spark, "qlik", runs["second"])
    # The two copies of each redelivered message land together: either one is the duplicate.
    assert sorted(second[1:3]) == ["change", "duplicate"]
    assert sorted([second[0], second[3]]) == ["control", "duplicate"]
    assert second[4:] == ["control", "change", "change", "control"]


def test_a_row_found_by_table_name_waits_for_the_version_that_has_all_its_columns(spark, runs) -> None:
    """A bare data message resolved by its table's name to the latest version seen so far would
    lose a column that only a newer version has: it stays pending (saying why) until that
    version arrives, then it is applied with the column, as a full refresh applies it."""
    detail = note_detail(spark, runs["first"])
    assert detail.startswith("Change "), detail
    assert runs["after_first"]["notes_detail"].startswith("Waiting for the metadata of SALES.NOTES"), runs
    assert "LANG" in runs["after_first"]["notes_detail"], runs
    [(version, operation, current, deleted, row)] = history(spark, "sales.notes", ("ID", "1"))
    assert (version, operation, current, deleted) == (1, "insert", True, False)
    assert row == {"ID": "1", "TEXT": "hello", "LANG": "en"}


def test_values_decode_by_metadata_type_and_unsent_columns_keep_their_value(spark, runs) -> None:
    versions = history(spark, "sales.docs", ("ID", "1"))
    assert [v[:4] for v in versions] == [
        (1, "insert", False, False),
        (2, "update", False, False),
        (3, "update", True, False),
    ]
    first = versions[0][4]
    assert first["PRICE"] == "12.50" and first["ISSUED"] == "2025-01-02 03:04:05.1234"
    assert first["FLAG"] == "true" and first["PICTURE"] == "3q2+7w=="
    assert versions[1][4]["TITLE"] == "Final" and versions[1][4]["BODY"] == "long text"
    assert "NOTE" not in versions[1][4] and versions[2][4]["NOTE"] == "hi"
    [change] = spark.sql(
        "select after, changed_columns from silver.cdc_changes where table_id = 'sales.docs' "
        f"and sequence = '1:{20250601000000000000000000000000000 + 4}'"
    ).collect()
    assert "BODY" not in change.after and change.changed_columns == ["TITLE"]


def test_snapshot_precedes_cdc_and_a_key_change_closes_the_old_key(spark, runs) -> None:
    assert [v[:4] for v in history(spark, "sales.docs", ("ID", "2"))] == [
        (1, "snapshot", False, False),
        (2, "delete", True, True),
    ]
    assert [v[:4] for v in history(spark, "sales.docs", ("ID", "3"))] == [(1, "insert", True, False)]


def test_table_versions_feed_the_column_registry_and_schema_log(spark, runs) -> None:
    columns = spark.sql(
        "select column_name, ordinal, source_type, spark_type, is_primary_key from silver.cdc_table_columns "
        "where table_id = 'sales.docs' order by ordinal"
    ).collect()
    assert [tuple(c) for c in columns][:4] == [
        ("ID", 1, "INT4", "int", True),
        ("TITLE", 2, "STRING", "string", False),
        ("BODY", 3, "CLOB", "string", False),
        ("PRICE", 4, "NUMERIC", "decimal(8,2)", False),
    ]
    assert columns[-1].column_name == "NOTE"
    versions = spark.sql(
        "select sequence from silver.cdc_schema_changes where table_id = 'sales.docs' order by sequence"
    ).collect()
    assert [v.sequence for v in versions] == ["0000000001", "0000000002"]


def test_malformed_messages_are_quarantined_with_a_reason(spark, runs) -> None:
    reasons = quarantine_reasons(spark, "qlik", runs["first"])
    assert len(reasons) == 4
    assert "Unknown atMSG message type 'XX'" in reasons[0]
    assert "Unknown Qlik operation 'UPSERT'" in reasons[1]
    assert "changeMask '7G'" in reasons[2]
    assert "not a JSON object" in reasons[3]
