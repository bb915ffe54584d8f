"""Benchmark the whole pipeline: generate N messages across the producers, land them, run
a full `dbt build`, then land 1 % more and run an incremental `dbt build`, then one more
`dbt build` with nothing new.

    .venv/bin/python benchmarks/pipeline.py --messages 10000 [--scale 10] [--workdir DIR] [--keep]

N is split evenly over the registry's producers that have a traffic generator (today CES,
DataWorks, Debezium and Qlik, a quarter each, calibrated from a small generated sample of
each: their messages per row change differ). Each producer's traffic
is generated once at N/producers × 1.01 messages; then every message file is cut in two: its first
100/101 go to `base/`, the rest to `more/` as new files. So the extra 1 % continues the same
streams (later commit positions, updates of existing keys and new keys, late redeliveries,
halves of update pairs and split events whose other part was in the base).

Every phase runs as a separate process, the way a user runs it, against a fresh lakehouse
(`$CDC_LAKEHOUSE_DIR` under the work directory), timed with time.perf_counter:

    generate           python -m python_ingest generate (one process per producer)
    spark start-up     benchmarks/bare_parse.py --noop: start Spark with the target's settings, select 1
    dbt start-up       dbt debug (dbt + Spark session, connection test)
    land               python -m python_ingest land --source ... (one process for every producer)
    bare Spark parse   benchmarks/bare_parse.py: from_json of every producer to the change shape
    dbt build (full)   dbt build --exclude-resource-type unit_test
    land (+1 %)        python -m python_ingest land of the new files
    dbt build (incr.)  dbt build --exclude-resource-type unit_test
    dbt build (none)   the same again, with nothing new landed: the fixed cost of a build at
                       this N (every node's start, commits, the data tests over whole tables)
    land --watch       in a lakehouse of its own: `land --watch` over an inbox of the base
                       files (timed from its start until all are committed), then the +1 %
                       files appear in the inbox, timed until committed (no Spark start)
    warm pipeline      `pipeline --continuous` on the built lakehouse (benchmarks/warm.py)
    warm engine        `dbt parse`, `dbt build` with nothing new and `land` of a small file,
                       each with a Spark of its own (with and without set-up's class archives,
                       docs/lakehouse.md "Class-data sharing") and on the lakehouse's warm
                       engine (the SQL endpoint's Spark, `lakehouse start`): engine_phases

--landing-only leaves out the dbt phases.

Unit tests are left out of both builds, as in production: they test the SQL against fixed
inputs, so they belong to development and CI (dbt's documentation says so), and they cost
the same at any N. Every data test runs.

Reports a markdown table (phase, seconds, messages/s) and the ratios full build ÷ bare parse,
incremental ÷ full, nothing-new ÷ full and (with --scale) 10× ÷ 1×, each also without start-up
(a phase's seconds minus its processes' start-up), in `WORKDIR/results.md` and
`WORKDIR/results.json`, with the machine in the header. Not a test: absolute times on a
shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
DBT = ROOT / ".venv" / "bin" / "dbt"
sys.path.insert(0, str(ROOT))
from benchmarks.warm import load_run, warm_phases  # noqa: E402
from cdc_tools.generators import generated_producers, land_sources  # noqa: E402

# The producers of the registry (dbt_project.yml, `cdc_producers`) that have a traffic generator.
PRODUCERS = generated_producers()
SEED = 11
INCREMENT = 0.01
CALIBRATION_CHANGES = 2000
# dbt build as in production: unit tests (fixed inputs, same result every run) belong to
# development and CI, as dbt's documentation recommends; every data test runs.
BUILD = [str(DBT), "build", "--exclude-resource-type", "unit_test"]
CES_LARGE_EVERY = 1000  # one CES change in 1,000 with LOB values split into segments


@dataclass
class Phase:
    name: str
    seconds: float
    messages: int | None = None  # messages the phase handled (for messages/s)
    processes: int = 1  # separate processes, each starting Python (and Spark, for Spark phases)
    spark: bool = True  # whether each process starts Spark
    detail: str = ""

    @property
    def rate(self) -> float | None:
        return self.messages / self.seconds if self.messages and self.seconds > 0 else None


@dataclass
class Run:
    target_messages: int
    base_messages: int = 0
    more_messages: int = 0
    warm_messages: int = 0  # the second +1 %, for the warm pipeline
    base_bytes: int = 0
    per_producer: dict[str, dict[str, int]] = field(default_factory=dict)
    phases: list[Phase] = field(default_factory=list)
    builds: dict[str, dict] = field(default_factory=dict)  # dbt build phase -> node_times

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)

    def seconds(self, name: str, without_startup: bool = False) -> float:
        phase = self.phase(name)
        if not without_startup or not phase.spark:
            return phase.seconds
        startup = self.phase("dbt start-up" if name.startswith("dbt build") else "spark start-up").seconds
        return max(phase.seconds - phase.processes * startup, 1e-9)


def run_process(args: list[str], env: dict[str, str], log: Path) -> tuple[float, str]:
    """Run one command from the repository root; its seconds and output (also appended to `log`)."""
    started = time.perf_counter()
    result = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    output = result.stdout + result.stderr
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(args)}\n{output}\n[{seconds:.1f}s, exit {result.returncode}]\n\n")
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(args)}\n{output[-3000:]}")
    return seconds, output


def message_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("_"))


def count_lines(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        with path.open("rb") as handle:
            total += sum(1 for line in handle if line.strip())
    return total


def generate_args(producer: str, changes: int, out: Path, ces_large_every: int) -> list[str]:
    """The `generate` command of one producer's traffic."""
    args = [str(PYTHON), "-m", "python_ingest", "generate", "--format", producer, "--changes", str(changes)]
    if producer == "ces":
        args += ["--large-every", str(ces_large_every)]
    return [*args, "--seed", str(SEED), str(out)]


