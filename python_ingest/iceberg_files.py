"""Append an Arrow table to an Iceberg table as one Parquet file, without a Spark job.

Landing's chunks are already in memory as Arrow tables (python_ingest/landing.py). Handing
them to Spark costs a copy into the JVM, a conversion to Spark rows and Spark's Parquet
writer: more CPU than the reading itself. On the embedded lakehouse (Spark in local mode, the
table on this machine's file system) this module writes the chunk with pyarrow's Parquet
writer (C++, outside Python's lock) into the table's data folder, named by the table's own
location provider, and
commits it with Iceberg's Java API through the Spark session's JVM: one ``AppendFiles``
carrying the chunk's snapshot property, with column metrics read from the file's footer, as
Iceberg's own writers do. The columns carry the Iceberg field ids (``PARQUET:field_id``), so
every Iceberg reader maps them by id. A file written but never committed (a crash) is an
orphan that no snapshot names, as a failed Spark append leaves.

Elsewhere :attr:`IcebergAppender.direct` is false and landing appends through Spark: on a
cluster its executors write (in parallel, with the connectors of the cluster's HDFS, S3 or
ABFS warehouse), not the one machine that runs `land`; a warehouse on an object store (an
``s3a://`` table location) is written through Spark's writer and Hadoop's S3A connector. On
the lakehouse's warm engine (a Spark Connect session, no JVM in the landing process)
:class:`SparkAppender` has the engine write.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

FIELD_ID = b"PARQUET:field_id"


class UnsupportedColumnError(RuntimeError):
    """A column type the landing tables do not use."""


def _arrow_type(iceberg_type: Any) -> Any:
    import pyarrow as pa

    name = iceberg_type.toString()
    simple = {
        "string": pa.string(),
        "int": pa.int32(),
        "long": pa.int64(),
        "boolean": pa.bool_(),
        "double": pa.float64(),
        "timestamptz": pa.timestamp("us", tz="UTC"),
        "timestamp": pa.timestamp("us"),
    }
    if name in simple:
        return simple[name]
    if iceberg_type.isMapType():
        kinds = iceberg_type.asMapType()
        key = pa.field("key", _arrow_type(kinds.keyType()), nullable=False, metadata=_id(kinds.keyId()))
        value = pa.field(
            "value",
            _arrow_type(kinds.valueType()),
            nullable=kinds.isValueOptional(),
            metadata=_id(kinds.valueId()),
        )
        return pa.map_(key, value)
    raise UnsupportedColumnError(f"no Arrow type for Iceberg type {name}")


def _id(field_id: int) -> dict[bytes, bytes]:
    return {FIELD_ID: str(field_id).encode()}


def arrow_schema(iceberg_schema: Any) -> Any:
    """The Arrow schema of an Iceberg schema (a py4j object), with the field ids."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(f.name(), _arrow_type(f.type()), nullable=f.isOptional(), metadata=_id(f.fieldId()))
            for f in iceberg_schema.columns()
        ]
    )


class SparkAppender:
    """A table appended through Spark only (:attr:`direct` false): on a Spark Connect session
    (the lakehouse's warm engine), where this process has no JVM, the engine writes the
    chunks."""

    direct = False

    def __init__(self, spark: Any, qualified_name: str) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.schema = to_arrow_schema(spark.table(qualified_name).schema)


class IcebergAppender:
    """One Iceberg table, opened through the Spark session's catalog."""

    def __init__(self, spark: Any, qualified_name: str) -> None:
        jvm = spark._jvm
        self._jvm = jvm
        self.table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, qualified_name
        )
        self.schema = arrow_schema(self.table.schema())
        self.direct = self.table.location().startswith("file:") and spark.sparkContext.master.startswith(
            "local"
        )
        self.codec = self.table.properties().get("write.parquet.compression-codec") or "zstd"

    def append(self, data: Any, snapshot_properties: dict[str, str]) -> None:
        """Write `data` (an Arrow table of :attr:`schema`) as one Parquet file of the table and
        commit it, with `snapshot_properties` in the snapshot's summary."""
        import pyarrow.parquet as pq

        iceberg = self._jvm.org.apache.iceberg
        location = self.table.locationProvider().newDataLocation(f"land-{uuid.uuid4().hex}.parquet")
        path = location.removeprefix("file:")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(data, path, compression=self.codec)
        metrics = iceberg.parquet.ParquetUtil.fileMetrics(
            self.table.io().newInputFile(location), iceberg.MetricsConfig.forTable(self.table)
        )
        data_file = (
            iceberg.DataFiles.builder(self.table.spec())
            .withPath(location)
            .withFormat("PARQUET")
            .withFileSizeInBytes(os.path.getsize(path))
            .withMetrics(metrics)
            .build()
        )
        append = self.table.newAppend().appendFile(data_file)
        for name, value in snapshot_properties.items():
            append = append.set(name, value)
        append.commit()
