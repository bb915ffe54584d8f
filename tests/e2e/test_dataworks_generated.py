"""Generated DataWorks traffic (three tables, both update modes, heartbeats,
transaction markers, an ALTER, a TRUNCATE, redeliveries) landed in two runs,
the second with a late partition: gold equals the generator's live rows."""

from __future__ import annotations

from collections import Counter

import pytest

from cdc_tools.generators.dataworks_traffic import default_tables
from tests.helpers.tables import live_rows, outcomes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(generated_traffic):
    """Landed in two runs, each followed by a build (tests/helpers/generated_traffic.py)."""
    return generated_traffic.dataworks


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    for table in default_tables():
        live = live_rows(spark, table.table_id, table.key)
        assert live == traffic.expected_current[table.table_id], table.table_id


def test_ddl_is_logged_and_nothing_is_left_pending(spark, traffic) -> None:
    logged = [
        (r.table_id, r.ddl_operation, r.ddl_text)
        for r in spark.sql(
            "select table_id, ddl_operation, ddl_text from silver.cdc_schema_changes "
            "where source_format = 'dataworks' order by sequence"
        ).collect()
    ]
    assert [entry for entry in logged if entry in traffic.expected_ddl] == list(traffic.expected_ddl)
    counts = Counter(outcomes(spark, "dataworks", "%dataworks-generated%"))
    assert "pending" not in counts and "quarantined" not in counts
    assert counts["duplicate"] > 0 and counts["control"] > 0
