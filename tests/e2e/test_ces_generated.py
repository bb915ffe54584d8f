"""Generated CES traffic (several tables, composite keys, NULLs, split
values over 256 KB, redeliveries, round-robin partitions) delivered in two
landing runs: gold.cdc_current equals the generator's expected live rows."""

from __future__ import annotations

import pytest

from cdc_tools.generators.ces_traffic import generate

pytestmark = pytest.mark.spark


def current_rows(spark, table) -> dict[str, dict]:
    rows = spark.sql(
        f"select primary_key, row_data from gold.cdc_current where table_id = '{table.table_id}'"
    ).collect()
    return {",".join(f"{c}={r.primary_key[c]}" for c in table.key): dict(r.row_data) for r in rows}


def test_generated_traffic_ends_in_the_expected_current_rows(spark, land, dbt, tmp_path) -> None:
    traffic = generate(changes=150, seed=11, partitions=3, db="gen11", big_every=30)
    assert traffic.split_events >= 2 and traffic.redeliveries >= 1
    paths = traffic.write(tmp_path / "traffic")
    assert land("--format", "ces", "--container", "jsonl", *paths[:2]).exit_code == 0
    dbt("build")
    assert land("--format", "ces", "--container", "jsonl", paths[2]).exit_code == 0
    dbt("build")

    for table in traffic.tables:
        assert current_rows(spark, table) == traffic.expected_current[table.table_id], table.table_id
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
