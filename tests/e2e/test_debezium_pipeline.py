"""End to end for Debezium: the reference documents' examples (SQL Server
value with schema in a JSON-lines file; PostgreSQL key + value records with a
tombstone, a truncate and logical decoding messages in a kcat dump) landed and
built, then silver and gold checked exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import KEYED_VERSION, history, outcomes

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data" / "debezium"


def scenario(spark, work: Path) -> Scenario:
    """One run: the reference documents' examples (tests/helpers/pipeline_scenarios.py)."""
    shutil.copytree(SAMPLES / "jsonl", work / "jsonl")
    shutil.copytree(SAMPLES / "kcat", work / "kcat")
    yield [Land("debezium", "jsonl", (work / "jsonl",)), Land("debezium", "kcat", (work / "kcat",))]
    return work


@pytest.fixture(scope="module")
def references(pipeline_scenarios):
    return pipeline_scenarios["debezium"]


def test_sqlserver_reference_create_is_a_live_row(spark, references) -> None:
    assert history(spark, "testdb.dbo.customers", columns=KEYED_VERSION) == [
        (
            {"id": "1005"},
            1,
            "insert",
            True,
            False,
            {"id": "1005", "first_name": "john", "last_name": "doe", "email": "john.doe@example.org"},
        )
    ]
    [change] = spark.sql(
        "select source_connector, commit_ts, sequence from silver.cdc_changes "
        "where table_id = 'testdb.dbo.customers'"
    ).collect()
    assert change.source_connector == "sqlserver"
    assert str(change.commit_ts) == "2019-06-05 10:11:08.470000"
    assert change.sequence == "00000027000007580005:00000027000007580003:00000000000000000001"


def test_postgresql_reference_create_update_delete_then_truncate(spark, references) -> None:
    anne = {"id": "1", "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
    assert history(spark, "postgres.public.customers", columns=KEYED_VERSION) == [
        ({"id": "1"}, 1, "insert", False, False, anne),
        ({"id": "1"}, 2, "update", False, False, {**anne, "first_name": "Anne Marie"}),
        ({"id": "1"}, 3, "delete", True, True, {**anne, "first_name": "Anne Marie"}),
    ]
    assert spark.sql("select * from gold.cdc_current where table_id like 'postgres.%'").count() == 0
    operations = [
        r.operation
        for r in spark.sql(
            "select operation from silver.cdc_changes "
            "where table_id = 'postgres.public.customers' order by sequence"
        ).collect()
    ]
    assert operations == ["insert", "update", "delete", "truncate"]


def test_tombstones_and_logical_messages_are_control_events(spark, references) -> None:
    assert (
        sorted(outcomes(spark, "debezium", "kafka:PostgreSQL_server.%")) == ["change"] * 4 + ["control"] * 3
    )
    events = spark.sql(
        "select control_type, message_prefix, content_base64 from silver.cdc_control_events "
        "where source_format = 'debezium' and message_id in (select message_id from bronze.raw_debezium "
        "where source_uri like 'kafka:PostgreSQL_server.%') order by control_type"
    ).collect()
    assert [tuple(e) for e in events] == [
        ("logical_message", "foo", "Ymfy"),
        ("logical_message", "foo", "Ymfy"),
        ("tombstone", None, None),
    ]


def test_the_reference_tables_are_in_the_column_registry(spark, references) -> None:
    rows = spark.sql(
        "select column_name, ordinal, source_type, spark_type, is_primary_key from silver.cdc_table_columns "
        "where table_id = 'postgres.public.customers' order by ordinal"
    ).collect()
    assert [tuple(r) for r in rows] == [
        ("id", 1, "int32", "int", True),
        ("first_name", 2, "string", "string", False),
        ("last_name", 3, "string", "string", False),
        ("email", 4, "string", "string", False),
    ]
