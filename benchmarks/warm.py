"""The warm path of benchmarks/pipeline.py: `python -m python_ingest pipeline --continuous`
(docs/pipeline.md) timed by its own cycle lines.

- warm_phases: on the lakehouse the cold phases built, a pipeline starts (its first cycle
  builds with nothing new), idles a cycle, then the warm +1 % files appear in its inbox while it
  waits for its next cycle, and are timed from their appearance until the cycle that built them
  printed its line.
- load_run: a continuous load in a lakehouse of its own: a feeder appends the producers'
  generated messages to the files of an inbox at a steady rate for some minutes while a pipeline
  runs; each message's lag is the time from its write to the end of the cycle that landed and
  built it, reported as percentiles per minute of writing.
"""

from __future__ import annotations

import math
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

CYCLE = re.compile(
    r"^cycle (\d+): landed ([\d,]+); (?:applied ([\d,]+), duplicates ([\d,]+), quarantined ([\d,]+), "
    r"pending ([\d,]+)(?:, control ([\d,]+))?|no build[^;]*); ([\d.]+) s; lag ([\d.]+) s"
)


class CycleLine:
    """One cycle's line, with the moment (time.time) it was read."""

    def __init__(self, found: re.Match, at: float) -> None:
        self.number = int(found[1])
        self.landed = int(found[2].replace(",", ""))
        self.built = found[3] is not None
        self.applied = int(found[3].replace(",", "")) if self.built else 0
        self.pending = int(found[6].replace(",", "")) if self.built else 0
        self.seconds = float(found[8])
        self.lag = float(found[9])
        self.at = at

    @property
    def started(self) -> float:
        return self.at - self.seconds


class PipelineProcess:
    """A `pipeline --continuous` process; its cycle lines read as they come, each timed."""

    def __init__(
        self,
        python: Path,
        root: Path,
        sources: list[str],
        env: dict[str, str],
        log: Path,
        run_results: Path | None = None,
        interval: float = 1.0,
    ) -> None:
        command = [
            str(python),
            "-m",
            "python_ingest",
            "pipeline",
            "--continuous",
            "--interval",
            f"{interval:g}",
            *sources,
        ]
        self.log = log.open("a", encoding="utf-8")
        self.log.write(f"$ {' '.join(command)}\n")
        self.started = time.time()
        self.process = subprocess.Popen(
            command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.cycles: list[CycleLine] = []
        # dbt's run_results.json of the build a cycle ran, kept beside it as run_results-cycle-N.json
        # before the next cycle's build overwrites it (None: not kept).
        self.run_results = run_results
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.log.write(line)
            self.log.flush()
            if found := CYCLE.match(line):
                cycle = CycleLine(found, time.time())
                if cycle.built and self.run_results is not None and self.run_results.is_file():
                    shutil.copyfile(self.run_results, cycle_results(self.run_results, cycle.number))
                self.cycles.append(cycle)

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float = 3600) -> CycleLine:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"pipeline: no {what} (exit {self.process.poll()}); see {self.log.name}")
            time.sleep(0.1)
        return self.cycles[-1]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=600)
        self._reader.join(timeout=10)
        self.log.close()
        if code != 0:
            raise SystemExit(f"pipeline --continuous failed ({code}); see {self.log.name}")


def move_in(files: list[Path], source: Path, inbox: Path) -> None:
    """Move `files` (under `source`) into `inbox`, under a `warm/` folder beside their place."""
    for path in files:
        relative = path.relative_to(source)
        target = inbox / relative.parent / "warm" / relative.name
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)


def cycle_results(run_results: Path, number: int) -> Path:
    """Where PipelineProcess keeps the run_results.json (`run_results`) of cycle `number`'s build."""
    return run_results.with_name(f"run_results-cycle-{number}.json")


def increment_cycles(cycles: list[CycleLine]) -> list[CycleLine] | None:
    """Of the cycles after files appeared: those from the first that landed some of them to the
    first build at or after the last that did (a cycle whose build waited for another's lands
    and leaves the build to the next), once a cycle after that last one found nothing more to
    land; None until then."""
    landing = [number for number, cycle in enumerate(cycles) if cycle.landed]
    if not landing or not any(cycle.landed == 0 for cycle in cycles[landing[-1] + 1 :]):
        return None
    built = [number for number in range(landing[-1], len(cycles)) if cycles[number].built]
    return cycles[landing[0] : built[0] + 1] if built else None


