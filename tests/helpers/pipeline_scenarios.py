"""Scenarios of two runs on the test process's lakehouse, with one `dbt build` after each run
for all of them at once: each producer's pipeline scenario (tests/e2e/test_<producer>_pipeline.py)
and every producer's generated traffic (tests/helpers/generated_traffic.py).

A scenario is a generator, `scenario(spark, work)`: it writes the files of its first run and
yields what to land (`Land` items), then reads what the first build left and yields the second
run's, and returns what its tests check once the second build is done (a scenario of one run
returns after its first yield). `run_scenarios` lands the first run of every scenario, builds
once, lands every second run, builds once: two builds where each file had two of its own.
tests/conftest.py (`SHARED_WORK`) runs the files that check them in one test process, where
the session fixture `shared_runs` does this once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The files whose scenarios share the builds, by producer (tests/e2e/test_<producer>_pipeline.py).
PIPELINE_PRODUCERS = ("canal", "ces", "dataworks", "debezium", "goldengate", "qlik")


@dataclass(frozen=True)
class Land:
    """One `land --format FMT --container CONTAINER PATH...` of a scenario's run."""

    fmt: str
    container: str
    paths: tuple[Path, ...]


Scenario = Generator[list[Land], None, Any]


def run_scenarios(
    scenarios: dict[str, Callable[[Path], Scenario]],
    land: Callable[..., Any],
    dbt: Callable[..., Any],
    workdir: Callable[[str], Path],
) -> dict[str, Any]:
    """Run every scenario's runs side by side (each in `workdir(name)`); each one's result."""
    running: dict[str, Scenario] = {name: make(workdir(name)) for name, make in scenarios.items()}
    results: dict[str, Any] = {}
    # Each scenario is advanced three times: to its first run, to its second, to its end. One
    # that ends sooner has fewer runs; one that yields a third time has too many.
    for run in ("first", "second", "end"):
        for name, scenario in list(running.items()):
            try:
                landings = next(scenario)
            except StopIteration as done:
                results[name] = done.value
                del running[name]
                continue
            assert run != "end", f"the {name} scenario has more than two runs"
            for landing in landings:
                result = land("--format", landing.fmt, "--container", landing.container, *landing.paths)
                assert result.exit_code == 0, f"{name}: {result.output}"
        if run != "end":
            dbt("build")
    return results
