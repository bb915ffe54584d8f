"""End to end for DataWorks: the reference document's examples, then an
update pair whose halves land in different runs, a redelivered half, a
TRUNCATE, an ALTER adding a column, and malformed messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import history, outcomes, quarantine_reasons

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = [("id", "LONG"), ("name", "STRING"), ("vip", "BOOLEAN"), ("born", "DATE")]


def message(op: str, sequence_id: str, before=None, after=None, columns=COLUMNS, ddl=None) -> str:
    image = lambda row: None if row is None else {"dataColumn": row}  # noqa: E731
    return json.dumps(
        {
            "schema": {
                "dataColumn": [{"name": n, "type": t} for n, t in columns],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": "crm", "tableName": "people"},
            },
            "payload": {
                "before": image(before),
                "after": image(after),
                "sequenceId": sequence_id,
                "op": op,
                "timestamp": {"eventTime": 1700000000000 + int(sequence_id[-3:]) * 1000},
                "ddl": ddl,
            },
            "version": "1.0.0",
        }
    )


ANN = {"id": 1, "name": "Ann", "vip": False, "born": 946684800000}
BOB = {"id": 2, "name": "Bob", "vip": True, "born": None}


def scenario(spark, work: Path) -> Scenario:
    """Two runs, one build after each (tests/helpers/pipeline_scenarios.py)."""
    reference = work / "reference.jsonl"
    shutil.copy(ROOT / "sample_data" / "dataworks" / "jsonl" / "reference_examples.jsonl", reference)
    first = work / "run1.jsonl"
    first.write_text(
        "\n".join(
            [
                message("INSERT", "1000000000000000001", after=ANN),
                message("INSERT", "1000000000000000002", after=BOB),
                message("UPDATE_BEFOR", "1000000000000000003", before=ANN),  # its other half comes later
                '{"payload": {"op": "SELECT"}}',
                "[1, 2]",
            ]
        )
        + "\n"
    )
    yield [Land("dataworks", "jsonl", (reference, first))]
    after_first = {
        "history_1": history(spark, "crm.people", ("id", "1")),
        "outcomes": outcomes(spark, "dataworks", first),
    }
    second = work / "run2.jsonl"
    with_email = [*COLUMNS, ("email", "STRING")]
    second.write_text(
        "\n".join(
            [
                message("UPDATE_AFTER", "1000000000000000003", after={**ANN, "vip": True}),
                message("UPDATE_BEFOR", "1000000000000000003", before=ANN),  # redelivered half
                message(
                    "ALTER",
                    "1000000000000000004",
                    ddl={"text": "ALTER TABLE people ADD COLUMN email VARCHAR(100)"},
                ),
                message(
                    "UPDATE_AFTER",
                    "1000000000000000005",
                    before={**ANN, "vip": True, "email": None},
                    after={**ANN, "vip": True, "email": "ann@example.org"},
                    columns=with_email,
                ),
                message("TRUNCATE", "1000000000000000006", ddl={"text": "TRUNCATE TABLE people"}),
                message("INSERT", "1000000000000000007", after={**BOB, "email": None}, columns=with_email),
            ]
        )
        + "\n"
    )
    yield [Land("dataworks", "jsonl", (second,))]
    return {"after_first": after_first, "first": first, "second": second, "reference": reference}


@pytest.fixture(scope="module")
def runs(pipeline_scenarios):
    return pipeline_scenarios["dataworks"]


def test_reference_examples(spark, runs) -> None:
    rows = spark.sql(
        "select primary_key['#alibaba_rds_row_id#'] as row_id, version_number, operation, is_current, "
        "is_deleted, "
        "row_data['sex'] as sex from gold.cdc_history where table_id = 'pkset_test.pkset_test_no_pk' "
        "order by version_number"
    ).collect()
    assert [tuple(r) for r in rows] == [
        ("15", 1, "insert", False, False, "man"),
        ("15", 2, "update", False, False, "woman"),
        ("15", 3, "delete", True, True, "woman"),
    ]
    # The Oracle template's UPDATE_AFTER changes the key 111 -> 222: the old key closes, the new one opens.
    keys = spark.sql(
        "select primary_key['id'] as id, is_deleted from gold.cdc_history "
        "where table_id = 'mydatabase.myschema.tablename' and is_current order by id"
    ).collect()
    assert [tuple(k) for k in keys] == [("111", True), ("222", False)]
    assert outcomes(spark, "dataworks", runs["reference"]) == [
        "change",
        "control",
        "change",
        "change",
        "change",
        "change",
        "change",
    ]


def test_an_update_pair_waits_for_its_second_half(spark, runs) -> None:
    first = runs["after_first"]
    assert [v[:4] for v in first["history_1"]] == [(1, "insert", True, False)]
    assert first["outcomes"] == ["change", "change", "pending", "quarantined", "quarantined"]
    assert outcomes(spark, "dataworks", runs["first"])[2] == "change"
    assert outcomes(spark, "dataworks", runs["second"]) == [
        "change",
        "duplicate",
        "control",
        "change",
        "change",
        "change",
    ]


def test_alter_adds_a_column_to_later_versions_and_truncate_closes_live_keys(spark, runs) -> None:
    versions = history(spark, "crm.people", ("id", "1"))
    assert [v[:4] for v in versions] == [
        (1, "insert", False, False),
        (2, "update", False, False),
        (3, "update", False, False),
        (4, "truncate", True, True),
    ]
    assert "email" not in versions[1][4] and versions[2][4]["email"] == "ann@example.org"
    assert versions[0][4]["born"] == "2000-01-01 00:00:00" and versions[1][4]["vip"] == "true"
    bob = history(spark, "crm.people", ("id", "2"))
    assert [v[:4] for v in bob] == [
        (1, "insert", False, False),
        (2, "truncate", False, True),
        (3, "insert", True, False),
    ]
    [ddl] = spark.sql(
        "select ddl_text from silver.cdc_schema_changes "
        "where table_id = 'crm.people' and ddl_operation = 'ALTER'"
    ).collect()
    assert ddl.ddl_text.startswith("ALTER TABLE people ADD COLUMN email")


def test_malformed_messages_are_quarantined_with_a_reason(spark, runs) -> None:
    reasons = quarantine_reasons(spark, "dataworks", runs["first"])
    assert len(reasons) == 2
    assert "Unknown DataWorks op 'SELECT'" in reasons[0]
    assert "not a JSON object" in reasons[1]
