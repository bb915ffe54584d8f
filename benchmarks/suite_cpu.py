"""Where the test suite's CPU goes: every process it starts, by test file and program.

The suite is CPU-bound on two cores (docs/testing.md, "How long it takes"). This script runs a
command (by default the suite as `.ci/run` runs it) and samples `/proc` once a second. For each
process that started after the command did, it records its program, its CPU seconds (user and
system) when last seen alive, and the test that started it, read from `PYTEST_CURRENT_TEST` in
its environment (pytest sets it in the test's process; subprocesses inherit it). A program is a
JVM's main class (`SparkSubmit` a PySpark driver, `HiveThriftServer2` the SQL endpoint,
`LoopbackMetastore`, a cluster's `Master`, `Worker` and executors, Kafka), a Python module run
with `-m`, a Python script's name (`dbt`, `pytest`), `python -c` (pytest-xdist's test
processes), or an executable's name (`postgres`, `weed`). At the end it prints, per test file,
how many processes of each program the file started and their CPU, and the totals by program.

    .venv/bin/python benchmarks/suite_cpu.py [--out processes.jsonl] [-- COMMAND ...]
    .venv/bin/python benchmarks/suite_cpu.py --report processes.jsonl

Linux only (`/proc`). A process that lives less than a second may be missed, and the CPU of its
last second is not counted; a process's CPU is its own, not its children's. Stopping this run
(SIGTERM, Ctrl-C) stops the command's process group; the services the suite starts in sessions
of their own (metastore services, SQL endpoints) stop after their idle time. The two test
processes' shared lakehouses' Spark is counted under the test that started it, though later
tests use it too. It counts every process that starts on the machine meanwhile, so run it on an
otherwise idle one.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ["bash", ".ci/run"]  # set-up, linters and the README's test command
ELSEWHERE = "(no test: set-up, collection, or a test process itself)"
TICKS = os.sysconf("SC_CLK_TCK")


def process_of(pid: str, arguments: list[str]) -> dict:
    """The program and starting test of process `pid`, whose command line is `arguments`."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        environment = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    return {
        "pid": int(pid),
        "program": program(arguments),
        "argv0": arguments[0],
        "test": environment.get(b"PYTEST_CURRENT_TEST", b"").decode(errors="replace"),
    }


def program(arguments: list[str]) -> str:
    """What a process runs, named from its command line (the module docstring)."""
    # A server's worker may rename itself: PostgreSQL's show as "postgres: checkpointer".
    executable = Path(arguments[0]).name.split(":")[0]
    if executable == "java":
        return main_class(arguments[1:])
    if executable.startswith("python"):
        words = arguments[1:]
        if "-m" in words[:-1]:
            return words[words.index("-m") + 1]
        if "-c" in words:
            return "python -c"
        script = next((w for w in words if not w.startswith("-")), None)
        return Path(script).name if script else executable
    return executable


VALUED = {"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules", "--add-opens"}


def main_class(arguments: list[str]) -> str:
    """What a JVM runs, from its arguments after `java`: the main class's simple name, a jar's
    or a source file's name; for Spark's launcher, the class it runs (`--class`: the SQL
    endpoint, a master, a worker), else `SparkSubmit` (a PySpark driver)."""
    words = iter(arguments)
    for word in words:
        if word in VALUED:
            next(words, None)
        elif word == "-jar":
            return Path(next(words, "?")).name
        elif not word.startswith("-"):
            if word.endswith(".SparkSubmit") and "--class" in arguments:
                return arguments[arguments.index("--class") + 1].rsplit(".", 1)[-1]
            if word.endswith(".java"):
                return Path(word).name
            # org.apache.spark.launcher.Main (Spark's scripts run it to build the driver's command):
            # a name as plain as Main keeps its package's last part.
            parts = word.split(".")
            return ".".join(parts[-2:]) if parts[-1] == "Main" else parts[-1]
    return "?"