# The warm phases' cycle interval: the +1 % files move in just after a cycle's line, while the
# pipeline waits for its next cycle. At 1M a cycle with nothing new took about a second with its
# lag queries, so with `--interval 1` the next cycle began as the files moved: it listed the
# first sources before the move and the others after, and landed the +1 % over two cycles
# (both runs of 2026-11-29, docs/benchmarks.md).
WARM_INTERVAL = 5.0


def warm_phases(
    python: Path,
    root: Path,
    sources: list[str],
    inbox: Path,
    warm: Path,
    files: list[Path],
    env,
    log: Path,
    run_results: Path | None = None,
) -> list[tuple[str, float, CycleLine, int]]:
    """(phase, seconds, its cycle, messages it landed) of the warm path: a pipeline over
    `sources` (the landed +1 % files in `inbox`), its first cycle (a build with nothing new), an
    idle cycle, then the `files` under `warm` moved into `inbox` while the pipeline waits for its
    next cycle (WARM_INTERVAL), and timed until the cycle that landed the last of them and built
    it. Should the increment still land over several cycles, "the cycle itself" is the sum of
    their seconds, and a line says so. The build of each cycle leaves its dbt run_results.json
    beside `run_results` (cycle_results)."""
    pipeline = PipelineProcess(python, root, sources, env, log, run_results, interval=WARM_INTERVAL)
    phases = []
    try:
        first = pipeline.wait_for("first cycle", lambda: len(pipeline.cycles) >= 1)
        phases.append(("pipeline start to its first cycle's line", first.at - pipeline.started, first, 0))
        phases.append(("warm build, nothing new (first cycle)", first.seconds, first, 0))
        idle = pipeline.wait_for("idle cycle", lambda: len(pipeline.cycles) >= 2)
        phases.append(("warm cycle, nothing new", idle.seconds, idle, 0))
        count = len(pipeline.cycles)
        moved = time.time()
        move_in(files, warm, inbox)
        settled = lambda: increment_cycles(pipeline.cycles[count:]) is not None  # noqa: E731
        pipeline.wait_for("cycles with the +1 %", settled)
        cycles = increment_cycles(pipeline.cycles[count:]) or []
        first, last = cycles[0], cycles[-1]
        spent = sum(c.seconds for c in cycles)
        landed = sum(c.landed for c in cycles)
        if len(cycles) > 1 or first.started < moved:
            print(f"   {increment_note(cycles, moved)}", flush=True)
        phases.append(("warm cycle (+1 %), files appear to line", last.at - moved, last, landed))
        phases.append(("warm cycle (+1 %), the cycle itself", spent, first, landed))
    finally:
        pipeline.stop()
    return phases


def increment_note(cycles: list[CycleLine], moved: float) -> str:
    """What the timing of a warm +1 % that did not land in one cycle begun after the move
    (`moved`, time.time) covers."""
    started = cycles[0].started - moved
    return (
        f"the +1 % landed over {len(cycles)} cycle(s) ({', '.join(f'{c.landed:,}' for c in cycles)}), "
        f"the first of them started {abs(started):.1f} s {'after' if started >= 0 else 'before'} "
        "the files moved in; the cycle itself is their sum"
    )


