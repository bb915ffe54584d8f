"""End to end for Canal: the sample messages (a CREATE, a multi-row INSERT, a multi-row
UPDATE with `old` aligned by index, a key change, a DELETE, an ALTER, a TRUNCATE), then a
redelivered message, two updates landed out of order, a partial image, a multi-row DELETE,
a table without pkNames and malformed messages; then a full refresh of the producer's
models and of gold history equals what the incremental builds left. The samples' database
is renamed: other tests land the same samples, whose copies would be duplicates of these."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import SNAPSHOT, history, live_rows, outcomes, quarantine_reasons

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "canal" / "jsonl" / "canal_examples.jsonl"
TYPES = {
    "id": "int(11)",
    "customer": "varchar(64)",
    "amount": "decimal(10,2)",
    "paid": "tinyint(1)",
    "created_at": "datetime",
    "tag": "varbinary(8)",
    "note": "varchar(255)",
}
T0 = 1741943400000  # after the sample's last message
DB = "canalpipe"
TABLES = [f"{DB}.orders", f"{DB}.page_visits"]


def message(
    kind: str, es: int, data: list[dict] | None, old: list[dict] | None = None, table: str = "orders"
) -> str:
    types = TYPES if table == "orders" else {c: "varchar(64)" for c in (data or [{}])[0]}
    return json.dumps(
        {
            "data": data,
            "database": DB,
            "es": es,
            "id": 50,
            "isDdl": False,
            "mysqlType": types,
            "old": old,
            "pkNames": ["id"] if table == "orders" else None,
            "sql": "",
            "sqlType": {c: 12 for c in types},
            "table": table,
            "ts": es + 180,
            "type": kind,
        }
    )


def row(id_: str, amount: str, paid: str = "0", tag: str | None = None, note: str | None = None) -> dict:
    return {
        "id": id_,
        "customer": f"c-{id_}",
        "amount": amount,
        "paid": paid,
        "created_at": "2025-03-14 09:10:00",
        "tag": tag,
        "note": note,
    }


def scenario(spark, work: Path) -> Scenario:
    """Two runs, one build after each (tests/helpers/pipeline_scenarios.py)."""
    sample = work / "canal_examples.jsonl"
    sample.write_text(SAMPLE.read_text(encoding="utf-8").replace('"database":"shop"', f'"database":"{DB}"'))
    yield [Land("canal", "jsonl", (sample,))]
    first = {
        "current": live_rows(spark, f"{DB}.orders", ["id"]),
        "outcomes": outcomes(spark, "canal", sample),
    }
    redelivered = json.loads(sample.read_text().splitlines()[2])  # the multi-row UPDATE
    redelivered.update(id=77, ts=redelivered["ts"] + 60_000)  # another batch, handled again later
    partial = {k: v for k, v in row("5", "5.50").items() if k != "tag"}  # binlog_row_image NOBLOB
    second = work / "run2.jsonl"
    second.write_text(
        "\n".join(
            [
                json.dumps(redelivered),
                message("INSERT", T0, [row("5", "5.00", tag="xy")]),
                # out of order: the later update of id 4 is delivered before the earlier one
                message(
                    "UPDATE", T0 + 120_000, [row("4", "3.40", "1", note="gift")], old=[{"amount": "3.30"}]
                ),
                message(
                    "UPDATE", T0 + 60_000, [row("4", "3.30", "0", note="gift")], old=[{"amount": "3.20"}]
                ),
                message("UPDATE", T0 + 180_000, [partial], old=[{"amount": "5.00"}]),
                message("DELETE", T0 + 240_000, [row("1", "12.50", "1"), row("20", "7.00", "1")]),
                message("INSERT", T0 + 245_000, [{"url": "/cart", "visitor": "v-17"}], table="page_visits"),
                message("SELECT", T0 + 250_000, [row("9", "1.00")]),
                message(
                    "UPDATE", T0 + 260_000, [row("5", "6.00")], old=[{"amount": "5.50"}, {"amount": "1"}]
                ),
                "not json",
            ]
        )
        + "\n"
    )
    yield [Land("canal", "jsonl", (second,))]
    incremental = {
        "history": set(history(spark, TABLES, columns=SNAPSHOT)),
        "changes": _changes(spark),
        "outcomes": _outcomes(spark),
        "current": live_rows(spark, f"{DB}.orders", ["id"]),
    }
    return {"first": first, "sample": sample, "second": second, "incremental": incremental}


@pytest.fixture(scope="module")
def runs(spark, dbt, pipeline_scenarios):
    """The scenario's runs, then Canal's models and every model after them rebuilt in full (all
    of them: the files that share this lakehouse build next, and expect a build after a build to
    change nothing)."""
    dbt("run", "--full-refresh", "--select", "stg_canal__messages+")
    full_refresh = {
        "history": set(history(spark, TABLES, columns=SNAPSHOT)),
        "changes": _changes(spark),
        "outcomes": _outcomes(spark),
    }
    return {**pipeline_scenarios["canal"], "full_refresh": full_refresh}


def _changes(spark) -> set:
    return {
        tuple(r)
        for r in spark.sql(
            "select message_id, row_index, change_id, operation, sequence, "
            "to_json(array_sort(map_entries(primary_key))), to_json(array_sort(map_entries(before))), "
            "to_json(array_sort(map_entries(after))), is_duplicate, quarantine_reason "
            "from silver.int_canal__changes"
        ).collect()
    }


def _outcomes(spark) -> set:
    return {
        tuple(r)
        for r in spark.sql(
            "select message_id, outcome, detail from silver.int_canal__message_outcomes"
        ).collect()
    }


def _row(id_, customer, amount, paid, tag, note=...) -> dict:
    found = {
        "id": id_,
        "customer": customer,
        "amount": amount,
        "paid": paid,
        "created_at": "2025-03-14 09:01:01",
        "tag": tag,
    }
    if note is not ...:
        found["note"] = note
    return found


def test_sample_messages_leave_the_source_rows(runs) -> None:
    assert runs["first"]["current"] == {
        "id=1": _row("1", "Li Wei", "12.50", "1", "Af8="),
        "id=20": _row("20", "Zoë Müller", "7.00", "1", None),
        "id=4": {**_row("4", "Ana Souza", "3.20", "0", None, "gift"), "created_at": "2025-03-14 09:06:00"},
    }
    assert runs["first"]["outcomes"] == [
        "control",
        "change",
        "change",
        "change",
        "change",
        "control",
        "change",
        "change",
    ]


def test_a_key_change_closes_the_old_key(spark, runs) -> None:
    versions = history(spark, f"{DB}.orders", ("id", "2"))
    assert [v[:4] for v in versions] == [(1, "insert", False, False), (2, "delete", True, True)]


def test_second_run_orders_by_es_keeps_partial_images_and_skips_copies(spark, runs) -> None:
    current = runs["incremental"]["current"]
    assert set(current) == {"id=4", "id=5"}
    assert current["id=4"]["amount"] == "3.40" and current["id=4"]["paid"] == "1"
    assert current["id=5"]["amount"] == "5.50" and current["id=5"]["tag"] == "eHk="
    amounts = [v[4]["amount"] for v in history(spark, f"{DB}.orders", ("id", "4"))]
    assert amounts == ["3.20", "3.30", "3.40"]
    assert outcomes(spark, "canal", runs["second"]) == [
        "duplicate",
        "change",
        "change",
        "change",
        "change",
        "change",
        "quarantined",
        "quarantined",
        "quarantined",
        "quarantined",
    ]


def test_malformed_messages_and_tables_without_keys_are_quarantined_with_a_reason(spark, runs) -> None:
    assert quarantine_reasons(spark, "canal", runs["sample"]) == []
    keyless, *reasons = quarantine_reasons(spark, "canal", runs["second"])
    assert f"{DB}.page_visits" in keyless and "pkNames is empty" in keyless
    assert "Unknown Canal type 'SELECT'" in reasons[0]
    assert "aligned by index" in reasons[1]
    assert "not a JSON object" in reasons[2]


def test_ddl_is_logged(spark, runs) -> None:
    logged = [
        (r.table_id, r.ddl_operation)
        for r in spark.sql(
            "select table_id, ddl_operation from silver.cdc_schema_changes "
            f"where source_format = 'canal' and table_id like '{DB}.%' order by sequence"
        ).collect()
    ]
    assert logged == [
        (f"{DB}.orders", "CREATE"),
        (f"{DB}.orders", "ALTER"),
        (f"{DB}.page_visits", "TRUNCATE"),
    ]


def test_incremental_builds_equal_a_full_refresh(runs) -> None:
    for part in ("history", "changes", "outcomes"):
        assert runs["incremental"][part] == runs["full_refresh"][part], part
