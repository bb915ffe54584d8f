"""End to end for Oracle GoldenGate (JSON formatter): the sample messages (inserts, a whole and
compressed updates, a primary-key update, a key-only delete, a redelivered operation, a table
without a key and its truncate, a JSON schema document), then a second run with operations that
arrive late (a lower pos; one of them of a key that a key change of the first run continued),
a redelivery across runs, another key change and malformed messages; numbers keep their digits;
gold equals what the source holds, and an incremental build equals a full refresh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import SNAPSHOT, history, outcomes, quarantine_reasons

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "goldengate" / "jsonl" / "reference_examples.jsonl"
TABLE = "GGTEST.ACCOUNTS"


def op(op_type: str, pos: int, before=None, after=None, seconds: int = 0, table: str = TABLE) -> str:
    message = {
        "table": table,
        "op_type": op_type,
        "op_ts": f"2025-06-01 12:00:{seconds:02d}.000000",
        "current_ts": f"2025-06-01T12:00:{seconds:02d}.500000",
        "pos": f"{pos:020d}",
        "primary_keys": ["ID"],
    }
    if before is not None:
        message["before"] = before
    if after is not None:
        message["after"] = after
    return json.dumps(message)


def current(spark, table_id: str) -> dict[str, dict]:
    rows = spark.sql(
        f"select primary_key, row_data from gold.cdc_current where table_id = '{table_id}'"
    ).collect()
    return {",".join(f"{k}={v}" for k, v in sorted(r.primary_key.items())): r.row_data for r in rows}


def scenario(spark, work: Path) -> Scenario:
    """Two runs, one build after each (tests/helpers/pipeline_scenarios.py)."""
    # The samples under a schema of this test's own: other tests (test_dbt_project.py) land
    # sample_data/ on the same lakehouse, and the same operations again would be duplicates.
    reference = work / "reference.jsonl"
    reference.write_text(SAMPLE.read_text(encoding="utf-8").replace("QASOURCE", "GGSAMPLE"), encoding="utf-8")
    first = work / "run1.jsonl"
    first.write_text(
        "\n".join(
            [
                op("I", 100, after={"ID": 1, "OWNER": "Ann", "BALANCE": 10.5, "NOTE": "x"}, seconds=1),
                op("I", 200, after={"ID": 2, "OWNER": "Bob", "BALANCE": 20, "NOTE": None}, seconds=2),
                # a NUMBER(38,2) beyond a double's digits, sent as a JSON number
                op("I", 250, after={"ID": 9, "OWNER": "Max", "BALANCE": 0, "NOTE": None}, seconds=2).replace(
                    '"BALANCE": 0', '"BALANCE": 123456789012345678901234.50'
                ),
                op("I", 260, after={"ID": 4, "OWNER": "Dan", "BALANCE": 40, "NOTE": None}, seconds=2),
                # the key changes 4 -> 5, compressed; an update of key 4 before it arrives in run 2
                op("U", 280, before={"ID": 4, "BALANCE": 40}, after={"ID": 5, "BALANCE": 45}, seconds=2),
                # compressed: only the key and the changed column; NOTE set to null
                op("U", 300, before={"ID": 1, "NOTE": "x"}, after={"ID": 1, "NOTE": None}, seconds=3),
                op("X", 400, after={"ID": 3}),
                op("I", 500, after={"ID": 4}).replace('"pos": "00000000000000000500"', '"pos": "5x"'),
                op("I", 600, after={"ID": 5}).replace('"op_ts": "2025-06-01 12:00:00.000000", ', ""),
                op("I", 700, after={"OWNER": "Zed"}),  # no key value
                "[1, 2]",
            ]
        )
        + "\n"
    )
    yield [Land("goldengate", "jsonl", (reference, first))]
    after_first = {
        "accounts": current(spark, "ggtest.accounts"),
        "outcomes": outcomes(spark, "goldengate", first),
    }
    second = work / "run2.jsonl"
    second.write_text(
        "\n".join(
            [
                # the key changes 2 -> 3, compressed: OWNER unchanged, BALANCE changed
                op("U", 900, before={"ID": 2, "BALANCE": 20}, after={"ID": 3, "BALANCE": 25}, seconds=9),
                # arrives late: committed before the key change (pos 800)
                op("U", 800, before={"ID": 2, "OWNER": "Bob"}, after={"ID": 2, "OWNER": "Robert"}, seconds=8),
                # redelivered copy of run 1's compressed update
                op("U", 300, before={"ID": 1, "NOTE": "x"}, after={"ID": 1, "NOTE": None}, seconds=3),
                op("D", 1000, before={"ID": 1}, seconds=10),
                op("I", 1100, after={"ID": 1, "OWNER": "Ann", "BALANCE": 0, "NOTE": "back"}, seconds=11),
                # committed before run 1's key change 4 -> 5: key 5 carries the new owner
                op("U", 270, before={"ID": 4, "OWNER": "Dan"}, after={"ID": 4, "OWNER": "Daniel"}, seconds=2),
            ]
        )
        + "\n"
    )
    yield [Land("goldengate", "jsonl", (second,))]
    return {"after_first": after_first, "reference": reference, "first": first, "second": second}


@pytest.fixture(scope="module")
def runs(pipeline_scenarios):
    return pipeline_scenarios["goldengate"]


def test_the_sample_messages_give_what_the_source_holds(spark, runs) -> None:
    assert current(spark, "ggsample.tcustmer") == {
        "CUST_CODE=BILL": {"CUST_CODE": "BILL", "NAME": "BG SOFTWARE CO.", "CITY": "SEATTLE", "STATE": "OR"},
        "CUST_CODE=JANE": {"CUST_CODE": "JANE", "NAME": "ROCKY FLYER INC.", "CITY": "BOULDER", "STATE": "CO"},
    }
    assert current(spark, "ggsample.tcustord") == {}  # its one order was deleted by key
    # JSON numbers keep the digits they were sent with: 17520.00, not a double's 17520.0.
    order = history(spark, "ggsample.tcustord", columns=("version_number", "row_data['PRODUCT_PRICE']"))
    assert order == [(1, "17520.00"), (2, "14000.00"), (3, "14000.00")]
    assert current(spark, "orclpdb1.ggsample.tsrslts") == {}  # the keyless table was truncated
    will = history(spark, "ggsample.tcustmer", ("CUST_CODE", "WILL"))
    assert [v[:4] for v in will] == [
        (1, "insert", False, False),
        (2, "update", False, False),
        (3, "delete", True, True),
    ]
    found = outcomes(spark, "goldengate", runs["reference"])
    # Lines 6 and 9 are one operation (same table and pos), landed together: one copy is the change.
    assert sorted([found[5], found[8]]) == ["change", "duplicate"]
    assert [o for i, o in enumerate(found) if i not in (5, 8)] == [*["change"] * 9, "control"]
    [schema] = spark.sql(
        "select table_id, ddl_operation, ddl_text from silver.cdc_schema_changes "
        "where source_format = 'goldengate' and table_id = 'ggsample.tcustmer'"
    ).collect()
    assert schema.ddl_operation == "JSON_SCHEMA" and schema.ddl_text.endswith("CUST_CODE, NAME, CITY, STATE")


def test_compressed_updates_keep_the_columns_they_did_not_send(runs) -> None:
    first = runs["after_first"]
    assert first["accounts"] == {
        "ID=1": {"ID": "1", "OWNER": "Ann", "BALANCE": "10.5", "NOTE": None},
        "ID=2": {"ID": "2", "OWNER": "Bob", "BALANCE": "20", "NOTE": None},
        "ID=5": {"ID": "5", "OWNER": "Dan", "BALANCE": "45", "NOTE": None},
        "ID=9": {"ID": "9", "OWNER": "Max", "BALANCE": "123456789012345678901234.50", "NOTE": None},
    }
    assert first["outcomes"][:6] == ["change"] * 6


def test_key_changes_late_operations_and_redeliveries(spark, runs) -> None:
    assert current(spark, "ggtest.accounts") == {
        "ID=1": {"ID": "1", "OWNER": "Ann", "BALANCE": "0", "NOTE": "back"},
        "ID=3": {"ID": "3", "OWNER": "Robert", "BALANCE": "25", "NOTE": None},
        # key 5 continues key 4, whose update committed before the key change arrived a run later
        "ID=5": {"ID": "5", "OWNER": "Daniel", "BALANCE": "45", "NOTE": None},
        "ID=9": {"ID": "9", "OWNER": "Max", "BALANCE": "123456789012345678901234.50", "NOTE": None},
    }
    two = history(spark, "ggtest.accounts", ("ID", "2"))
    assert [v[:4] for v in two] == [
        (1, "insert", False, False),
        (2, "update", False, False),
        (3, "delete", True, True),
    ]
    assert outcomes(spark, "goldengate", runs["second"]) == [
        "change",
        "change",
        "duplicate",
        "change",
        "change",
        "change",
    ]


def test_malformed_messages_are_quarantined_with_a_reason(spark, runs) -> None:
    reasons = quarantine_reasons(spark, "goldengate", runs["first"])
    assert len(reasons) == 5
    assert "Unknown GoldenGate op_type 'X'" in reasons[0]
    assert "The pos '5x' is not a whole number" in reasons[1]
    assert "The op_ts (missing)" in reasons[2]
    assert "A key column (ID) has no value" in reasons[3]
    assert "not a JSON object" in reasons[4]


def test_an_incremental_build_equals_a_full_refresh(spark, dbt, runs) -> None:
    tables = ["ggtest.accounts", "ggsample.tcustmer", "ggsample.tcustord", "orclpdb1.ggsample.tsrslts"]
    incremental = set(history(spark, tables, columns=SNAPSHOT))
    changes = "select change_id, operation, is_duplicate from silver.int_goldengate__changes"
    incremental_changes = {tuple(r) for r in spark.sql(changes).collect()}
    dbt("run", "--full-refresh", "--select", "stg_goldengate__messages+")
    assert set(history(spark, tables, columns=SNAPSHOT)) == incremental
    assert {tuple(r) for r in spark.sql(changes).collect()} == incremental_changes
