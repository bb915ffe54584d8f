"""Every dbt-spark materialization, run twice through the spark_embedded
adapter on Iceberg tables behind the session catalog: table, view, SQL and
Python incremental (merge, append), Python table, snapshot; and the adapter's merge that
replaces groups of rows (`merge_replace_by`, `merge_replace_from`, which gold.cdc_history
uses). Stock dbt-spark takes these Iceberg tables for Hive tables and fails the second
snapshot run.
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
    tables = ("numbers", "numbers_merged", "numbers_python", "numbers_python_merged", "numbers_replaced")
    first = {t: rows(spark, t) for t in tables}
    assert first["numbers"] == [(i, 2 * i) for i in range(5)]
    assert first["numbers_replaced"] == [(g, v, "first") for g in range(3) for v in range(1, 4)]
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
    # Group 1 from version 2 on is replaced (version 2 updated, version 3 deleted), version 1 is
    # kept; groups 0 and 2, not written, are left alone; group 3 is new. No scratch table stays.
    assert rows(spark, "numbers_replaced") == [
        *[(0, v, "first") for v in range(1, 4)],
        (1, 1, "first"),
        (1, 2, "again"),
        *[(2, v, "first") for v in range(1, 4)],
        (3, 1, "new"),
    ]
    # By SQL, views included: spark.catalog.listTables fails where Spark runs without generated
    # code, as the suite's does (docs/testing.md, "Spark without generated code").
    tables = {row.tableName for row in spark.sql(f"show tables in {SCHEMA}").collect()}
    assert "numbers_replaced" in tables and "numbers_replaced__dbt_replacement" not in tables


def test_tables_are_iceberg(spark, build) -> None:
    for table in ("numbers", "numbers_merged", "numbers_python", "numbers_python_merged", "numbers_snapshot"):
        assert spark.sql(f"select * from {SCHEMA}.{table}.snapshots").count() >= 1, table


def test_a_schema_drops_with_its_tables_or_after_them(spark) -> None:
    """`drop schema` through the lakehouse's metastore service, as a user or dbt's `drop_schema`
    runs it: after its Iceberg tables were dropped, and with them (`cascade`)."""
    spark.range(1).createOrReplaceTempView("a_view_of_this_session")  # as dbt's builds leave them
    for schema, drop in (("dropped_after_its_tables", ""), ("dropped_with_its_tables", " cascade")):
        spark.sql(f"create schema {schema}")
        spark.sql(f"create table {schema}.numbers (n bigint) using iceberg")
        spark.sql(f"insert into {schema}.numbers values (1)")
        if not drop:
            spark.sql(f"drop table {schema}.numbers purge")
        spark.sql(f"drop schema {schema}{drop}")
        assert schema not in {row[0] for row in spark.sql("show schemas").collect()}
        spark.sql(f"create schema {schema}")  # the name is free again, and the schema empty
        # `show tables in` also lists the session's temporary views (dbt's `__dbt_tmp` views of
        # builds that ran in this engine before), which belong to no schema.
        tables = spark.sql(f"show tables in {schema}").where("not isTemporary").collect()
        assert tables == []
        spark.sql(f"drop schema {schema}")
    spark.catalog.dropTempView("a_view_of_this_session")
