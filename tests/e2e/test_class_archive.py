"""The JVMs of the test run's lakehouse, its Spark driver and its metastore service, run with the
class-data-sharing archives that set-up made (adapters/dbt-spark-embedded, class_archive.py):
each has its archive mapped. A JVM maps an archive only if it accepts it (the same JVM, the
same class path): one it refuses is not mapped, and the JVM reads every class from the jars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded.class_archive import METASTORE, SPARK_DRIVER, archive_path
from dbt.adapters.spark_embedded.local_files import local_files_jar
from dbt.adapters.spark_embedded.services import metastore_jar, services_dir

pytestmark = pytest.mark.spark


def mapped(pid: int) -> set[str]:
    """The archive files process `pid` has mapped."""
    lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {line.split()[-1] for line in lines if line.endswith(".jsa")}


def made(kind: str, classpath: str = "") -> Path:
    path = archive_path(kind, classpath)
    assert path is not None and path.is_file(), f"no {kind} class archive: run scripts/setup.sh"
    return path


def test_the_spark_driver_and_the_metastore_run_with_their_archives(spark, lakehouse_dir: Path) -> None:
    from pyspark import SparkContext

    driver = SparkContext._gateway.proc.pid  # spark-submit execs the driver's JVM
    assert str(made(SPARK_DRIVER, local_files_jar())) in mapped(driver)
    service = json.loads((services_dir(lakehouse_dir) / "metastore.json").read_text())
    assert str(made(METASTORE, metastore_jar())) in mapped(int(service["pid"]))
