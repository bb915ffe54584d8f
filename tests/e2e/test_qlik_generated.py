"""Generated Qlik Replicate traffic (three tables, REFRESH then CDC, a table version change, LOBs
left out by columnMask, a key change, bare data messages, redeliveries) landed in two runs, the
second with the partition that holds the first metadata message: gold equals the generator's
live rows, and nothing stays pending."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers.tables import live_rows, outcomes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(generated_traffic):
    """Landed in two runs, each followed by a build (tests/helpers/generated_traffic.py), and how
    many of its messages the first build left pending."""
    return generated_traffic.qlik, generated_traffic.qlik_pending_after_first_build


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    generated, _ = traffic
    for version in generated.tables.values():
        live = live_rows(spark, version.table_id, version.key)
        assert live == generated.expected_current[version.table_id], version.table_id


def test_data_waits_for_its_metadata_then_nothing_is_left_pending(spark, traffic) -> None:
    _, pending_after_first_run = traffic
    assert pending_after_first_run > 0
    counts = Counter(outcomes(spark, "qlik", "%qlik-generated%"))
    assert "pending" not in counts and "quarantined" not in counts
    assert counts["duplicate"] > 0 and counts["control"] >= 4


def test_table_versions_are_logged(spark, traffic) -> None:
    versions = spark.sql(
        "select sequence from silver.cdc_schema_changes where table_id = 'sales.orders' order by sequence"
    ).collect()
    assert [v.sequence for v in versions] == ["0000000001", "0000000002"]
