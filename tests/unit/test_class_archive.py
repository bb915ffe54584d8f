"""Class-data-sharing archives (adapters/dbt-spark-embedded, class_archive.py): which archive a
JVM uses and when, without making one (set-up's archive_classes does, in a real session;
tests/e2e/test_class_archive.py checks that the lakehouse's JVMs run with the ones it made)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded.class_archive import (
    ARCHIVES_ENV,
    CREATE_ENV,
    METASTORE,
    SPARK_DRIVER,
    archive_path,
    java_options,
)
from dbt.adapters.spark_embedded.jars import CACHE_ENV


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(ARCHIVES_ENV, raising=False)
    monkeypatch.delenv(CREATE_ENV, raising=False)
    return tmp_path / "cache"


def test_a_jvm_uses_its_archive_only_once_set_up_made_it(cache: Path) -> None:
    assert java_options(SPARK_DRIVER) == []  # none made yet: the JVM starts as without archives
    path = archive_path(SPARK_DRIVER)
    assert path is not None and path.parent == cache / "class-archives"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    options = java_options(SPARK_DRIVER)
    assert options[0] == f"-XX:SharedArchiveFile={path}"
    assert "-Xshare:auto" in options  # an archive the JVM refuses only costs the time it saves
    assert java_options(METASTORE) == []  # another kind of JVM: another archive


def test_an_archive_is_named_by_what_it_depends_on(cache: Path, tmp_path: Path, monkeypatch) -> None:
    driver, metastore = archive_path(SPARK_DRIVER), archive_path(METASTORE, "/jars/cdc-metastore-1.jar")
    assert driver != metastore
    assert archive_path(METASTORE, "/jars/cdc-metastore-2.jar") != metastore  # another class path
    assert archive_path(SPARK_DRIVER) == driver  # the same things: the same name
    # A jar of the class path rebuilt (or a venv made anew): the JVM would refuse the archive
    # (it checks each jar's size and time), so it has another name.
    jar = tmp_path / "cdc-metastore.jar"
    jar.write_bytes(b"one")
    before = archive_path(METASTORE, str(jar))
    os.utime(jar, ns=(1, 1))
    assert archive_path(METASTORE, str(jar)) != before
    # Another `java` (an upgrade): another name, so the old archive is not used.
    other_java = tmp_path / "jdk" / "bin" / "java"
    other_java.parent.mkdir(parents=True)
    other_java.write_text("#!/bin/sh\n")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert archive_path(SPARK_DRIVER) not in (None, driver)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert archive_path(SPARK_DRIVER) is None and java_options(SPARK_DRIVER) == []


def test_archives_can_be_switched_off_and_are_written_while_set_up_makes_them(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = archive_path(METASTORE)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    monkeypatch.setenv(ARCHIVES_ENV, "off")
    assert java_options(METASTORE) == []
    monkeypatch.delenv(ARCHIVES_ENV)
    monkeypatch.setenv(CREATE_ENV, str(tmp_path / "making"))
    assert java_options(METASTORE)[0] == f"-XX:ArchiveClassesAtExit={tmp_path / 'making' / 'metastore.jsa'}"
