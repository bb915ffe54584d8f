"""benchmarks/machine_speed.py: the probe's line names what it timed, and each figure grows with its work."""

from __future__ import annotations

import re

from benchmarks import machine_speed


def test_the_probe_prints_the_best_rounds_cpu_seconds(capsys) -> None:
    assert machine_speed.main(["--additions", "20000", "--mebibytes", "4", "--rounds", "2"]) == 0
    line = capsys.readouterr().out.strip()
    found = re.fullmatch(
        r"machine speed: 20,000 additions in a Python loop took (\d+\.\d\d) CPU s, "
        r"the first touch of 4 MiB (\d+\.\d\d) s \(best of 2; lower is faster\)",
        line,
    )
    assert found, line


def test_a_longer_loop_takes_longer() -> None:
    assert machine_speed.loop_seconds(2_000_000) > machine_speed.loop_seconds(20_000)


def test_more_fresh_memory_takes_longer_to_touch() -> None:
    assert machine_speed.first_touch_seconds(64) > machine_speed.first_touch_seconds(1)
