"""Generated GoldenGate traffic (three tables: compressed and whole updates, key-only deletes,
primary-key updates, a truncate and a truncated row inserted again, an ALTER seen through the
schema topic, trail rollovers, redeliveries) landed in two runs, the second with a late partition:
gold equals the generator's live rows."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers.tables import outcomes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(generated_traffic):
    """Landed in two runs (the last partition late), each followed by a build
    (tests/helpers/generated_traffic.py: `generate_named` in the namespace `gen`)."""
    generated = generated_traffic.others["goldengate"]
    assert generated.key_updates and generated.compressed_updates and generated.truncates
    return generated


def live(spark, table_id: str, key_columns) -> dict:
    rows = spark.sql(
        f"select primary_key, row_data from gold.cdc_current where table_id = '{table_id}'"
    ).collect()
    found = {}
    for r in rows:
        columns = key_columns or sorted(r.primary_key)
        found[",".join(f"{c}={r.primary_key[c]}" for c in columns)] = r.row_data
    return found


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    for table in traffic.tables.values():
        assert live(spark, table.table_id, table.key) == traffic.expected_current[table.table_id], table.name


def test_schema_documents_are_logged_and_nothing_is_quarantined(spark, traffic) -> None:
    logged = spark.sql(
        "select table_id, ddl_text from silver.cdc_schema_changes "
        "where source_format = 'goldengate' and table_id like 'genpdb.%'"
    ).collect()
    assert len(logged) == 2 and any(r.ddl_text.endswith("LOYALTY_TIER") for r in logged)
    counts = Counter(outcomes(spark, "goldengate", "%goldengate-generated%"))
    assert "quarantined" not in counts and "pending" not in counts
    assert counts["duplicate"] == traffic.redeliveries and counts["control"] == len(traffic.schemas)