def calibrate(workdir: Path, env: dict[str, str], log: Path, ces_large_every: int) -> dict[str, float]:
    """Messages per row change of each generator, from a small sample."""
    ratios = {}
    for producer in PRODUCERS:
        out = workdir / "calibration" / producer
        shutil.rmtree(out, ignore_errors=True)
        run_process(generate_args(producer, CALIBRATION_CHANGES, out, ces_large_every), env, log)
        ratios[producer] = count_lines(message_files(out)) / CALIBRATION_CHANGES
    shutil.rmtree(workdir / "calibration", ignore_errors=True)
    return ratios


def split_files(source: Path, base: Path, more: Path, increment: float) -> tuple[int, int]:
    """Cut every message file: its first 1/(1+increment) lines to `base`, the rest to `more` (a new
    file of the same relative path). Streams line by line. Returns (base lines, more lines)."""
    kept = moved = 0
    for path in message_files(source):
        with path.open("rb") as handle:
            lines = sum(1 for _ in handle)
        cut = round(lines / (1 + increment))
        relative = path.relative_to(source)
        (base / relative).parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as handle, (base / relative).open("wb") as head:
            tail = None
            for number, line in enumerate(handle):
                if number < cut:
                    head.write(line)
                    continue
                if tail is None:
                    (more / relative).parent.mkdir(parents=True, exist_ok=True)
                    tail = (more / relative).open("wb")
                tail.write(line)
            if tail is not None:
                tail.close()
        kept, moved = kept + cut, moved + lines - cut
    return kept, moved


def land_commands(root: Path) -> list[list[str]]:
    """One `land` process for all the producers' files (one Spark start), as a user lands."""
    return [[str(PYTHON), "-m", "python_ingest", "land", *land_sources(root)]]


COMMITTED = re.compile(r": committed ([\d,]+) message\(s\)")


