"""Where the test suite's CPU goes: every JVM it starts, by test file.

The suite is CPU-bound on two cores (docs/testing.md, "How long it takes"), and most of its CPU
is JVMs: Spark drivers (a cold one per `land`, `dbt build` or query process a test starts as a
user would), metastore services, SQL endpoints, cluster masters and workers, Kafka. This script
runs a command (by default the suite as `.ci/run` runs it) and samples `/proc` once a second:
each JVM's main class, its CPU seconds (user and system) when last seen alive, and the test that
started it, read from `PYTEST_CURRENT_TEST` in its environment (pytest sets it in the test's
process; subprocesses inherit it). At the end it prints, per test file, how many JVMs of each
main class the file started and their CPU.

    .venv/bin/python benchmarks/suite_jvms.py [--out jvms.jsonl] [-- COMMAND ...]
    .venv/bin/python benchmarks/suite_jvms.py --report jvms.jsonl

Linux only (`/proc`). A JVM that lives less than a second may be missed, and the CPU of its last
second is not counted; the JVMs of the two test processes' shared lakehouses are counted under
the test that started them, though later tests use them too.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ["bash", ".ci/run"]  # set-up, linters and the README's test command
TICKS = os.sysconf("SC_CLK_TCK")


def jvm_of(pid: str) -> dict | None:
    """The main class and the starting test of process `pid` if it is a JVM, else None."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        command = f.read().split(b"\0")
    if not command[0].endswith(b"java"):
        return None
    with open(f"/proc/{pid}/environ", "rb") as f:
        environment = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    arguments = [c.decode(errors="replace") for c in command if c]
    main = main_class(arguments[1:])
    return {
        "pid": int(pid),
        "main": main,
        "test": environment.get(b"PYTEST_CURRENT_TEST", b"").decode(errors="replace"),
    }


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
    """Append one JSON line per JVM to `out` when it exits, until `until` exits."""
    alive: dict[str, dict] = {}
    with out.open("a") as sink:
        while True:
            done = until.poll() is not None
            for pid in (p for p in os.listdir("/proc") if p.isdigit()):
                try:
                    if pid not in alive and (jvm := jvm_of(pid)) is not None:
                        alive[pid] = {**jvm, "started": time.time()}
                    if pid in alive:
                        alive[pid]["cpu"] = cpu_seconds(pid)
                except (OSError, IndexError, ValueError):
                    continue  # it exited meanwhile, or it is not ours to read
            for pid in [p for p in alive if done or not os.path.exists(f"/proc/{p}")]:
                record = alive.pop(pid)
                sink.write(json.dumps({**record, "seconds": round(time.time() - record["started"])}) + "\n")
            sink.flush()
            if done:
                return
            time.sleep(1)


def report(records: list[dict]) -> str:
    """Per test file (most CPU first): its JVMs and their CPU, by main class."""
    count: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    cpu: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for record in records:
        where = record["test"].split("::")[0] or "(no test: set-up, collection, or a server)"
        count[where][record["main"]] += 1
        cpu[where][record["main"]] += record.get("cpu", 0.0)
    total = sum(sum(c.values()) for c in cpu.values()) or 1.0  # a share of nothing: 0 %
    lines = [
        f"{len(records)} JVMs, {sum(r.get('cpu', 0.0) for r in records):,.0f} s of CPU",
        "",
        "| test file | JVMs | CPU s | share | by main class (JVMs, CPU s) |",
        "|---|---:|---:|---:|---|",
    ]
    for where in sorted(cpu, key=lambda w: -sum(cpu[w].values())):
        seconds = sum(cpu[where].values())
        classes = "; ".join(
            f"{main} {count[where][main]}, {cpu[where][main]:,.0f}" for main, _ in cpu[where].most_common()
        )
        lines.append(
            f"| {where} | {sum(count[where].values())} | {seconds:,.0f} | {seconds / total:.0%} | {classes} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("suite_jvms.jsonl"), help="one JSON line per JVM")
    parser.add_argument("--report", type=Path, help="only print the report of a file an earlier run wrote")
    parser.add_argument("command", nargs="*", help="the command to run (default: .ci/run)")
    args = parser.parse_args(argv)
    if args.report is None:
        args.out.unlink(missing_ok=True)
        command = subprocess.Popen(args.command or SUITE, cwd=ROOT)
        sample(args.out, command)
        print(report([json.loads(line) for line in args.out.open()]))
        return command.returncode
    print(report([json.loads(line) for line in args.report.open()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
