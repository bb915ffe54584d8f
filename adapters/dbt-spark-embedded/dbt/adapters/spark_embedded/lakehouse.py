"""Spark settings that the embedded lakehouse derives at run time.

The profile states the Spark settings a user may want to read or change
(catalog, time zone, partitions...). Two things cannot be written there as
plain values and are derived here instead:

* the Iceberg runtime jar, resolved by Maven coordinate at set-up into the jar
  cache (:mod:`dbt.adapters.spark_embedded.jars`); ``iceberg_jar`` /
  ``CDC_ICEBERG_JAR`` overrides it; the jar of the lakehouse's own SQL
  functions, compiled into that cache (:mod:`dbt.adapters.spark_embedded.functions`); and the
  jar of the local file system a Spark in local mode writes through
  (:mod:`dbt.adapters.spark_embedded.local_files`), on the driver's class path;
* absolute paths under one lakehouse directory, so that every process (dbt,
  python_ingest, tests) started from anywhere sees the same lakehouse: the
  warehouse, and the lakehouse directory itself (``spark.cdc.lakehouseDir``),
  from which the session's starter finds, or starts, the lakehouse's metastore
  service (:mod:`dbt.adapters.spark_embedded.services`) right before Spark
  starts.

The warehouse may be on an S3-compatible object store instead (the local target's
``$CDC_LAKEHOUSE_WAREHOUSE``, an ``s3a://bucket/prefix`` URI): then the S3A connector's jars
(:func:`dbt.adapters.spark_embedded.jars.object_store_jars`) go on the driver's class path and
``spark.jars``, and the metastore service gets them and the profile's ``spark.hadoop.fs.s3a.*``
settings too (services.py). Credentials are never settings: S3A reads them from the environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``) or the machine's identity.

Settings the profile writes win: the `cluster` target names its warehouse
(``$CDC_WAREHOUSE_URI``) and metastore (``$CDC_METASTORE_URI``, so that no
metastore service is started), and its lakehouse directory only holds landing
checkpoints and the build lock.

``python_ingest`` builds its SparkSession through :func:`spark_parameters` too,
so landing and dbt always agree on the lakehouse.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from dbt.adapters.spark_embedded.class_archive import SPARK_DRIVER, java_options
from dbt.adapters.spark_embedded.functions import JavaBuildError, functions_jar
from dbt.adapters.spark_embedded.jars import JarsNotResolvedError, artifact_jar, object_store_jars
from dbt.adapters.spark_embedded.local_files import FILE_SYSTEM, LOCAL_FILE_SYSTEM_CLASS, local_files_jar
from dbt.adapters.spark_embedded.services import (
    FAIR_SCHEDULER_POOLS,
    JVM_OPTIONS,
    LAKEHOUSE_CONF,
    LOG4J_CONFIG,
    OBJECT_STORE_SCHEME,
)

ICEBERG_JAR_ENV = "CDC_ICEBERG_JAR"
WAREHOUSE = "spark.sql.warehouse.dir"


class LakehouseConfigError(RuntimeError):
    """A setting of the embedded lakehouse cannot be satisfied."""


def iceberg_jar(explicit: str | None = None) -> str:
    """The jar to put on Spark's class path: the explicit setting, else
    ``$CDC_ICEBERG_JAR``, else the pinned coordinate's jar from the jar cache."""
    chosen = (explicit or "").strip() or os.environ.get(ICEBERG_JAR_ENV, "").strip()
    if not chosen:
        try:
            return artifact_jar("iceberg")
        except JarsNotResolvedError as exc:
            raise LakehouseConfigError(str(exc)) from exc
    if "://" not in chosen and not os.path.isfile(chosen):
        raise LakehouseConfigError(
            f"{ICEBERG_JAR_ENV} / iceberg_jar points at {chosen!r}, which is not a file."
        )
    return chosen


def check_lakehouse(lakehouse_dir: str | os.PathLike, create: bool = False) -> bool:
    """Whether a lakehouse directory can be used, before anything starts for it: raises
    LakehouseConfigError, in one line that names the directory and the way out, when it is
    missing (only `land` creates one: `create`), is not a directory, or cannot be written.
    Returns True when it created the directory."""
    root = os.path.abspath(lakehouse_dir)
    created = False
    if not os.path.lexists(root):
        if not create:
            raise LakehouseConfigError(
                f"no lakehouse at {root}: `python -m python_ingest land ...` creates one there, "
                "or point CDC_LAKEHOUSE_DIR at an existing lakehouse (an empty directory is a new one)"
            )
        try:
            os.makedirs(root)
        except OSError as exc:
            raise LakehouseConfigError(
                f"cannot create the lakehouse at {root}: {exc.strerror or exc}; "
                "point CDC_LAKEHOUSE_DIR at a directory you can write"
            ) from None
        created = True
    if not os.path.isdir(root):
        raise LakehouseConfigError(
            f"the lakehouse {root} is not a directory; point CDC_LAKEHOUSE_DIR at a directory"
        )
    probe = os.path.join(root, f".write-check.{os.getpid()}")
    try:  # os.access says yes to root even on a read-only file system
        with open(probe, "w", encoding="utf-8"):
            pass
        os.unlink(probe)
    except OSError as exc:
        raise LakehouseConfigError(
            f"the lakehouse {root} is not writable ({exc.strerror or exc}); give this user write "
            "access to it, or point CDC_LAKEHOUSE_DIR at a directory you can write"
        ) from None
    return created


