"""Generated Debezium traffic (three connectors, kcat dumps with keys and
headers, S3-sink JSON lines without schemas) landed in two runs, the second
with a late partition, re-dumped records and malformed messages: gold equals
the generator's expected live rows, and every message is accounted for."""

from __future__ import annotations

import pytest

from cdc_tools.generators.debezium_traffic import default_feeds
from tests.helpers.generated_traffic import DEBEZIUM_BAD_MESSAGES
from tests.helpers.tables import live_rows, quarantine_reasons

pytestmark = pytest.mark.spark

# What each malformed message's quarantine reason says, in the order they were landed.
REASONS = [reason for _, reason in DEBEZIUM_BAD_MESSAGES]


@pytest.fixture(scope="module")
def traffic(generated_traffic):
    """Landed in two runs, each followed by a build, the second with the malformed messages of
    tests/helpers/generated_traffic.py's DEBEZIUM_BAD_MESSAGES."""
    return {"expected": generated_traffic.debezium.expected_current, "bad": generated_traffic.debezium_bad}


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    for feed in default_feeds("gendb"):
        table = feed.table
        live = live_rows(spark, table.table_id, table.key)
        assert live == traffic["expected"][table.table_id], table.table_id


def test_placeholders_never_reach_gold(spark, traffic) -> None:
    placeholders = spark.sql(
        "select count(*) from gold.cdc_history "
        "where exists(map_values(row_data), v -> v = '__debezium_unavailable_value')"
    ).first()[0]
    assert placeholders == 0


def test_truncate_and_key_changes_close_history(spark, traffic) -> None:
    truncated = spark.sql(
        "select count(*) from gold.cdc_history "
        "where table_id = 'gendb.public.items' and operation = 'truncate'"
    ).first()[0]
    assert truncated > 0
    # A key change is a delete of the old key (header __debezium.newkey) and a create of the
    # new one (__debezium.oldkey): the old key's version is closed, the new key's is live.
    halves = spark.sql(
        "select case when m.new_key_text is not null then 'old' else 'new' end as half, "
        "h.is_deleted, h.version_number from gold.cdc_history h "
        "join silver.int_debezium__changes i on h.change_id = i.change_id and not i.is_duplicate "
        "join silver.stg_debezium__messages m on i.message_id = m.message_id "
        "where m.new_key_text is not null or m.old_key_text is not null"
    ).collect()
    assert {r.half for r in halves} == {"old", "new"}
    assert all(r.is_deleted == (r.half == "old") for r in halves)
    assert all(r.version_number > 1 for r in halves if r.half == "old")


def test_every_message_has_one_outcome_and_bad_ones_a_reason(spark, traffic) -> None:
    bronze = spark.sql("select count(distinct message_id) from bronze.raw_debezium").first()[0]
    outcomes = spark.sql("select * from silver.cdc_message_outcomes where source_format = 'debezium'")
    assert outcomes.count() == bronze
    reasons = quarantine_reasons(spark, "debezium", traffic["bad"])
    assert len(reasons) == len(REASONS)
    for reason, fragment in zip(reasons, REASONS, strict=True):
        assert fragment in reason, reason
    counts = dict(spark.sql("select outcome, count(*) from silver.cdc_message_outcomes group by 1").collect())
    assert counts.get("duplicate", 0) > 0 and counts.get("control", 0) > 0


def test_schemaless_values_decode_with_the_declared_types(spark, traffic) -> None:
    [row] = spark.sql(
        "select row_data from gold.cdc_current where table_id = 'inventory.public.shipments' limit 1"
    ).collect()
    expected_rows = traffic["expected"]["inventory.public.shipments"]
    assert row.row_data in expected_rows.values()
    assert row.row_data["shipped_on"] is None or row.row_data["shipped_on"].count("-") == 2  # a date


def test_building_again_changes_nothing(spark, dbt, traffic) -> None:
    tables = ["silver.cdc_changes", "silver.cdc_message_outcomes", "gold.cdc_history"]
    before = {t: sorted(map(str, spark.table(t).collect())) for t in tables}
    dbt("build")
    assert {t: sorted(map(str, spark.table(t).collect())) for t in tables} == before
