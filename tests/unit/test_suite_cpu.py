"""benchmarks/suite_cpu.py: what a process runs, read from its command line; a real JVM and its
Python parent sampled with the test that started them and their CPU; the report by test file and
by program."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import suite_cpu

SPARK_OPTIONS = ["-cp", "/a/conf:/a/jars/*", "-Xmx4g", "--add-opens=java.base/java.lang=ALL-UNNAMED"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["-Xmx768m", "-cp", "/c/metastore.jar:/d/e.f", "LoopbackMetastore", "0", "60"], "LoopbackMetastore"),
        ([*SPARK_OPTIONS, "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"], "SparkSubmit"),
        (
            [*SPARK_OPTIONS, "org.apache.spark.deploy.SparkSubmit", "--class"]
            + ["org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "spark-internal"],
            "HiveThriftServer2",
        ),
        ([*SPARK_OPTIONS, "org.apache.spark.deploy.worker.Worker", "spark://127.0.0.1:7077"], "Worker"),
        (["--add-modules", "jdk.incubator.vector", "-jar", "/x/y/server.jar"], "server.jar"),
        (["/src/Sleep.java", "3"], "Sleep.java"),
        (["-cp", "/a/*", "org.apache.spark.launcher.Main", "pyspark-shell"], "launcher.Main"),
        (["-version"], "?"),
    ],
)
def test_main_class_names_what_the_jvm_runs(arguments: list[str], expected: str) -> None:
    assert suite_cpu.main_class(arguments) == expected
    assert suite_cpu.program(["/usr/lib/jvm/java-17-openjdk-amd64/bin/java", *arguments]) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["/w/.venv/bin/python", "-m", "python_ingest", "land", "--format", "ces"], "python_ingest"),
        (["/w/.venv/bin/python", "/w/.venv/bin/dbt", "build", "--target", "thrift"], "dbt"),
        (["/w/.venv/bin/python3.11", "-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"], "python -c"),
        (["/w/.venv/bin/python"], "python"),
        (["/usr/lib/postgresql/15/bin/postgres", "-D", "/tmp/pg"], "postgres"),
        (["postgres: checkpointer "], "postgres"),
    ],
)
def test_program_names_python_modules_scripts_and_executables(arguments: list[str], expected: str) -> None:
    assert suite_cpu.program(arguments) == expected


def test_report_sums_each_files_jvms_by_main_class() -> None:
    records = [
        {"program": "SparkSubmit", "test": "tests/e2e/test_a.py::test_one (call)", "cpu": 30.0},
        {"program": "SparkSubmit", "test": "tests/e2e/test_a.py::test_two (setup)", "cpu": 50.0},
        {"program": "LoopbackMetastore", "test": "tests/e2e/test_a.py::test_one (call)", "cpu": 4.5},
        {"program": "bash", "test": "tests/e2e/test_a.py::test_one (call)", "cpu": 0.25},
        {"program": "ss", "test": "tests/e2e/test_a.py::test_two (call)", "cpu": 0.25},
        {"program": "Kafka", "test": "tests/e2e/test_b.py::test_three (call)", "cpu": 15.0},
        {"program": "python -c", "test": "", "cpu": 0.0},
    ]
    lines = suite_cpu.report(records).splitlines()
    assert lines[0] == "7 processes, 100 s of CPU"
    assert lines[4] == (
        "| tests/e2e/test_a.py | 5 | 85 | 85% | SparkSubmit 2, 80; LoopbackMetastore 1, 4; other 2, 0 |"
    )
    assert lines[5] == "| tests/e2e/test_b.py | 1 | 15 | 15% | Kafka 1, 15 |"
    assert lines[6] == f"| {suite_cpu.ELSEWHERE} | 1 | 0 | 0% | other 1, 0 |"
    assert lines[8:] == [
        "| program | processes | CPU s | share |",
        "|---|---:|---:|---:|",
        "| SparkSubmit | 2 | 80 | 80% |",
        "| Kafka | 1 | 15 | 15% |",
        "| LoopbackMetastore | 1 | 4 | 4% |",
        "| other | 3 | 0 | 0% |",
    ]


@pytest.mark.skipif(shutil.which("java") is None, reason="a JDK is needed to start a JVM")
def test_a_jvm_and_its_parent_are_recorded_with_their_test_and_cpu(tmp_path: Path) -> None:
    source = tmp_path / "Spin.java"  # a single-file source: busy for about a second, then waits
    source.write_text(
        "public class Spin { public static void main(String[] a) throws Exception {"
        " long end = System.nanoTime() + 1_000_000_000L; long n = 0;"
        " while (System.nanoTime() < end) { n++; } Thread.sleep(2000); System.out.println(n); } }\n"
    )
    out = tmp_path / "processes.jsonl"
    marker = f"tests/unit/test_suite_cpu.py::spin-{os.getpid()} (call)"
    # A Python process that runs the JVM, as the project's commands run Spark.
    parent = f"import subprocess; subprocess.run(['java', {str(source)!r}], check=True)"
    code = subprocess.run(
        [sys.executable, suite_cpu.__file__, "--out", str(out), "--", sys.executable, "-c", parent],
        env={**os.environ, "PYTEST_CURRENT_TEST": marker},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert code.returncode == 0, code.stderr
    lines = out.read_text().splitlines()
    mine = {r["program"]: r for line in lines if (r := json.loads(line))["test"] == marker}
    assert sorted(mine) == ["Spin.java", "python -c"], mine
    assert mine["Spin.java"]["cpu"] >= 0.9, mine  # its busy second at least (compiling the source adds more)
    assert mine["python -c"]["cpu"] < 0.9, mine  # its own CPU, not its child's
    assert "| tests/unit/test_suite_cpu.py | 2 |" in code.stdout, code.stdout


def test_stopping_the_run_stops_the_command_it_measures(tmp_path: Path) -> None:
    marker = f"suite-cpu-probe-{os.getpid()}"  # names the command's process in `ps`
    run = subprocess.Popen(
        [sys.executable, "benchmarks/suite_cpu.py", "--out", str(tmp_path / "processes.jsonl")]
        + ["--", "bash", "-c", f"exec -a {marker} sleep 300"],
        cwd=Path(suite_cpu.ROOT),
        stdout=subprocess.DEVNULL,
    )

    def command_running() -> bool:
        listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
        return any(line.startswith(marker) for line in listing.splitlines())

    deadline = time.monotonic() + 30
    while not command_running():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.2)
    run.terminate()
    assert run.wait(timeout=30) == 128 + signal.SIGTERM
    assert not command_running()