def on_object_store(warehouse: str | None) -> bool:
    """Whether the warehouse URI `warehouse` is on an object store the lakehouse reaches through
    S3A; refuses, in one line, a scheme it cannot reach (``s3://``, ``s3n://``, ``gs://``...)."""
    if not warehouse or "://" not in warehouse or warehouse.startswith("file:"):
        return False
    if warehouse.startswith(OBJECT_STORE_SCHEME):  # Hadoop's S3A connector (jars.OBJECT_STORE_COORDINATES)
        return True
    scheme = warehouse.split("://", 1)[0]
    if scheme in ("s3", "s3n"):
        raise LakehouseConfigError(
            f"the warehouse {warehouse} names the scheme {scheme}://; write "
            f"s3a://{warehouse.split('://', 1)[1]} (Hadoop's S3A connector reaches the bucket: "
            "docs/lakehouse.md)"
        )
    return False  # hdfs://, abfss://, gs://...: the cluster's own connectors (docs/lakehouse.md)


def object_store_parameters(params: Mapping[str, str]) -> dict[str, str]:
    """The settings a session on an object-store warehouse adds: the S3A connector's jars in
    `spark.jars`. The driver (client mode: spark-submit puts them on the class loader of the
    driver's threads, after pyspark's jars) and a cluster's executors find Hadoop's S3A file
    system there. Not `spark.driver.extraClassPath`: that goes before pyspark's jars, and the
    AWS SDK bundle carries an slf4j 1.7 API that would then silence Spark's logging."""
    try:
        jars = object_store_jars()
    except JarsNotResolvedError as exc:
        raise LakehouseConfigError(str(exc)) from exc
    listed = [j for j in params.get("spark.jars", "").split(",") if j.strip()]
    return {"spark.jars": ",".join([*listed, *(j for j in jars if j not in listed)])}


def lakehouse_parameters(lakehouse_dir: str, driver_classpath: str = "") -> dict[str, str]:
    """Warehouse and lakehouse settings for a lakehouse directory, with `driver_classpath` (the
    local file system's jar, local_files) on the driver's class path; the metastore's URI is
    added by the session's starter (services.with_services), which starts the service.
    Creates nothing: only `land` creates a lakehouse (check_lakehouse)."""
    root = os.path.abspath(lakehouse_dir)
    return {
        "spark.sql.warehouse.dir": os.path.join(root, "warehouse"),
        LAKEHOUSE_CONF: root,
        # Spark logs errors only (its default prints start-up warnings into dbt's output),
        # the driver JVM's compilers and collector suit a short-lived build
        # (services.JVM_OPTIONS), and it loads Spark's classes from set-up's archive
        # (class_archive).
        "spark.driver.extraJavaOptions": " ".join(
            [
                f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
                *JVM_OPTIONS,
                *java_options(SPARK_DRIVER, driver_classpath),
            ]
        ),
        # Before pyspark's jars, as the archive was made (archive_classes); one small jar.
        **({"spark.driver.extraClassPath": driver_classpath} if driver_classpath else {}),
        # A cluster's executors (the cluster target; local mode has none) run the same short
        # queries' code as the driver, each compiling it anew: the same compilers and collector.
        "spark.executor.extraJavaOptions": " ".join(JVM_OPTIONS),
        # The jobs running at once (dbt's threads, the SQL endpoint's sessions) share the cores
        # fairly, so a small query of one model does not wait for every task of another's large
        # one: an incremental build at 1M took 0.95 of its time (docs/lakehouse.md, "Jobs share
        # the cores").
        "spark.scheduler.mode": "FAIR",
        "spark.scheduler.allocation.file": FAIR_SCHEDULER_POOLS,
        # Not set here: hive.downloaded.resources.dir stays Hive's own, one directory per session
        # under /tmp. Hive 2.3.10 cannot share one between sessions (docs/lakehouse.md, "One
        # lakehouse, many processes").
        # Python UDF workers run on this interpreter (the venv's), not on
        # whatever `python3` is first on PATH.
        "spark.pyspark.python": sys.executable,
    }


def spark_parameters(
    server_side_parameters: Mapping[str, str],
    lakehouse_dir: str | None = None,
    jar: str | None = None,
) -> dict[str, str]:
    """The complete Spark settings: the profile's, plus the derived ones.

    Settings written in the profile win over derived ones, except that the
    Iceberg jar and the functions' jar are appended to any ``spark.jars`` the profile lists.
    """
    params = {str(k): str(v) for k, v in server_side_parameters.items()}
    if not params.get(WAREHOUSE, "").strip():
        params.pop(WAREHOUSE, None)  # the local target's empty $CDC_LAKEHOUSE_WAREHOUSE: the directory's
    try:
        functions, local_files = functions_jar(), local_files_jar()
    except JavaBuildError as exc:
        raise LakehouseConfigError(str(exc)) from exc
    derived = lakehouse_parameters(lakehouse_dir, local_files) if lakehouse_dir else {}
    for key, value in derived.items():
        params.setdefault(key, value)
    # Spark in local mode (one JVM, the driver's class path) creates its files through the local
    # file system that sets permissions without a process per file (local_files); a cluster's
    # executors keep Hadoop's, and so does a driver whose profile set a class path without it.
    local_master = params.get("spark.master", "").strip().startswith("local")
    if local_master and local_files in params.get("spark.driver.extraClassPath", "").split(os.pathsep):
        params.setdefault(FILE_SYSTEM, LOCAL_FILE_SYSTEM_CLASS)
    extra_jars = [j for j in params.get("spark.jars", "").split(",") if j.strip()]
    for jar_path in (iceberg_jar(jar), functions):
        if jar_path not in extra_jars:
            extra_jars.append(jar_path)
    params["spark.jars"] = ",".join(extra_jars)
    if on_object_store(params.get(WAREHOUSE)):
        params.update(object_store_parameters(params))
    return params
