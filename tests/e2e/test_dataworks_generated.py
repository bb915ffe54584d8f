"""Generated DataWorks traffic (three tables, both update modes, heartbeats,
transaction markers, an ALTER, a TRUNCATE, redeliveries) landed in two runs,
the second with a late partition: gold equals the generator's live rows."""

from __future__ import annotations

from collections import Counter

import pytest

from cdc_tools.generators.dataworks_traffic import default_tables, generate
from tests.helpers.tables import live_rows, outcomes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(spark, land, dbt, tmp_path_factory):
    out = tmp_path_factory.mktemp("dataworks-generated")
    generated = generate(changes=200, seed=5)
    first, second, late = generated.write(out)
    assert land("--format", "dataworks", "--container", "jsonl", first, second).exit_code == 0
    dbt("build")
    assert land("--format", "dataworks", "--container", "jsonl", late).exit_code == 0
    dbt("build")
    return generated


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
