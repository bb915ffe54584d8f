"""benchmarks/suite_jvms.py: what a JVM runs, read from its command line; a real JVM sampled with
the test that started it and its CPU; the report by test file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import suite_jvms

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
    assert suite_jvms.main_class(arguments) == expected


def test_report_sums_each_files_jvms_by_main_class() -> None:
    records = [
        {"main": "SparkSubmit", "test": "tests/e2e/test_a.py::test_one (call)", "cpu": 30.0},
        {"main": "SparkSubmit", "test": "tests/e2e/test_a.py::test_two (setup)", "cpu": 50.0},
        {"main": "LoopbackMetastore", "test": "tests/e2e/test_a.py::test_one (call)", "cpu": 5.0},
        {"main": "Kafka", "test": "tests/e2e/test_b.py::test_three (call)", "cpu": 15.0},
    ]
    lines = suite_jvms.report(records).splitlines()
    assert lines[0] == "4 JVMs, 100 s of CPU"
    assert lines[4] == "| tests/e2e/test_a.py | 3 | 85 | 85% | SparkSubmit 2, 80; LoopbackMetastore 1, 5 |"
    assert lines[5] == "| tests/e2e/test_b.py | 1 | 15 | 15% | Kafka 1, 15 |"


@pytest.mark.skipif(shutil.which("java") is None, reason="a JDK is needed to start a JVM")
def test_a_jvm_the_command_starts_is_recorded_with_its_test_and_cpu(tmp_path: Path) -> None:
    source = tmp_path / "Spin.java"  # a single-file source: busy for about a second, then waits
    source.write_text(
        "public class Spin { public static void main(String[] a) throws Exception {"
        " long end = System.nanoTime() + 1_000_000_000L; long n = 0;"
        " while (System.nanoTime() < end) { n++; } Thread.sleep(2000); System.out.println(n); } }\n"
    )
    out = tmp_path / "jvms.jsonl"
    marker = f"tests/unit/test_suite_jvms.py::spin-{os.getpid()} (call)"
    code = subprocess.run(
        [sys.executable, suite_jvms.__file__, "--out", str(out), "--", "java", str(source)],
        env={**os.environ, "PYTEST_CURRENT_TEST": marker},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert code.returncode == 0, code.stderr
    mine = [r for line in out.read_text().splitlines() if (r := json.loads(line))["test"] == marker]
    assert [r["main"] for r in mine] == ["Spin.java"], mine
    assert mine[0]["cpu"] >= 0.9, mine  # the busy second at least (compiling the source adds more)
    assert "| tests/unit/test_suite_jvms.py | 1 |" in code.stdout, code.stdout
