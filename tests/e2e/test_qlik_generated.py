"""Generated Qlik Replicate traffic (three tables, REFRESH then CDC, a table version change, LOBs
left out by columnMask, a key change, bare data messages, redeliveries) landed in two runs, the
second with the partition that holds the first metadata message: gold equals the generator's
live rows, and nothing stays pending."""

from __future__ import annotations

import pytest

from cdc_tools.generators.qlik_traffic import generate

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def traffic(spark, land, dbt, tmp_path_factory):
    out = tmp_path_factory.mktemp("qlik-generated")
    generated = generate(changes=250, seed=5)
    *early, late = generated.write(out)
    assert land("--format", "qlik", "--container", "jsonl", *early).exit_code == 0
    dbt("build")
    pending = spark.sql(
        "select count(*) from silver.cdc_message_outcomes o left semi join (select message_id from "
        "bronze.raw_qlik where source_uri like '%qlik-generated%') b on o.message_id = b.message_id "
        "where o.outcome = 'pending'"
    ).first()[0]
    assert land("--format", "qlik", "--container", "jsonl", late).exit_code == 0
    dbt("build")
    return generated, pending


def test_gold_has_exactly_the_expected_live_rows(spark, traffic) -> None:
    generated, _ = traffic
    for version in generated.tables.values():
        rows = spark.sql(
            f"select primary_key, row_data from gold.cdc_current where table_id = '{version.table_id}'"
        ).collect()
        live = {",".join(f"{c}={r.primary_key[c]}" for c in version.key): r.row_data for r in rows}
        assert live == generated.expected_current[version.table_id], version.table_id


def test_data_waits_for_its_metadata_then_nothing_is_left_pending(spark, traffic) -> None:
    _, pending_after_first_run = traffic
    assert pending_after_first_run > 0
    outcomes = dict(
        spark.sql(
            "select outcome, count(*) from silver.cdc_message_outcomes o left semi join "
            "(select message_id from bronze.raw_qlik where source_uri like '%qlik-generated%') b "
            "on o.message_id = b.message_id group by outcome"
        ).collect()
    )
    assert "pending" not in outcomes and "quarantined" not in outcomes
    assert outcomes["duplicate"] > 0 and outcomes["control"] >= 4


def test_table_versions_are_logged(spark, traffic) -> None:
    versions = spark.sql(
        "select sequence from silver.cdc_schema_changes where table_id = 'sales.orders' order by sequence"
    ).collect()
    assert [v.sequence for v in versions] == ["0000000001", "0000000002"]
