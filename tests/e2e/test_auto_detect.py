"""land --format auto on one file mixing all five producers' messages (CES,
Debezium SQL Server and PostgreSQL, DataWorks, Qlik) and two it cannot
recognise: each lands in its producer's bronze table, the unknown ones in
bronze.raw_unknown, which silver reports in quarantine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_ingest.bronze import BRONZE_FORMATS

pytestmark = pytest.mark.spark

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
UNKNOWN = ['{"event": "page_view", "user": 7}', "plain text, not JSON"]
QLIK_SCHEMA_ID = "6f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f"


def lines(relative: str) -> list[str]:
    return (SAMPLES / relative).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    postgresql = [
        json.loads(line)["payload"]
        for line in lines("debezium/kcat/postgresql_reference.jsonl")
        if json.loads(line)["payload"] is not None
    ]
    # Other tests build the same samples: renamed tables keep these changes their own.
    debezium = lines("debezium/jsonl/sqlserver_reference.jsonl") + postgresql
    groups = {
        "ces": lines("ces/jsonl/reference_purchases.jsonl"),
        "debezium": [m.replace('"customers"', '"auto_customers"') for m in debezium],
        "dataworks": [
            m.replace('"tableName":"', '"tableName":"auto_')
            for m in lines("dataworks/jsonl/reference_examples.jsonl")
        ],
        "qlik": [
            m.replace('"table":"EMPLOYEES"', '"table":"AUTO_EMPLOYEES"').replace(
                QLIK_SCHEMA_ID, "auto-" + QLIK_SCHEMA_ID
            )
            for m in lines("qlik/jsonl/reference_examples.jsonl")
        ],
        "unknown": UNKNOWN,
    }
    messages = [m for group in groups.values() for m in group]
    messages = messages[::2] + messages[1::2]  # interleaved
    path = tmp_path_factory.mktemp("auto") / "mixed.jsonl"
    path.write_text("\n".join(messages) + "\n", encoding="utf-8")
    return path, {f: len(group) for f, group in groups.items()}


def test_auto_routes_every_message_to_its_producer_table(spark, land, mixed) -> None:
    path, expected = mixed
    result = land("--format", "auto", "--container", "jsonl", path)
    assert result.exit_code == 0, result.output
    uri = path.resolve().as_uri()
    landed = {
        f: spark.sql(f"select count(*) from bronze.raw_{f} where source_uri = '{uri}'").first()[0]
        for f in BRONZE_FORMATS
    }
    assert landed == {f: expected.get(f, 0) for f in BRONZE_FORMATS}
    again = land("--format", "auto", "--container", "jsonl", path)
    assert again.exit_code == 0 and "landed 0 message(s)" in again.output


def test_unrecognised_messages_are_quarantined_with_a_reason(spark, dbt, mixed) -> None:
    path, _ = mixed
    dbt("build")
    rows = spark.sql(
        "select q.message_value, q.reason from silver.cdc_quarantine q join bronze.raw_unknown b "
        f"on q.message_id = b.message_id and q.source_format = 'unknown' "
        f"where b.source_uri = '{path.resolve().as_uri()}'"
    ).collect()
    assert sorted(r.message_value for r in rows) == sorted(UNKNOWN)
    assert all("recognised no producer" in r.reason for r in rows)


def test_recognised_messages_are_parsed_by_their_producer_branch(spark, dbt, mixed) -> None:
    path, expected = mixed
    outcomes = dict(
        spark.sql(
            "select o.source_format, count(*) from silver.cdc_message_outcomes o join ("
            + " union all ".join(
                f"select message_id, '{f}' as source_format, source_uri from bronze.raw_{f}"
                for f in BRONZE_FORMATS
            )
            + ") b on o.message_id = b.message_id and o.source_format = b.source_format "
            f"where b.source_uri = '{path.resolve().as_uri()}' and o.outcome <> 'quarantined' "
            "group by o.source_format"
        ).collect()
    )
    # Every message of a known producer is understood by its branch (change, control…). The exception
    # proves the routing: the PostgreSQL values were taken out of their kcat records, so they have no Kafka
    # key, and their renamed table has no declared key: the Debezium branch quarantines exactly those.
    assert outcomes == {
        **{f: n for f, n in expected.items() if f != "unknown"},
        "debezium": expected["debezium"] - 4,
    }
    reasons = spark.sql(
        "select q.reason from silver.cdc_quarantine q join bronze.raw_debezium b "
        "on q.message_id = b.message_id "
        f"where b.source_uri = '{path.resolve().as_uri()}'"
    ).collect()
    assert len(reasons) == 4 and all("carries no key" in r.reason for r in reasons)