class Watch:
    """`land --watch` over `inbox`, its progress lines counted as they come."""

    def __init__(self, inbox: Path, env: dict[str, str], log: Path) -> None:
        command = [str(PYTHON), "-m", "python_ingest", "land", "--watch", "--interval", "1"]
        self.log = log.open("a", encoding="utf-8")
        self.log.write(f"$ {' '.join(command)} {' '.join(land_sources(inbox))}\n")
        self.process = subprocess.Popen(
            [*command, *land_sources(inbox)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.committed = 0

    def until(self, total: int) -> None:
        """Read progress lines until `total` messages have been committed since the start."""
        while self.committed < total:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"land --watch ended ({self.process.wait()}); see {self.log.name}")
            self.log.write(line)
            if found := COMMITTED.search(line):
                self.committed += int(found[1].replace(",", ""))

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        rest, _ = self.process.communicate(timeout=300)
        self.log.write(rest)
        self.log.close()
        if self.process.returncode != 0:
            raise SystemExit(f"land --watch failed ({self.process.returncode}); see {self.log.name}")


def watch_phases(home: Path, env: dict[str, str], log: Path, run: Run) -> list[Phase]:
    """`land --watch` in a lakehouse of its own, over an inbox holding the base files: once it
    has landed them, the +1 % files appear (hard links) and are timed until committed: the
    cost of new data to a running watch, without Spark's start."""
    inbox = home / "inbox"
    for source, target in ((home / "base", inbox), (home / "more", inbox / "_more")):
        for path in message_files(source):
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target / path.relative_to(source))
    watch_env = {**env, "CDC_LAKEHOUSE_DIR": str(home / "watch-lakehouse")}
    started = time.perf_counter()
    watch = Watch(inbox, watch_env, log)
    try:
        watch.until(run.base_messages)
        base_seconds = time.perf_counter() - started
        more = inbox / "_more"
        started = time.perf_counter()
        for path in message_files(more):  # the new files appear beside the landed ones
            relative = path.relative_to(more)
            target = inbox / relative.parent / "more" / relative.name
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
        watch.until(run.base_messages + run.more_messages)
        more_seconds = time.perf_counter() - started
    finally:
        watch.stop()
    run_process([str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"], watch_env, log)
    shutil.rmtree(home / "watch-lakehouse", ignore_errors=True)
    shutil.rmtree(inbox, ignore_errors=True)
    return [
        Phase("land --watch (start and base)", base_seconds, run.base_messages),
        Phase("land --watch (+1%)", more_seconds, run.more_messages, spark=False),
    ]


def engine_phases(home: Path, env: dict[str, str], log: Path, lines: int = 20) -> list[Phase]:
    """The plain commands with and without the lakehouse's warm engine (the SQL endpoint's
    Spark, docs/lakehouse.md "The warm engine"), on the built lakehouse: `dbt parse` (dbt's own
    start-up), a `dbt build` with nothing new, and `land` of a small file (the first `lines`
    messages of a base file, as a new file), each with a Spark of its own
    (CDC_WARM_ENGINE=off), also without class archives (CDC_CLASS_ARCHIVES=off), and on the
    engine; the engine's first build (its JIT still cold) and its second."""
    source = message_files(home / "base")[0]
    own_root, warm_root, plain_root = small = [home / "small" / name for name in ("own", "warm", "plain")]
    for root in small:  # each a root of producer folders, as land_commands takes
        path = root / source.relative_to(home / "base")
        path.parent.mkdir(parents=True, exist_ok=True)
        with source.open(encoding="utf-8") as handle:
            path.write_text("".join(next(handle) for _ in range(lines)), encoding="utf-8")

    own = {**env, "CDC_WARM_ENGINE": "off"}
    plain = {**own, "CDC_CLASS_ARCHIVES": "off"}  # JVMs reading every class from the jars
    lakehouse = [str(PYTHON), "-m", "python_ingest", "lakehouse"]
    phases = [
        Phase("dbt parse (dbt's own start-up)", timed([[str(DBT), "parse"]], env, log), spark=False),
        Phase("dbt build, nothing new (own Spark)", timed([BUILD], own, log)),
        Phase("dbt build, nothing new (own Spark, no class archives)", timed([BUILD], plain, log)),
        Phase(
            "land of a small file (own Spark, no class archives)",
            timed(land_commands(plain_root), plain, log),
            lines,
        ),
        Phase("warm engine start (lakehouse start)", timed([[*lakehouse, "start"]], env, log)),
    ]
    try:  # both builds before the small files land: nothing is new to either
        phases += [
            Phase("dbt build, nothing new (fresh engine)", timed([BUILD], env, log), spark=False),
            Phase("dbt build, nothing new (warm engine)", timed([BUILD], env, log), spark=False),
            Phase("land of a small file (own Spark)", timed(land_commands(own_root), own, log), lines),
            Phase(
                "land of a small file (warm engine)",
                timed(land_commands(warm_root), env, log),
                lines,
                spark=False,
            ),
        ]
    finally:
        run_process([*lakehouse, "stop"], env, log)
    return phases


def timed(commands: list[list[str]], env: dict[str, str], log: Path) -> float:
    return sum(run_process(command, env, log)[0] for command in commands)


def fresh_home(home: Path) -> tuple[Path, dict[str, str]]:
    """Empty `home` for one measured run: its command log, and the environment of its commands
    (a lakehouse, dbt target and logs of its own under `home`)."""
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    env = {
        **os.environ,
        "CDC_LAKEHOUSE_DIR": str(home / "lakehouse"),
        "DBT_TARGET_PATH": str(home / "dbt-target"),
        "DBT_LOG_PATH": str(home / "dbt-logs"),
        "DBT_PROFILES_DIR": str(ROOT),
        "PYTHONPATH": str(ROOT),
    }
    return home / "commands.log", env


def benchmark(messages: int, workdir: Path, keep: bool, ces_large_every: int, builds: bool = True) -> Run:
    """One measured run for N = `messages`."""
    home = workdir / f"n{messages}"
    log, env = fresh_home(home)
    run = Run(messages)
    print(f"\n== N = {messages:,} messages ({home})", flush=True)
    ratios = calibrate(workdir, env, log, ces_large_every)
    generated, base, more = home / "generated", home / "base", home / "more"
    seconds = 0.0
    warm, extra = home / "warm", home / "extra"
    for producer in PRODUCERS:
        changes = max(1, math.ceil(messages * (1 + 2 * INCREMENT) / len(PRODUCERS) / ratios[producer]))
        spent, _ = run_process(
            generate_args(producer, changes, generated / producer, ces_large_every), env, log
        )
        seconds += spent
        # base, then the +1 % that `land` and a cold build take, then the +1 % of the warm pipeline.
        kept, _ = split_files(generated / producer, base / producer, extra / producer, 2 * INCREMENT)
        moved, warmed = split_files(extra / producer, more / producer, warm / producer, 1.0)
        shutil.rmtree(extra / producer)
        run.per_producer[producer] = {
            "changes": changes,
            "base_messages": kept,
            "more_messages": moved,
            "warm_messages": warmed,
        }
        print(f"   generated {producer}: {kept + moved + warmed:,} messages in {spent:.1f}s", flush=True)
    run.base_messages = sum(p["base_messages"] for p in run.per_producer.values())
    run.more_messages = sum(p["more_messages"] for p in run.per_producer.values())
    run.warm_messages = sum(p["warm_messages"] for p in run.per_producer.values())
    run.base_bytes = sum(p.stat().st_size for p in message_files(base))
    if not keep:
        shutil.rmtree(generated)
    total = run.base_messages + run.more_messages + run.warm_messages
    run.phases.append(Phase("generate", seconds, total, len(PRODUCERS), spark=False))

    steps: list[tuple[str, list[list[str]], int | None]] = [
        ("spark start-up", [[str(PYTHON), "benchmarks/bare_parse.py", "--noop"]], None),
        ("dbt start-up", [[str(DBT), "debug"]], None),
        ("land", land_commands(base), run.base_messages),
        ("bare Spark parse", [[str(PYTHON), "benchmarks/bare_parse.py"]], run.base_messages),
        ("dbt build (full)", [BUILD], run.base_messages),
        ("land (+1%)", land_commands(more), run.more_messages),
        ("dbt build (incremental)", [BUILD], run.more_messages),
        ("dbt build (nothing new)", [BUILD], None),
    ]
    if not builds:  # --landing-only
        steps = [step for step in steps if not step[0].startswith("dbt")]
    for name, commands, handled in steps:
        spent = timed(commands, env, log)
        run.phases.append(Phase(name, spent, handled, len(commands)))
        print(f"   {name}: {spent:.1f}s ({len(commands)} process(es))", flush=True)
        if name.startswith("dbt build"):
            run.builds[name] = node_times(home / "dbt-target" / "run_results.json")
    # The first process started the lakehouse's metastore service (its start is in that phase).
    run_process([str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"], env, log)
    for phase in watch_phases(home, env, log, run):
        run.phases.append(phase)
        print(f"   {phase.name}: {phase.seconds:.1f}s", flush=True)
    if builds:  # after the watch, which lands base and more (the warm files move into more)
        sources = land_sources(more)
        for name, spent, cycle in warm_phases(
            PYTHON, ROOT, sources, more, warm, message_files(warm), env, log
        ):
            handled = cycle.landed or None
            run.phases.append(Phase(name, spent, handled, spark=name.startswith("pipeline start")))
            print(f"   {name}: {spent:.1f}s (cycle {cycle.number})", flush=True)
        run.builds["warm cycle (+1 %)"] = node_times(home / "dbt-target" / "run_results.json")
        run_process([str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"], env, log)
        for phase in engine_phases(home, env, log):
            run.phases.append(phase)
            print(f"   {phase.name}: {phase.seconds:.1f}s", flush=True)
    if not keep:
        for directory in ("base", "more", "warm", "lakehouse", "dbt-target"):
            shutil.rmtree(home / directory, ignore_errors=True)
    return run


# -- the machine and the report -------------------------------------------------------
def machine() -> dict[str, str]:
    def first_line(command: list[str]) -> str:
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError:
            return "?"
        return ((result.stdout or "") + (result.stderr or "")).strip().splitlines()[0]

    memory = "?"
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        match = re.search(r"MemTotal:\s+(\d+) kB", meminfo.read_text())
        memory = f"{int(match.group(1)) / 1024**2:.1f} GiB" if match else "?"
    cpu = "?"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        match = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = match.group(1).strip() if match else "?"
    pyspark = first_line([str(PYTHON), "-c", "import pyspark; print(pyspark.__version__)"])
    return {
        "cpu": cpu,
        "nproc": str(os.cpu_count()),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": first_line([str(PYTHON), "--version"]).removeprefix("Python "),
        "java": first_line(["java", "-version"]),
        "pyspark": pyspark,
        "spark cores": os.environ.get("CDC_SPARK_CORES", "*"),
        "driver memory": os.environ.get("CDC_SPARK_DRIVER_MEMORY", "4g"),
        "shuffle partitions": os.environ.get("CDC_SHUFFLE_PARTITIONS", "4"),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def node_times(run_results: Path, top: int = 8) -> dict:
    """Where a dbt build's time went, from its run_results.json: the build's elapsed
    seconds, the summed seconds of its models and of its data tests (nodes run side by side
    on dbt's threads, so the sums exceed the elapsed time), how many models were idle, and
    the `top` slowest nodes."""
    if not run_results.is_file():
        return {}
    results = json.loads(run_results.read_text())
    # unique_id: <resource type>.<package>.<name>[.<hash of a generic test>]
    ids = [r["unique_id"].split(".") for r in results["results"]]
    nodes = [
        (parts[0], parts[2], r["execution_time"], r.get("message"))
        for parts, r in zip(ids, results["results"], strict=True)
    ]
    return {
        "elapsed": results.get("elapsed_time"),
        "model_seconds": sum(n[2] for n in nodes if n[0] != "test"),
        "test_seconds": sum(n[2] for n in nodes if n[0] == "test"),
        "nodes": len(nodes),
        "idle_models": sum(1 for n in nodes if n[3] == "IDLE"),
        "slowest": [
            {"node": f"{kind} {name}"[:90], "seconds": seconds, "message": message}
            for kind, name, seconds, message in sorted(nodes, key=lambda n: -n[2])[:top]
        ],
    }


def ratios(runs: list[Run]) -> list[tuple[str, float, float]]:
    """(ratio, with start-up, without start-up)."""
    out = []
    for run in runs:
        n = f"N={run.target_messages:,}"
        for label, top, bottom in (
            ("full build ÷ bare Spark parse", "dbt build (full)", "bare Spark parse"),
            ("incremental build ÷ full build", "dbt build (incremental)", "dbt build (full)"),
            ("nothing-new build ÷ full build", "dbt build (nothing new)", "dbt build (full)"),
            ("nothing-new build ÷ dbt start-up", "dbt build (nothing new)", "dbt start-up"),
            ("land ÷ bare Spark parse", "land", "bare Spark parse"),
            ("land --watch (+1%) ÷ land (+1%)", "land --watch (+1%)", "land (+1%)"),
            (
                "warm cycle (+1 %) ÷ cold incremental build",
                "warm cycle (+1 %), the cycle itself",
                "dbt build (incremental)",
            ),
            (
                "warm build, nothing new ÷ cold build, nothing new",
                "warm build, nothing new (first cycle)",
                "dbt build (nothing new)",
            ),
            (
                "`dbt build`, nothing new: warm engine ÷ own Spark",
                "dbt build, nothing new (warm engine)",
                "dbt build, nothing new (own Spark)",
            ),
            (
                "`dbt build`, nothing new, on the warm engine ÷ `dbt parse`",
                "dbt build, nothing new (warm engine)",
                "dbt parse (dbt's own start-up)",
            ),
            (
                "`land` of a small file: warm engine ÷ own Spark",
                "land of a small file (warm engine)",
                "land of a small file (own Spark)",
            ),
            (
                "`dbt build`, nothing new, own Spark: class archives ÷ none",
                "dbt build, nothing new (own Spark)",
                "dbt build, nothing new (own Spark, no class archives)",
            ),
            (
                "`land` of a small file, own Spark: class archives ÷ none",
                "land of a small file (own Spark)",
                "land of a small file (own Spark, no class archives)",
            ),
        ):
            if not all(any(p.name == name for p in run.phases) for name in (top, bottom)):
                continue
            # Without start-up, a phase that is mostly start-up (land of the +1 %) leaves
            # nothing to divide by: no ratio then (nan, shown as –).
            below = run.seconds(bottom, True)
            out.append(
                (
                    f"{label} ({n})",
                    run.seconds(top) / run.seconds(bottom),
                    run.seconds(top, True) / below if below > 0.5 else math.nan,
                )
            )
    if len(runs) == 2:
        small, large = runs
        factor = large.target_messages / small.target_messages
        for name in (
            "land",
            "bare Spark parse",
            "dbt build (full)",
            "dbt build (incremental)",
            "dbt build (nothing new)",
        ):
            if not any(p.name == name for p in small.phases):
                continue
            out.append(
                (
                    f"{name}: {factor:g}× data ÷ 1× data",
                    large.seconds(name) / small.seconds(name),
                    large.seconds(name, True) / small.seconds(name, True),
                )
            )
    return out


def report(runs: list[Run], host: dict[str, str], ces_large_every: int) -> str:
    lines = [
        "# Pipeline benchmark",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in host.items()),
        "",
        f"Traffic: generator seed {SEED}; one CES change in {ces_large_every or 'no'} with LOB values "
        "split into segments.",
        "",
    ]
    for run in runs:
        lines += [
            f"## N = {run.target_messages:,} messages",
            "",
            f"Landed {run.base_messages:,} messages ({run.base_bytes / 1024**2:.1f} MiB), then "
            f"{run.more_messages:,} more; per producer: "
            + ", ".join(
                f"{k} {v['base_messages']:,} + {v['more_messages']:,}" for k, v in run.per_producer.items()
            ),
            "",
            "| phase | processes | seconds | messages | messages/s |",
            "|---|---:|---:|---:|---:|",
        ]
        for phase in run.phases:
            rate = (
                "–" if not phase.rate else f"{phase.rate:,.0f}" if phase.rate >= 100 else f"{phase.rate:.1f}"
            )
            handled = f"{phase.messages:,}" if phase.messages else "–"
            lines.append(f"| {phase.name} | {phase.processes} | {phase.seconds:.1f} | {handled} | {rate} |")
        lines.append("")
    lines += [
        "## Ratios",
        "",
        "Without start-up: each phase's seconds minus, per process, the start-up measured alone "
        "(spark start-up for land and the bare parse, dbt start-up for dbt build).",
        "",
        "| ratio | with start-up | without start-up |",
        "|---|---:|---:|",
        *(f"| {label} | {a:.2f} | {'–' if math.isnan(b) else f'{b:.2f}'} |" for label, a, b in ratios(runs)),
        "",
    ]
    for run in runs:
        for build, times in run.builds.items():
            if not times:
                continue
            lines += [
                f"## Where {build} went (N = {run.target_messages:,}, run_results.json)",
                "",
                f"{times['elapsed']:.1f} s elapsed; {times['nodes']} nodes: "
                f"models {times['model_seconds']:.1f} s, data tests {times['test_seconds']:.1f} s "
                "(summed over dbt's threads); "
                f"{times['idle_models']} idle model(s).",
                "",
                "| slowest nodes | seconds | message |",
                "|---|---:|---|",
                *(f"| {n['node']} | {n['seconds']:.2f} | {n['message'] or ''} |" for n in times["slowest"]),
                "",
            ]
    return "\n".join(lines)


def load_benchmark(workdir: Path, rate: int, minutes: float, ces_large_every: int) -> dict:
    """The continuous-load run (benchmarks/warm.py, load_run) in a lakehouse of its own: the
    producers' traffic for `rate` messages a second over `minutes`, fed while a pipeline runs."""
    home = workdir / f"load{rate}"
    log, env = fresh_home(home)
    print(f"\n== continuous load: {rate:,} messages/s for {minutes:g} min ({home})", flush=True)
    ratios = calibrate(workdir, env, log, ces_large_every)
    pool = home / "pool"
    for producer in PRODUCERS:
        changes = max(1, math.ceil(rate * minutes * 60 / len(PRODUCERS) / ratios[producer]))
        run_process(generate_args(producer, changes, pool / producer, ces_large_every), env, log)
    (home / "lakehouse").mkdir()
    result = load_run(PYTHON, ROOT, pool, land_sources, env, log, rate, minutes)
    run_process([str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"], env, log)
    return result


def load_report(load: dict) -> str:
    lines = [
        f"## Continuous load: {load['rate']:,} messages/s of {len(PRODUCERS)} producers "
        f"for {load['minutes']:g} min",
        "",
        f"{load['written']:,} messages written by the feeder; {load['cycles']} cycles built while it wrote "
        f"(cycle seconds p50 {load['cycle_seconds_p50']:.1f}, max {load['cycle_seconds_max']:.1f}; "
        f"messages a cycle p50 {load['messages_per_cycle_p50']:,.0f}). Lag from a message's write to the "
        f"end of the cycle that built it: p50 {load['lag_p50']:.1f} s, p95 {load['lag_p95']:.1f} s, "
        f"max {load['lag_max']:.1f} s.",
        "",
        "| minute of writing | messages | lag p50 (s) | lag p95 (s) | lag max (s) |",
        "|---:|---:|---:|---:|---:|",
        *(
            f"| {m['minute']} | {m['messages']:,} | {m['p50']:.1f} | {m['p95']:.1f} | {m['max']:.1f} |"
            for m in load["per_minute"]
        ),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, required=True, help="N: messages across the producers")
    parser.add_argument("--scale", type=int, default=None, help="a second run at SCALE × N (e.g. 10)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to work (default: a new /tmp dir)")
    parser.add_argument("--keep", action="store_true", help="keep generated files and lakehouses")
    parser.add_argument(
        "--ces-large-every",
        type=int,
        default=CES_LARGE_EVERY,
        help=f"one CES change in this many carries 500 KB of LOB values (default {CES_LARGE_EVERY}; "
        "the generator's own default, 25, makes such events most of the bytes)",
    )
    parser.add_argument(
        "--landing-only",
        action="store_true",
        help="only generate, land, parse and watch: leave out the dbt phases",
    )
    parser.add_argument(
        "--load-rate",
        type=int,
        default=None,
        help="also a continuous-load run: messages/s fed to a running pipeline (e.g. 1000)",
    )
    parser.add_argument(
        "--load-minutes", type=float, default=10.0, help="minutes of the load run (default 10)"
    )
    parser.add_argument("--load-only", action="store_true", help="only the continuous-load run")
    args = parser.parse_args(argv)
    if args.messages < 100 or (args.scale is not None and args.scale < 2):
        parser.error("--messages must be at least 100 and --scale at least 2")
    if not PYTHON.exists() or not DBT.exists():
        parser.error("run scripts/setup.sh first: .venv/bin/python and .venv/bin/dbt are needed")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="cdc-bench-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    host = machine()
    sizes = [args.messages] + ([args.messages * args.scale] if args.scale else [])
    runs = (
        []
        if args.load_only
        else [benchmark(n, workdir, args.keep, args.ces_large_every, not args.landing_only) for n in sizes]
    )
    load = (
        load_benchmark(workdir, args.load_rate, args.load_minutes, args.ces_large_every)
        if args.load_rate
        else None
    )
    text = report(runs, host, args.ces_large_every) + ("\n" + load_report(load) if load else "")
    (workdir / "results.md").write_text(text, encoding="utf-8")
    results = {
        "machine": host,
        "ces_large_every": args.ces_large_every,
        "load": load,
        "runs": [{**asdict(r), "phases": [{**asdict(p), "rate": p.rate} for p in r.phases]} for r in runs],
        "ratios": [
            {"ratio": label, "with_startup": a, "without_startup": None if math.isnan(b) else b}
            for label, a, b in ratios(runs)
        ],
    }
    (workdir / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print("\n" + text)
    print(f"written: {workdir / 'results.md'}, {workdir / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
