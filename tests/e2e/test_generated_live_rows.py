"""Deletes cannot be misread: on every producer's generated traffic (the shared landing of
tests/helpers/generated_traffic.py, truncates and re-inserts included), `is_active` marks exactly
the live version of each live key, and the macro cdc_as_of returns, at any time, the live version
of each key that was live then and never a deleted row (docs/contract.md, "Deletes, current and
live"), through `live_until`, which ends each live period and is null on every delete."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

import pytest

from cdc_tools.generators import generated_producers

pytestmark = pytest.mark.spark

PRODUCERS = generated_producers()  # the registry's producers that have a traffic generator


@pytest.fixture(scope="module")
def versions(spark, generated_traffic) -> list:
    return spark.sql(
        "select history.key_hash, history.version_number, history.valid_from, history.valid_to, "
        "history.is_current, history.is_deleted, history.is_active, history.live_until, history.operation, "
        "history.change_id, changes.source_format "
        "from gold.cdc_history as history "
        "left join silver.cdc_changes as changes on history.change_id = changes.change_id"
    ).collect()


def test_the_traffic_has_deletes_of_every_producer_truncates_and_re_inserts(versions) -> None:
    deleting = {v.source_format for v in versions if v.is_deleted}
    assert set(PRODUCERS) <= deleting, deleting
    assert any(v.operation == "truncate" for v in versions)
    by_key = defaultdict(list)
    for v in versions:
        by_key[v.key_hash].append(v)
    reinserted = [
        key
        for key, found in by_key.items()
        if any(
            a.is_deleted and not b.is_deleted and b.version_number > a.version_number
            for a in found
            for b in found
        )
    ]
    assert reinserted


def test_is_active_is_the_live_version_and_gold_current_holds_exactly_those(spark, versions) -> None:
    assert all(v.is_active == (v.is_current and not v.is_deleted) for v in versions)
    assert not [v for v in versions if v.is_active and v.is_deleted]
    active = {(v.key_hash, v.change_id) for v in versions if v.is_active}
    current = {tuple(r) for r in spark.sql("select key_hash, change_id from gold.cdc_current").collect()}
    assert active == current


def test_live_until_ends_each_live_period_and_no_deleted_version_has_one(versions) -> None:
    forever = datetime(9999, 12, 31)
    for v in versions:
        if v.is_deleted:
            assert v.live_until is None, v
        elif v.valid_to is None:
            assert v.live_until == forever, v
        else:
            assert v.live_until == v.valid_to - timedelta(microseconds=1), v


def test_as_of_returns_the_live_version_of_each_key_live_then_and_no_deleted_row(
    spark, dbt, versions
) -> None:
    compiled = (
        dbt(
            "compile",
            "--inline",
            "select key_hash, version_number, is_deleted from "
            "{{ cdc_as_of(ref('cdc_history'), \"timestamp'@'\") }} as live",
        )
        .result.results[0]
        .node.compiled_code
    )
    by_key = defaultdict(list)
    for v in versions:
        by_key[v.key_hash].append(v)
    # The times deletes happened, and just before and after them; the first and last times.
    deleted_at = sorted({v.valid_from for v in versions if v.is_deleted})
    times = sorted({*deleted_at[:: max(1, len(deleted_at) // 8)], min(v.valid_from for v in versions)})
    times += [t - timedelta(microseconds=1) for t in times[1:]] + [max(v.valid_from for v in versions)]
    for at in times:
        # Expected from the versions' order alone: a key's state at `at` is its last version
        # started by then; the key is live when that version is not a delete.
        expected = set()
        for key, found in by_key.items():
            started = [v for v in found if v.valid_from <= at]
            if started:
                last = max(started, key=lambda v: v.version_number)
                if not last.is_deleted:
                    expected.add((key, last.version_number))
        rows = spark.sql(compiled.replace("@", at.strftime("%Y-%m-%d %H:%M:%S.%f"))).collect()
        assert not [r for r in rows if r.is_deleted], at
        assert {(r.key_hash, r.version_number) for r in rows} == expected, at
