"""benchmarks/warm.py: which cycles of `pipeline --continuous` the warm +1 % is timed over, read
from cycle lines as the pipeline prints them (cdc_pipeline, `Cycle.line`)."""

from __future__ import annotations

from benchmarks.warm import CYCLE, CycleLine, increment_cycles


def cycles(*lines: str) -> list[CycleLine]:
    return [CycleLine(CYCLE.match(line), at=100.0 + number) for number, line in enumerate(lines)]


IDLE = "cycle {}: landed 0; no build (nothing new); 0.3 s; lag 0.0 s"


def test_one_cycle_that_lands_and_builds_is_the_increment_once_the_next_finds_nothing() -> None:
    landed = (
        "cycle 3: landed 7,882; applied 7,121, duplicates 358, quarantined 0, pending 0; 98.2 s; lag 0.0 s"
    )
    assert increment_cycles(cycles(landed)) is None  # more may come in the next cycle
    found = increment_cycles(cycles(landed, IDLE.format(4)))
    assert [c.number for c in found] == [3] and found[0].landed == 7882


def test_an_increment_landed_over_two_cycles_is_timed_over_both() -> None:
    # The benchmark run of 2026-11-29: one producer's share landed in the cycle after the others'.
    lines = (
        "cycle 3: landed 6,200; applied 5,527, duplicates 270, quarantined 0, pending 0, control 363; "
        "105.6 s; lag 0.0 s",
        "cycle 4: landed 1,682; applied 1,594, duplicates 88, quarantined 0, pending 0; 50.4 s; lag 0.0 s",
    )
    assert increment_cycles(cycles(*lines)) is None
    found = increment_cycles(cycles(*lines, IDLE.format(5)))
    assert [c.number for c in found] == [3, 4]
    assert sum(c.seconds for c in found) == 156.0 and sum(c.landed for c in found) == 7882


def test_nothing_landed_yet_is_not_the_increment_and_a_waiting_cycle_ends_at_the_next_build() -> None:
    assert increment_cycles(cycles(IDLE.format(3))) is None
    # A `dbt build` run by hand held the lakehouse: the cycle landed, and the next one built.
    held = "cycle 3: landed 10; no build; 0.4 s; lag 2.0 s; waiting: a dbt build holds the lakehouse"
    built = "cycle 4: landed 0; applied 10, duplicates 0, quarantined 0, pending 0; 20.5 s; lag 0.0 s"
    assert increment_cycles(cycles(held)) is None
    found = increment_cycles(cycles(held, built))
    assert [c.number for c in found] == [3, 4] and found[-1].built
