"""Generated CES traffic (several tables, composite keys, NULLs, split
values over 256 KB, redeliveries, round-robin partitions) delivered in two
landing runs: gold.cdc_current equals the generator's expected live rows."""

from __future__ import annotations

import pytest

from tests.helpers.tables import live_rows

pytestmark = pytest.mark.spark


def test_generated_traffic_ends_in_the_expected_current_rows(spark, generated_traffic) -> None:
    # Landed in two runs, each followed by a build (tests/helpers/generated_traffic.py).
    traffic = generated_traffic.ces
    for table in traffic.tables:
        live = live_rows(spark, table.table_id, table.key)
        assert live == traffic.expected_current[table.table_id], table.table_id
    versions = spark.sql("select count(*) from gold.cdc_history where table_id like 'gen11.%'").first()[0]
    assert versions == traffic.changes
    outcomes = dict(
        spark.sql(
            "select outcome, count(*) from silver.cdc_message_outcomes o join bronze.raw_ces b "
            "using (message_id) where b.message_value like '%gen11%' group by outcome"
        ).collect()
    )
    assert outcomes.get("pending", 0) == 0 and outcomes.get("quarantined", 0) == 0
    assert outcomes["duplicate"] == traffic.redeliveries