def cpu_seconds(pid: str) -> float:
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def sample(out: Path, until: subprocess.Popen) -> None:
    """Append one JSON line per process that started after the first sample to `out` when it
    exits, until `until` exits."""
    before = {p for p in os.listdir("/proc") if p.isdigit()} - {str(until.pid)}
    alive: dict[str, dict] = {}
    with out.open("a") as sink:
        while True:
            done = until.poll() is not None
            running = {p for p in os.listdir("/proc") if p.isdigit()}
            before &= running  # a number freed by a process of before may come back as a new one
            for pid in running - before:
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        arguments = [c.decode(errors="replace") for c in f.read().split(b"\0") if c]
                    # New, or it ran another program since (exec: Spark's scripts become java);
                    # a kernel thread has no command line.
                    if arguments and (pid not in alive or alive[pid]["argv0"] != arguments[0]):
                        started = alive.get(pid, {}).get("started", time.time())
                        alive[pid] = {**process_of(pid, arguments), "started": started}
                    if pid in alive:
                        alive[pid]["cpu"] = cpu_seconds(pid)
                except (OSError, IndexError, ValueError):
                    continue  # it exited meanwhile, or it is not ours to read
            for pid in [p for p in alive if done or not os.path.exists(f"/proc/{p}")]:
                record = alive.pop(pid)
                record["seconds"] = round(time.time() - record.pop("started"))
                sink.write(json.dumps(record) + "\n")
            sink.flush()
            if done:
                return
            time.sleep(1)


def report(records: list[dict]) -> str:
    """Per test file (most CPU first): its processes and their CPU by program; then the totals
    by program."""
    count: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    cpu: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for record in records:
        where = record["test"].split("::")[0] or ELSEWHERE
        count[where][record["program"]] += 1
        cpu[where][record["program"]] += record.get("cpu", 0.0)
    total = sum(sum(c.values()) for c in cpu.values())
    lines = [
        f"{len(records)} processes, {total:,.0f} s of CPU",
        "",
        "| test file | processes | CPU s | share | by program (processes, CPU s) |",
        "|---|---:|---:|---:|---|",
    ]
    for where in sorted(cpu, key=lambda w: -sum(cpu[w].values())):
        seconds = sum(cpu[where].values())
        parts = "; ".join(
            f"{name} {n}, {spent:,.0f}" for name, n, spent in by_program(count[where], cpu[where])
        )
        lines.append(
            f"| {where} | {sum(count[where].values())} | {seconds:,.0f} | {share(seconds, total)} | {parts} |"
        )
    every_count, every_cpu = collections.Counter(), collections.Counter()
    for where in cpu:
        every_count.update(count[where])
        every_cpu.update(cpu[where])
    lines += ["", "| program | processes | CPU s | share |", "|---|---:|---:|---:|"]
    for name, n, seconds in by_program(every_count, every_cpu):
        lines.append(f"| {name} | {n} | {seconds:,.0f} | {share(seconds, total)} |")
    return "\n".join(lines)


def by_program(count: collections.Counter, cpu: collections.Counter) -> list[tuple[str, int, float]]:
    """(program, processes, CPU s), most CPU first; the programs under a second of CPU summed
    last as `other`."""
    rows = [(name, count[name], spent) for name, spent in cpu.most_common() if spent >= 1]
    if others := [name for name in cpu if cpu[name] < 1]:
        rows.append(("other", sum(count[n] for n in others), sum(cpu[n] for n in others)))
    return rows


def share(seconds: float, total: float) -> str:
    return f"{seconds / (total or 1):.0%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("suite_cpu.jsonl"), help="one JSON line per process")
    parser.add_argument("--report", type=Path, help="only print the report of a file an earlier run wrote")
    parser.add_argument("command", nargs="*", help="the command to run (default: .ci/run)")
    args = parser.parse_args(argv)
    code = 0
    if args.report is None:
        args.out.unlink(missing_ok=True)
        # In a process group of its own, which goes when this run is stopped (SIGTERM, Ctrl-C)
        # before the command ends: a suite left running would load the machine unmeasured.
        # SIGTERM, then SIGKILL to what is left after a grace, as cdc_cluster/servers.py's
        # stop_process_group does; not imported, since on a clean clone this runs with the
        # system Python before set-up has made the .venv that module needs.
        command = subprocess.Popen(args.command or SUITE, cwd=ROOT, start_new_session=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        try:
            sample(args.out, command)
        finally:
            if command.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.killpg(command.pid, signal.SIGTERM)
                try:
                    command.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(command.pid, signal.SIGKILL)
                    command.wait()
        code = command.returncode
    print(report([json.loads(line) for line in (args.report or args.out).open()]))
    return code


if __name__ == "__main__":
    sys.exit(main())
