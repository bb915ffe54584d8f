"""Class-data-sharing archives: the JVMs the lakehouse starts load Spark's classes from a
memory-mapped archive instead of reading, parsing and verifying them from pyspark's jars.

A Spark driver loads about 19,000 classes by its first queries, and on a 2-core machine
that is most of its start-up: a session with two small queries starts in about two thirds of
the time with the archive (docs/benchmarks.md, "Class-data sharing: Spark starts sooner").
Every command that starts a Spark of its own gains that (`land`, `dbt build` without the warm
engine, `pipeline`), and so does each lakehouse's metastore service. (The SQL endpoint's
driver has a class path of its own and starts without one.)

An archive is HotSpot's dynamic CDS archive (JDK 13+, ``-XX:ArchiveClassesAtExit``), made by
set-up (``python -m dbt.adapters.spark_embedded.archive_classes``) from one real session, and
kept in the jar cache under a name that hashes what it depends on: the `java` that runs it,
and every jar file of the JVM's class path (pyspark's, and the service's own), by path, size
and modification time, which the JVM checks too. An archive that does not match (a JVM or
pyspark upgraded or reinstalled since) is not used: a JVM started without it only starts
slower. One the JVM refuses anyway is not used either, silently (its CDS log is off).
``CDC_CLASS_ARCHIVES=off`` starts JVMs without archives.

This module only names archives and the JVM options that use them; it imports nothing of the
lakehouse's above the jar cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from dbt.adapters.spark_embedded.jars import cache_dir, spark_jars_dir

ARCHIVES_ENV = "CDC_CLASS_ARCHIVES"  # "off": no archive is used
# Set by archive_classes while it makes the archives: JVMs started then write theirs into this
# directory at exit (-XX:ArchiveClassesAtExit) instead of using one.
CREATE_ENV = "CDC_CLASS_ARCHIVES_CREATE"
SPARK_DRIVER = "spark-driver"  # a Spark driver started by spark-submit (pyspark, the SQL endpoint)
METASTORE = "metastore"  # the lakehouse's metastore service (services.metastore_command)
# The JVM's messages about archives (a mismatch, a missing file; while one is made, each class
# it leaves out) are not the user's concern: without a usable archive it starts as it would
# have without one.
_QUIET = ("-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def java_binary() -> Path | None:
    """The `java` that spark-submit and the services start ($JAVA_HOME's, else the first on
    PATH), resolved; None if there is none."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        return None
    return Path(found).resolve()


def archive_path(kind: str, classpath: str = "") -> Path | None:
    """Where the archive of JVMs of `kind` whose class path (beyond pyspark's jars) is
    `classpath` is kept, named by a hash of what it depends on; None without a `java`."""
    java = java_binary()
    if java is None:
        return None
    jars = spark_jars_dir()
    digest = hashlib.sha256(kind.encode() + b"\0")
    # The JVM refuses an archive when a jar of its class path is not the file it was made
    # from (size and modification time): a reinstalled pyspark, a rebuilt jar. Such a
    # change gives another name, so set-up makes the archive again.
    files = [java, *sorted(jars.glob("*.jar")), *(Path(p) for p in classpath.split(os.pathsep) if p)]
    for path in files:
        stat = path.stat() if path.exists() else None
        facts = (str(path), str(stat.st_size), str(stat.st_mtime_ns)) if stat else (str(path), "-", "-")
        digest.update("\0".join(facts).encode() + b"\0")
    return cache_dir() / "class-archives" / f"{kind}-{digest.hexdigest()[:16]}.jsa"


def java_options(kind: str, classpath: str = "") -> list[str]:
    """The JVM options of a JVM of `kind`: its archive's, if set-up made one that matches; while
    archive_classes makes them, the option that writes it at exit."""
    if os.environ.get(ARCHIVES_ENV, "").strip().lower() == "off":
        return []
    creating = os.environ.get(CREATE_ENV)
    if creating:
        return [f"-XX:ArchiveClassesAtExit={Path(creating) / f'{kind}.jsa'}", *_QUIET[1:]]
    path = archive_path(kind, classpath)
    if path is None or not path.is_file():
        return []
    return [f"-XX:SharedArchiveFile={path}", *_QUIET]
