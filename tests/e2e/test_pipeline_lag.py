"""The continuous pipeline's lag (cdc_pipeline, docs/pipeline.md) on the shared session: a message
is waiting for gold when its bronze file was committed after the last build started, whatever its
`ingested_at` says. A `land` that began before a build and committed during it wrote rows landed
before the build's start that the build never read.

The tables here stand in for bronze (Pipeline.bronze_tables), in a schema of this file's own, so
that the shared lakehouse's bronze, which other files check, is left as it is.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cdc_pipeline import Pipeline

SCHEMA = "lag_probe"
OLD = datetime(2024, 1, 1)  # committed before the build below started
LANDED_BEFORE_THE_BUILD = datetime(2025, 6, 1)  # ingested before it, committed after it started


class ProbePipeline(Pipeline):
    """The pipeline's lag, with `tables` as its bronze."""

    def __init__(self, spark, home: Path, tables: list[str]) -> None:
        super().__init__(spark, home, None, None, [], None)
        self.tables = tables

    def bronze_tables(self) -> list[str]:
        return self.tables


@pytest.fixture
def probe(spark):
    spark.sql(f"create database if not exists {SCHEMA}")
    made: list[str] = []

    def table(name: str, properties: str = "") -> str:
        qualified = f"{SCHEMA}.{name}"
        spark.sql(
            f"create or replace table {qualified} (message_id string, ingested_at timestamp) "
            f"using iceberg tblproperties ('format-version' = '2'{properties})"
        )
        made.append(qualified)
        return qualified

    yield table
    for name in made:
        spark.sql(f"drop table if exists {name} purge")
    spark.sql(f"drop schema {SCHEMA}")  # empty now: the shared lakehouse is left as it was


def land(spark, table: str, message_id: str, ingested_at: datetime) -> None:
    spark.sql(f"insert into {table} values ('{message_id}', timestamp'{ingested_at:%Y-%m-%d %H:%M:%S}')")


def age(moment: datetime, now: float) -> float:
    return now - moment.replace(tzinfo=UTC).timestamp()


def test_a_land_committed_after_the_build_started_counts_in_the_lag_from_when_it_landed(
    spark, lakehouse_dir, probe
) -> None:
    table = probe("landed")
    pipeline = ProbePipeline(spark, lakehouse_dir, [table])
    land(spark, table, "old", OLD)
    # Before the first build, everything landed waits.
    now = time.time()
    assert pipeline.lag_seconds(now) == pytest.approx(age(OLD, now), abs=1)

    pipeline.built_from = pipeline.bronze_positions()  # a build starts: it reads what is there
    assert pipeline.lag_seconds(time.time()) == 0.0
    assert pipeline.bronze_unbuilt() == {}
    land(spark, table, "late", LANDED_BEFORE_THE_BUILD)  # a land that began long before commits now
    now = time.time()
    # Before, the lag kept only rows whose ingested_at was after the build's start: 0 here.
    assert pipeline.lag_seconds(now) == pytest.approx(age(LANDED_BEFORE_THE_BUILD, now), abs=1)
    assert list(pipeline.bronze_unbuilt()) == [table]  # and the next cycle builds

    pipeline.built_from = pipeline.bronze_positions()  # the next build reads it
    assert pipeline.lag_seconds(time.time()) == 0.0


def test_files_written_without_column_statistics_give_the_lag_from_their_rows(
    spark, lakehouse_dir, probe
) -> None:
    table = probe("without_statistics", ", 'write.metadata.metrics.default' = 'none'")
    pipeline = ProbePipeline(spark, lakehouse_dir, [table])
    land(spark, table, "old", OLD)
    after = pipeline.bronze_positions()[table]
    land(spark, table, "late", LANDED_BEFORE_THE_BUILD)
    [bound] = spark.sql(f"select min(readable_metrics.ingested_at.lower_bound) from {table}.entries").first()
    assert bound is None  # no statistics to read it from
    assert pipeline.oldest_landed_after(table, after) == LANDED_BEFORE_THE_BUILD
    assert pipeline.oldest_landed_after(table, 0) == OLD
    assert pipeline.oldest_landed_after(table, pipeline.bronze_positions()[table]) is None