# -- continuous load ----------------------------------------------------------------------------
class Feeder:
    """Appends the lines of `pool`'s files to the same files under `inbox`, `rate` lines a
    second in all (spread over the files in turn, each file's lines in their order), for
    `seconds`; records (time, lines) of each write."""

    def __init__(self, pool: Path, inbox: Path, rate: int, seconds: float) -> None:
        self.files = []
        for path in sorted(p for p in pool.rglob("*") if p.is_file() and not p.name.startswith("_")):
            lines = path.read_bytes().splitlines(keepends=True)
            target = inbox / path.relative_to(pool)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.files.append([target, lines, 0])
        self.rate, self.seconds = rate, seconds
        self.writes: list[tuple[float, int]] = []
        self.thread = threading.Thread(target=self._feed, daemon=True)

    @property
    def total(self) -> int:
        return sum(len(f[1]) for f in self.files)

    def _feed(self) -> None:
        started = time.time()
        tick = 0.25
        step = 0
        while time.time() - started < self.seconds:
            due = round(self.rate * min(time.time() - started + tick, self.seconds)) - sum(
                n for _, n in self.writes
            )
            written = 0
            while written < due:
                left = [f for f in self.files if f[2] < len(f[1])]
                if not left:
                    break
                entry = left[step % len(left)]
                step += 1
                take = min(max(1, due // max(len(left), 1)), due - written, len(entry[1]) - entry[2])
                with entry[0].open("ab") as handle:
                    handle.write(b"".join(entry[1][entry[2] : entry[2] + take]))
                entry[2] += take
                written += take
            if written:
                self.writes.append((time.time(), written))
            time.sleep(max(0.0, tick - (time.time() - started) % tick))


def percentile(values: list[tuple[float, int]], share: float) -> float:
    """The `share` percentile of weighted values [(value, weight)]."""
    ordered = sorted(values)
    total = sum(w for _, w in ordered)
    running = 0
    for value, weight in ordered:
        running += weight
        if running >= share * total:
            return value
    return math.nan


def load_run(
    python: Path,
    root: Path,
    pool: Path,
    sources: Callable[[Path], list[str]],
    env,
    log: Path,
    rate: int,
    minutes: float,
) -> dict:
    """The continuous-load run: a pipeline over an inbox the Feeder fills at `rate` messages a
    second for `minutes`; then waits until a cycle lands nothing and has nothing pending. The
    lag of each write: from the write to the end of the first cycle whose landing started after
    it (a message pending in that cycle is counted then: its lag is understated by its wait)."""
    inbox = pool.parent / "load-inbox"
    shutil.rmtree(inbox, ignore_errors=True)
    feeder = Feeder(pool, inbox, rate, minutes * 60)
    for path in [f[0] for f in feeder.files]:
        path.touch()
    pipeline = PipelineProcess(python, root, sources(inbox), env, log)
    try:
        pipeline.wait_for("first cycle", lambda: len(pipeline.cycles) >= 1)
        feeding = time.time()
        feeder.thread.start()
        feeder.thread.join()
        written = sum(n for _, n in feeder.writes)
        count = len(pipeline.cycles)
        pipeline.wait_for(
            "cycle that lands nothing after the load",
            lambda: any(not c.landed and not c.pending for c in pipeline.cycles[count + 1 :]),
        )
    finally:
        pipeline.stop()
    cycles = pipeline.cycles
    lags: list[tuple[float, float, int]] = []  # (write time, lag, lines)
    for at, lines in feeder.writes:
        done = next((c for c in cycles if c.started >= at), None)
        if done is not None:
            lags.append((at, done.at - at, lines))
    per_minute = []
    for minute in range(math.ceil(minutes)):
        window = [(lag, n) for at, lag, n in lags if minute * 60 <= at - feeding < (minute + 1) * 60]
        if window:
            per_minute.append(
                {
                    "minute": minute + 1,
                    "messages": sum(n for _, n in window),
                    "p50": percentile(window, 0.5),
                    "p95": percentile(window, 0.95),
                    "max": max(lag for lag, _ in window),
                }
            )
    busy = [c for c in cycles if c.started >= feeding and c.built]
    everything = [(lag, n) for _, lag, n in lags]
    return {
        "rate": rate,
        "minutes": minutes,
        "written": written,
        "available": feeder.total,
        "cycles": len(busy),
        "cycle_seconds_p50": percentile([(c.seconds, 1) for c in busy], 0.5) if busy else math.nan,
        "cycle_seconds_max": max((c.seconds for c in busy), default=math.nan),
        "messages_per_cycle_p50": percentile([(c.landed, 1) for c in busy], 0.5) if busy else math.nan,
        "lag_p50": percentile(everything, 0.5),
        "lag_p95": percentile(everything, 0.95),
        "lag_max": max((lag for lag, _ in everything), default=math.nan),
        "per_minute": per_minute,
    }
