"""Generated Canal traffic (multi-row messages, key changes, partial NOBLOB images, an ALTER,
a TRUNCATE, a table without a key, redeliveries) landed in two runs, the second with a late
partition: gold equals the generator's live rows."""

from __future__ import annotations

from collections import Counter

import pytest

from cdc_tools.generators.canal_traffic import default_tables
from tests.helpers.tables import live_rows, outcomes, quarantine_reasons

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(generated_traffic):
    """Landed in two runs, each followed by a build (tests/helpers/generated_traffic.py)."""
    return generated_traffic.others["canal"]


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    for table in default_tables("genshop")[:2]:
        live = live_rows(spark, table.table_id, table.key)
        assert live == traffic.expected_current[table.table_id], table.table_id


def test_ddl_is_logged_and_only_the_table_without_a_key_is_quarantined(spark, traffic) -> None:
    logged = [
        r.ddl_operation
        for r in spark.sql(
            "select ddl_operation from silver.cdc_schema_changes where source_format = 'canal' "
            "and table_id like 'genshop.%' order by sequence"
        ).collect()
    ]
    assert logged == ["CREATE", "ALTER", "TRUNCATE", "RENAME"]
    counts = Counter(outcomes(spark, "canal", "%canal-generated%"))
    assert "pending" not in counts
    assert counts["duplicate"] > 0 and counts["control"] == 3 and counts["change"] > 0
    reasons = quarantine_reasons(spark, "canal", "%canal-generated%")
    assert reasons and all("genshop.audit_log" in r and "pkNames is empty" in r for r in reasons)
