"""The continuous pipeline (`python -m python_ingest pipeline`): land and build in one warm
process, killed with `kill -9` at three points of a cycle, then run on continuously while new
traffic arrives and stopped with SIGTERM; gold ends exactly as every producer's generated
traffic leaves its tables, and bronze holds every message once.

Real subprocesses on a lakehouse of their own: `pipeline --once` killed while landing (between
a chunk's Iceberg append and its checkpoint, landing's kill switch), in the middle of its build
(after a model committed) and after its build (before its line), each run resuming what the one
before left; then `pipeline --continuous`, which builds what the killed runs left, picks up a
producer whose files arrive while it runs, and finishes its cycle on SIGTERM with exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from cdc_pipeline import KILL_ENV as PIPELINE_KILL_ENV
from cdc_tools.generators import generated_producers, traffic_module
from python_ingest.containers import iter_messages
from python_ingest.landing import KILL_ENV, expand_paths
from tests.helpers.lakehouse_query import queries
from tests.helpers.processes import kill_group, run_in_group, start_in_group
from tests.helpers.services import stop_services

pytestmark = pytest.mark.services

CYCLE = re.compile(
    r"^cycle (\d+): landed ([\d,]+); (?:applied ([\d,]+), duplicates ([\d,]+), quarantined ([\d,]+), "
    r"pending ([\d,]+)(?:, control [\d,]+)?|no build[^;]*); ([\d.]+) s; lag ([\d.]+) s"
)


def write_traffic(root: Path) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """Every generated producer's traffic under `root/<producer>/`, in tables of its own: the
    `--source` values of each producer, and the live rows expected per table."""
    sources: dict[str, list[str]] = {}
    expected: dict[str, dict] = {}
    for name in generated_producers():
        module = traffic_module(name)
        # Declared names: the tables sent without schemas take their columns from the seeds.
        traffic = module.generate_named(40, 3, 2, f"pl{name[:3]}", keep_declared=True)
        traffic.write(root / name)
        expected.update(traffic.expected_current)
        sources[name] = [
            f"{name}:{container}:{root / name / sub if sub else root / name}"
            for container, sub in module.LANDINGS
        ]
    return sources, expected


def pipeline_command(*args: str, sources: list[str]) -> list[str]:
    command = [sys.executable, "-m", "python_ingest", "pipeline", *args, "--chunk-size", "25"]
    for source in sources:
        command += ["--source", source]
    return command


class Continuous:
    """A `pipeline --continuous` process, its lines read as they come."""

    def __init__(self, lakehouse: Path, sources: list[str]) -> None:
        env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
        env.pop(KILL_ENV, None)
        env.pop(PIPELINE_KILL_ENV, None)
        command = pipeline_command("--continuous", "--interval", "1", sources=sources)
        self.process = start_in_group(command, env)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def cycles(self) -> list[re.Match]:
        return [found for line in self.lines if (found := CYCLE.match(line))]

    def wait_for(self, what: str, condition, timeout: float = 400) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self._reader.join(timeout=5)
                raise AssertionError(
                    f"pipeline --continuous: no {what}; output:\n" + "\n".join(self.lines[-40:])
                )
            time.sleep(0.2)

    def stop(self) -> int:
        try:
            self.process.send_signal(signal.SIGTERM)
            return self.process.wait(timeout=400)
        finally:
            kill_group(self.process.pid)
            self._reader.join(timeout=5)


def live_rows(rows: list[dict], expected: dict[str, dict]) -> dict[str, dict]:
    """gold.cdc_current's rows of the expected tables, keyed as the generators key them:
    `column=value` pairs in the expected keys' column order, joined by `,`."""
    found: dict[str, dict] = {table: {} for table in expected}
    for row in rows:
        table = row["table_id"]
        if table not in expected:
            continue
        columns = [part.split("=", 1)[0] for part in next(iter(expected[table]), "").split(",")]
        key = ",".join(f"{c}={row['primary_key'][c]}" for c in columns)
        found[table][key] = row["row_data"]
    return found


def test_the_pipeline_survives_kill_9_at_three_points_and_stops_on_sigterm(tmp_path: Path) -> None:
    lakehouse = tmp_path / "lakehouse"
    sources, expected = write_traffic(tmp_path / "traffic")
    names = list(sources)
    first = [s for name in names[:-1] for s in sources[name]]
    # The last producer's files arrive while the continuous pipeline runs, in a folder it watches.
    late = names[-1]
    late_traffic = tmp_path / "traffic" / late
    inbox = tmp_path / "inbox" / late
    late_sources = [s.replace(str(late_traffic), str(inbox)) for s in sources[late]]
    for source in late_sources:
        Path(source.split(":", 2)[2]).mkdir(parents=True, exist_ok=True)
    try:
        for what, variable, point in (
            ("while landing", KILL_ENV, "after-append:2"),
            ("in the middle of the build", PIPELINE_KILL_ENV, "model:12"),
            ("after the build", PIPELINE_KILL_ENV, "built:1"),
        ):
            code, output, _ = run_in_group(
                pipeline_command("--once", sources=first),
                lakehouse,
                kill_at=point if variable == KILL_ENV else None,
                environment={PIPELINE_KILL_ENV: point if variable == PIPELINE_KILL_ENV else ""},
                timeout=600,
            )
            assert code == -signal.SIGKILL, f"killed {what}: {output[-3000:]}"
            assert "Traceback" not in output, output

        pipeline = Continuous(lakehouse, [*first, *late_sources])
        try:
            pipeline.wait_for("first cycle", lambda: len(pipeline.cycles()) >= 1)
            assert pipeline.cycles()[0][3] is not None, pipeline.lines  # it built what the kills left
            shutil.copytree(late_traffic, inbox, dirs_exist_ok=True)
            pipeline.wait_for(
                f"cycle that builds {late}'s messages",
                lambda: any(c[2] != "0" and c[3] is not None for c in pipeline.cycles()[1:]),
            )
        finally:
            code = pipeline.stop()
        print("\n".join(pipeline.lines))  # shown when the test fails
        assert code == 0, "\n".join(pipeline.lines)
        assert "Traceback" not in "\n".join(pipeline.lines)
        assert CYCLE.match(pipeline.lines[-1]), pipeline.lines[-1]  # the cycle SIGTERM came in finished

        found = queries(
            lakehouse,
            [
                "select table_id, primary_key, row_data from gold.cdc_current",
                *(f"select count(*) as landed from bronze.raw_{name}" for name in names),
            ],
        )
        assert live_rows(found[0], expected) == expected
        # Every record of every file landed once (a re-dumped record is a record of its own).
        for name, [counts] in zip(names, found[1:], strict=True):
            written = sum(
                1
                for source in [*sources[name]]
                for path in expand_paths([Path(source.split(":", 2)[2])], source.split(":")[1])
                for _ in iter_messages(source.split(":")[1], path)
            )
            assert counts["landed"] == written > 0, name
    finally:
        stop_services(lakehouse)
