"""Every dbt-spark materialization, run twice through the spark_embedded
adapter on Iceberg tables behind the session catalog: table, view, SQL and
Python incremental (merge, append), Python table, snapshot. Stock dbt-spark
takes these Iceberg tables for Hive tables and fails the second snapshot run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "materializations"
SCHEMA = "silver_materializations_check"  # dbt's default naming: <target schema>_<custom schema>


@pytest.fixture(scope="module")
def build(dbt, tmp_path_factory):
    target_path = tmp_path_factory.mktemp("materializations-target")

    def run(*extra: str):
        return dbt("build", "--project-dir", str(PROJECT), "--target-path", str(target_path), *extra)

    return run


def rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.table(f"{SCHEMA}.{table}").collect())


def test_each_materialization_builds_twice_and_a_change_flows_through(spark, build) -> None:
    build()
    first = {
        t: rows(spark, t) for t in ("numbers", "numbers_merged", "numbers_python", "numbers_python_merged")
    }
    assert first["numbers"] == [(i, 2 * i) for i in range(5)]
    assert first["numbers_python"] == [(i, 2 * i, 3 * i) for i in range(5)]
    assert spark.table(f"{SCHEMA}.numbers_snapshot").count() == 5

    build()  # nothing changed: same results, appended model appended again
    for table, expected in first.items():
        assert rows(spark, table) == expected, table
    assert spark.table(f"{SCHEMA}.numbers_appended").count() == 10
    assert spark.table(f"{SCHEMA}.numbers_snapshot").count() == 5

    build("--vars", "{factor: 10, extra_column: true}")  # every value changes, a column is added
    assert rows(spark, "numbers_merged") == [(i, 10 * i) for i in range(5)]
    assert rows(spark, "numbers_python_merged") == [(i, 10 * i) for i in range(5)]
    assert rows(spark, "numbers_view") == [(i, 10 * i, "new") for i in range(5)]
    snapshot = spark.sql(
        f"select id, doubled, dbt_valid_to is null as current from {SCHEMA}.numbers_snapshot"
    )
    # id 0 did not change (0 * 2 == 0 * 10); ids 1-4 got a closed and a new version.
    assert snapshot.count() == 9
    assert snapshot.where("current").count() == 5


def test_tables_are_iceberg(spark, build) -> None:
    for table in ("numbers", "numbers_merged", "numbers_python", "numbers_python_merged", "numbers_snapshot"):
        assert spark.sql(f"select * from {SCHEMA}.{table}.snapshots").count() >= 1, table
