"""The local file system of a Spark in local mode: Hadoop's, with permissions set in the JVM.

Pyspark ships no Hadoop native library, so Hadoop's local file system (``file:``) starts a
``chmod`` process for every file and directory it creates: Iceberg's data, metadata and
checksum files, landing's and the build's directories, about 660 processes for one build of
the sample data. `LakehouseLocalFileSystem` (``dbt/include/spark_embedded/filesystem/``) is
Hadoop's own local file system with that one step done through ``java.nio`` instead; it sets
the same bits (docs/lakehouse.md, "The local file system").

:func:`dbt.adapters.spark_embedded.lakehouse.spark_parameters` puts its jar on the driver's
class path of every target (the driver's class archive is made with it there: class_archive.py)
and names the class in ``spark.hadoop.fs.file.impl`` for a local master only. A cluster's
executors would need the class on class paths of their own machines, so a cluster keeps
Hadoop's. The jar is compiled like the SQL functions' (functions.java_jar), against pyspark's
Hadoop.
"""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.spark_embedded.functions import java_jar, pyspark_classpath
from dbt.include import spark_embedded as include_package

SOURCES = Path(include_package.PACKAGE_PATH) / "filesystem"
FILE_SYSTEM = "spark.hadoop.fs.file.impl"  # Hadoop's class for the file: scheme
LOCAL_FILE_SYSTEM_CLASS = "cdc.lakehouse.filesystem.LakehouseLocalFileSystem"
COMPILE_AGAINST = ("hadoop-client-api-*.jar",)  # pyspark's Hadoop


def local_files_jar() -> str:
    """The path of the local file system's jar for the current sources, built first if it is
    missing."""
    return java_jar(sorted(SOURCES.glob("*.java")), "filesystem", pyspark_classpath(COMPILE_AGAINST))
