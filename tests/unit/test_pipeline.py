"""The pipeline's pieces that need no Spark: its kill points, the line each cycle prints and what
the line's seconds cover."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cdc_cli import build_parser
from cdc_pipeline import Cycle, KillPoint, Pipeline, PipelineError


def test_a_cycle_that_built_says_what_its_build_decided_in_one_line() -> None:
    cycle = Cycle(3, landed=1204, built=True, seconds=4.26, lag_seconds=6.05)
    cycle.outcomes = {"change": 1180, "duplicate": 12, "quarantined": 2, "pending": 10}
    assert cycle.line() == (
        "cycle 3: landed 1,204; applied 1,180, duplicates 12, quarantined 2, pending 10; 4.3 s; lag 6.0 s"
    )
    cycle.outcomes["control"] = 5
    assert cycle.line().endswith("pending 10, control 5; 4.3 s; lag 6.0 s")


def test_a_cycle_without_a_build_says_why() -> None:
    assert Cycle(4, seconds=0.12).line() == "cycle 4: landed 0; no build (nothing new); 0.1 s; lag 0.0 s"
    waiting = Cycle(
        5, landed=7, seconds=0.5, lag_seconds=0.5, note="waiting: `dbt build` (pid 9) is building"
    )
    assert waiting.line() == (
        "cycle 5: landed 7; no build; 0.5 s; lag 0.5 s; waiting: `dbt build` (pid 9) is building"
    )


@pytest.mark.parametrize("spec", ["model", "model:0", "landing:1", "built:x"])
def test_a_kill_point_is_a_known_point_and_a_count(spec: str) -> None:
    with pytest.raises(PipelineError, match="CDC_PIPELINE_KILL_AT"):
        KillPoint(spec)
    assert KillPoint("model:3").point == "model"
    KillPoint(None).reached("model")  # no kill point: nothing happens


def test_the_pipeline_runs_once_or_continuously_and_kafka_topics_name_their_format() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["pipeline", "--continuous", "--kafka", "127.0.0.1:9092", "--topic", "debezium:pg.public.items"]
    )
    assert args.continuous and args.topic == [("debezium", "pg.public.items")]
    for wrong in (
        ["pipeline"],
        ["pipeline", "--once", "--continuous"],
        ["pipeline", "--once", "--topic", "x"],
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(wrong)


class StepsTimed(Pipeline):
    """A pipeline whose steps take known times (no Spark): landing nothing, a build, the lag's
    queries of bronze."""

    def __init__(self) -> None:
        super().__init__(None, Path("."), None, None, [], None)

    def land(self) -> int:
        return 0

    def build(self, cycle: Cycle) -> bool:
        time.sleep(0.05)
        cycle.built = True
        return True

    def lag_seconds(self, now: float) -> float:
        time.sleep(0.5)  # at 1M stored, the queries of six bronze tables took about a second
        return 0.0


def test_a_cycles_seconds_take_in_its_lag_so_that_its_line_less_them_is_when_it_started() -> None:
    pipeline = StepsTimed()
    started = time.monotonic()
    cycle = pipeline.cycle(1)
    assert cycle.built and cycle.seconds >= 0.55
    # Before, the line's seconds ended before the lag's queries: 0.5 s short. (The margin is for
    # a loaded machine.)
    assert time.monotonic() - started - cycle.seconds < 0.25
