"""A Spark Declarative Pipeline (Spark 4.3, `pyspark.pipelines`) that does what a Spark user
would write for Alibaba Cloud DataWorks' "sync whole database to Kafka" messages
(docs/producers/dataworks.md): read the raw files, parse them with `from_json`, and apply them
with AUTO CDC, SCD type 2, one target table per source table.

Loaded by `spark-pipelines run` (see benchmarks/peer_auto_cdc.py, `--producer dataworks`).
`spark` is put into this module's globals by the CLI. The input is `$PEER_INPUT`: the directory
`python -m python_ingest generate --format dataworks` writes, `partition-<n>[.more].jsonl` (one
message a line, the tables mixed).

Per table (`schema.source`'s dbName, schemaName, tableName), one streaming view parses every
message file and keeps that table's INSERT, UPDATE_AFTER and DELETE records, and one AUTO CDC
flow applies them:

    keys            `schema.primaryKey`; for a table without one, the column DataWorks adds to
                    identify its rows (MySQL `#alibaba_rds_row_id#`, Oracle `rowid`), as its
                    documentation says to use it
    sequence_by     `payload.sequenceId` as a number: 19 digits that grow in the order the sync
                    task read the changes
    apply_as_deletes  op = 'DELETE'
    row values      `after.dataColumn` (`before.dataColumn` for a DELETE), every column as the
                    text `from_json` gives a string field: a JSON number's digits (a DATE's
                    epoch milliseconds, a DOUBLE as Spark prints a double), a boolean's
                    `true` / `false`, BYTES' base64 as sent

An update sent as two records (UPDATE_BEFOR with the old image, UPDATE_AFTER with the new, one
sequenceId) and one sent as one UPDATE_AFTER with both images are both applied from the
UPDATE_AFTER's `after`, so the halves never need pairing. The tables, their keys and columns
are read, as a user would write them down, from the messages themselves (a scan of the files
before the flows are defined), so the column an ALTER TABLE ... ADD brought mid-stream is there.

What it leaves out, and why:
- TRUNCATE: a DDL record with no rows; pyspark 4.3.0's `create_auto_cdc_flow` has no
  `apply_as_truncates` (and it is for SCD type 1 only); the truncated rows stay open. Other DDL
  (CREATE, ALTER, RENAME), transaction markers and heartbeats are not read either;
- key changes: an UPDATE_AFTER whose key differs from its `before` is applied as an update of
  the new key, the old key left open (no traffic of the generator changes a key);
- redelivery: a copy keeps its record's sequenceId; AUTO CDC is given both.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from pyspark import pipelines as dp
from pyspark.sql import functions as F
from scd2 import scd2_flow

INPUT = Path(os.environ["PEER_INPUT"])
FILES = str(INPUT / "partition-*.jsonl")
ROW_OPS = ("INSERT", "UPDATE_AFTER", "DELETE")
ROW_ID = {"mysql": "#alibaba_rds_row_id#", "oracle": "rowid"}  # DataWorks' row identifiers


def table_id(source: dict) -> str:
    """The table's name as the project's gold names it: the non-empty parts, lower case."""
    parts = (source.get("dbName"), source.get("schemaName"), source.get("tableName"))
    return ".".join(p for p in parts if p).lower()


def discover() -> dict[str, dict]:
    """Tables with row records in the input: table_id -> {source, keys, columns} (in the order
    first seen)."""
    tables: dict[str, dict] = {}
    for path in sorted(INPUT.glob("partition-*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                message = json.loads(line)
                schema, payload = message.get("schema") or {}, message.get("payload") or {}
                source = schema.get("source") or {}
                if payload.get("op") not in ROW_OPS or not source.get("tableName"):
                    continue
                spec = tables.setdefault(table_id(source), {"source": source, "keys": [], "columns": {}})
                keys = schema.get("primaryKey") or [ROW_ID.get(str(source.get("dbType")).lower(), "rowid")]
                for key in keys:
                    if key not in spec["keys"]:
                        spec["keys"].append(key)
                spec["columns"].update(dict.fromkeys(c["name"] for c in schema.get("dataColumn") or []))
    return {name: {**s, "columns": list(s["columns"])} for name, s in tables.items()}


def target_name(name: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", name)


def define(name: str, spec: dict) -> str:
    """The parse view and the AUTO CDC flow of one table; returns the target's name."""
    target = target_name(name)
    columns, source = spec["columns"], spec["source"]
    image = "struct<dataColumn:struct<" + ",".join(f"`{c}`:string" for c in columns) + ">>"
    schema = (
        "struct<schema:struct<source:struct<dbName:string,schemaName:string,tableName:string>>,"
        f"payload:struct<before:{image},after:{image},sequenceId:string,op:string,"
        "timestamp:struct<eventTime:bigint>>>"
    )

    @dp.temporary_view(name=f"{target}_changes")
    def changes():
        lines = spark.readStream.text(FILES)  # noqa: F821 (the CLI's session)
        m = lines.select(F.from_json("value", schema).alias("m")).select("m.*")
        mine = (
            F.col("schema.source.dbName").eqNullSafe(source.get("dbName"))
            & F.col("schema.source.schemaName").eqNullSafe(source.get("schemaName"))
            & F.col("schema.source.tableName").eqNullSafe(source.get("tableName"))
        )
        rows = m.where(mine & F.col("payload.op").isin(*ROW_OPS))
        row = F.when(F.col("payload.op") == "DELETE", F.col("payload.before.dataColumn")).otherwise(
            F.col("payload.after.dataColumn")
        )
        return rows.select(
            *(row[c].alias(c) for c in columns),
            F.col("payload.op").alias("_op"),
            F.col("payload.sequenceId").cast("decimal(20,0)").alias("_position"),
            F.timestamp_millis(F.col("payload.timestamp.eventTime")).alias("_commit_ts"),
        )

    return scd2_flow(target, spec["keys"], "_op = 'DELETE'")


TARGETS = [define(name, spec) for name, spec in discover().items()]
