"""The local file system of the test run's Spark (local mode): Hadoop's, with permissions set in
the JVM (adapters/dbt-spark-embedded, local_files.py). It sets the bits `chmod` sets, and creates
files and directories with the modes Hadoop's own gives them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded.local_files import LOCAL_FILE_SYSTEM_CLASS

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def hadoop(spark):
    """(the JVM's view, the session's file system for `file:`)."""
    jvm = spark.sparkContext._jvm
    configuration = spark.sparkContext._jsc.hadoopConfiguration()
    return jvm, jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), configuration)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_written_through_the_lakehouses_local_file_system(hadoop) -> None:
    _, files = hadoop
    assert files.getClass().getName() == LOCAL_FILE_SYSTEM_CLASS
    assert files.getRawFileSystem().getClass().getName() == f"{LOCAL_FILE_SYSTEM_CLASS}$Raw"


@pytest.mark.parametrize("mode", ["000", "400", "640", "644", "700", "751", "755", "777", "1777"])
def test_a_permission_is_set_as_chmod_sets_it(hadoop, tmp_path: Path, mode: str) -> None:
    jvm, files = hadoop
    ours, chmods = tmp_path / "set-by-spark", tmp_path / "set-by-chmod"
    ours.mkdir()
    chmods.mkdir()
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission(mode)  # octal, as chmod takes it
    files.setPermission(jvm.org.apache.hadoop.fs.Path(str(ours)), permission)
    os.chmod(chmods, int(mode, 8))  # the sticky bit (1777) goes to Hadoop's own chmod process
    assert mode_of(ours) == mode_of(chmods) == int(mode, 8)


def test_created_files_and_directories_have_the_modes_hadoops_own_gives_them(hadoop, tmp_path: Path) -> None:
    jvm, files = hadoop
    directory = tmp_path / "a" / "b"
    assert files.mkdirs(jvm.org.apache.hadoop.fs.Path(str(directory)))
    stream = files.create(jvm.org.apache.hadoop.fs.Path(str(directory / "data.parquet")))
    stream.write(bytearray(b"PAR1"))
    stream.close()
    umask = 0o022  # Hadoop's default (fs.permissions.umask-mode), whatever the process's
    assert mode_of(directory) == mode_of(directory.parent) == 0o777 & ~umask
    assert mode_of(directory / "data.parquet") == 0o666 & ~umask
    assert mode_of(directory / ".data.parquet.crc") == 0o666 & ~umask  # the checksum beside it
    assert (directory / "data.parquet").read_bytes() == b"PAR1"
