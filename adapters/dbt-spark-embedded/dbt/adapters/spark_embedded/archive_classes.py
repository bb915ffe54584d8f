"""Set-up's step ``python -m dbt.adapters.spark_embedded.archive_classes``: make the
class-data-sharing archives of :mod:`dbt.adapters.spark_embedded.class_archive` that this
machine lacks, for a Spark driver and for the metastore service.

It runs one real session on a lakehouse of its own in a temporary directory, through the
same starter as every command (metastore service first, then Spark), with each JVM told to
write the classes it loaded into an archive when it exits. The session does a little of
what the lakehouse's commands do (an Iceberg table created, appended to from Arrow, merged
into and read, its metadata tables read, a view, a Python UDF), so that the classes those
need are in the archive; any other class is read from its jar as before. Then both JVMs are
stopped, their archives are moved into the jar cache, and the directory is removed. About a
minute, once per machine (and again after an upgrade of Java or pyspark).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dbt.adapters.spark_embedded.class_archive import (
    CREATE_ENV,
    METASTORE,
    SPARK_DRIVER,
    archive_path,
)
from dbt.adapters.spark_embedded.lakehouse import spark_parameters
from dbt.adapters.spark_embedded.local_files import local_files_jar
from dbt.adapters.spark_embedded.python_submissions import active_session
from dbt.adapters.spark_embedded.services import metastore_jar, services_dir, stop

# A JVM writes its archive at exit: a few seconds to a minute on a busy machine.
EXIT_TIMEOUT_SECONDS = 600
SESSION_SETTINGS = {
    "spark.master": "local[2]",
    "spark.app.name": "cdc-class-archive",
    "spark.sql.catalogImplementation": "hive",
    "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
    "spark.sql.catalog.spark_catalog.type": "hive",
    "spark.hadoop.iceberg.engine.hive.lock-enabled": "false",
    "spark.hadoop.hive.metastore.schema.verification": "false",
    "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "ERROR",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}
WORKLOAD = (
    "create namespace if not exists archive",
    "create table archive.changes (id bigint, row_data map<string, string>, body string) using iceberg",
    "merge into archive.changes t using (select 1L as id, map('a', 'c') as row_data, '{\"a\": 2}' as body) s "
    "on t.id = s.id when matched then update set * when not matched then insert *",
    "select body, count(*), max(id), first(row_data['a']) from archive.changes group by body",
    "select * from archive.changes.snapshots",
    "create or replace view archive.parsed as select id, from_json(body, 'a int').a as a "
    "from archive.changes",
    "select * from archive.parsed where a is not null",
    "describe table extended archive.changes",
    "show tables in archive",
    "drop view archive.parsed",
    "drop table archive.changes purge",
)


def _run_session(lakehouse: Path) -> None:
    """The session whose JVMs write the archives, then both JVMs stopped (and waited for)."""
    from pyspark import SparkContext
    from pyspark.sql.functions import col, udf

    spark = active_session(spark_parameters(SESSION_SETTINGS, str(lakehouse)), warm=False)
    for statement in WORKLOAD[:2]:
        spark.sql(statement).collect()
    rows = [(2, {"a": "b"}, '{"a": 1}'), (3, None, None)]
    spark.createDataFrame(rows, "id bigint, row_data map<string, string>, body string").writeTo(
        "archive.changes"
    ).append()
    for statement in WORKLOAD[2:-3]:
        spark.sql(statement).collect()
    spark.table("archive.changes").select(udf(lambda s: (s or "").upper())(col("body"))).collect()
    for statement in WORKLOAD[-3:]:
        spark.sql(statement).collect()
    driver = SparkContext._gateway.proc  # spark-submit, which execs the driver's JVM
    spark.stop()
    driver.stdin.close()  # the driver exits when its Python's pipe closes
    driver.wait(timeout=EXIT_TIMEOUT_SECONDS)
    stop(services_dir(lakehouse) / "metastore.json", grace_seconds=EXIT_TIMEOUT_SECONDS)


def main() -> int:
    # The class paths beyond pyspark's jars: the driver's as lakehouse.spark_parameters gives it,
    # the metastore's as metastore_command does.
    wanted = {
        SPARK_DRIVER: archive_path(SPARK_DRIVER, local_files_jar()),
        METASTORE: archive_path(METASTORE, metastore_jar()),
    }
    if any(path is None for path in wanted.values()):
        print("setup: no `java` found: no class archives made", file=sys.stderr)
        return 1
    if all(path.is_file() for path in wanted.values()):
        return 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cdc-class-archives-") as work:
        made, lakehouse = Path(work) / "archives", Path(work) / "lakehouse"
        made.mkdir()
        os.environ[CREATE_ENV] = str(made)
        try:
            _run_session(lakehouse)
        finally:
            del os.environ[CREATE_ENV]
        missing = []
        for kind, path in wanted.items():
            written = made / f"{kind}.jsa"
            if not written.is_file():
                missing.append(kind)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(written, path.with_suffix(".tmp"))
            os.replace(path.with_suffix(".tmp"), path)
    if missing:
        print(f"setup: the JVMs wrote no class archive for: {', '.join(missing)}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - started
    print(f"setup: made the class archives of Spark and the metastore in {seconds:.0f}s ({path.parent})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
