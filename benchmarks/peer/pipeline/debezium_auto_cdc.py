"""A Spark Declarative Pipeline (Spark 4.3, `pyspark.pipelines`) that does what a Spark user
would write for Debezium messages: read the raw files, parse them with `from_json`, and apply
them with AUTO CDC, SCD type 2, one target table per captured source table.

Loaded by `spark-pipelines run` (see benchmarks/peer_auto_cdc.py, which writes the spec).
`spark` is put into this module's globals by the CLI. The input is `$PEER_INPUT`: the
directory `python -m python_ingest generate --format debezium` writes:

    kcat/<topic>-<partition>[.redump].kcat.jsonl    kcat -C -J dumps: key and value with schema
    jsonl/topics/<topic>/partition=<p>/*.json        S3 sink files: value payloads, no key

Per table topic (`<server>.<db>[.<schema>].<table>`; transaction, schema-change and
logical-message topics are left out), one streaming view parses the messages and one AUTO CDC
flow applies them:

    keys            the message key's columns (kcat: the key schema's fields; S3 sink files
                    carry no key, so the table's primary key as its owner declares it, KEYS)
    sequence_by     the source position: struct(commit_lsn, change_lsn, event_serial_no) for
                    SQL Server, lsn for PostgreSQL, (file, pos, row) for MySQL / MariaDB; the
                    connector's other fields are null, so one struct serves all
    apply_as_deletes  op = 'd'
    row values      `after`, or `before` for a delete, every column as the JSON text of its
                    value (no Debezium type decoding, as in benchmarks/bare_parse.py)

The row columns are read, as a user would write them down, from the first and last message of
each file (kcat: the value schema's fields; S3 sink: the images' names), so a column added
mid-stream is there. Only row changes (op c, u, d, r) are applied: pyspark 4.3.0's
`create_auto_cdc_flow` has no `apply_as_truncates` at all, and tombstones (null values) and
logical messages (op m) are no row changes.

`$PEER_TARGET_FORMAT` (optional) is passed as the target tables' `format`.
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

# What the owner of each table declares as its primary key, for topics whose messages carry no
# key (the S3 sink files): keyed by the table's name.
KEYS = {
    "accounts": ["region", "account_no"],
    "transfers": ["transfer_id"],
    "items": ["item_id"],
    "shipments": ["shipment_id"],
    "orders": ["order_id"],
    "products": ["product_id"],
}

KCAT_RECORD = "struct<topic:string,partition:int,offset:bigint,key:string,payload:string>"
SOURCE = (
    "struct<connector:string,name:string,db:string,schema:string,table:string,ts_ms:bigint,"
    "commit_lsn:string,change_lsn:string,event_serial_no:bigint,lsn:bigint,"
    "file:string,pos:bigint,row:int>"
)


def first_and_last_lines(path: Path) -> list[str]:
    """The first and the last line of a file (a column added mid-stream shows in the last)."""
    with path.open("rb") as handle:
        first = handle.readline()
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 1_000_000))
        tail = handle.read().splitlines()
    return [line.decode("utf-8") for line in (first, tail[-1] if tail else b"") if line.strip()]


def kcat_columns(lines: list[str]) -> tuple[list[str], list[str]]:
    """Key columns (from the key schema) and row columns (from the value schema) of kcat records."""
    keys: list[str] = []
    columns: list[str] = []
    for line in lines:
        record = json.loads(line)
        if record.get("key"):
            key = json.loads(record["key"])
            for field in key.get("schema", {}).get("fields", []):
                if field["field"] not in keys:
                    keys.append(field["field"])
        if record.get("payload"):
            value = json.loads(record["payload"])
            for envelope in value.get("schema", {}).get("fields", []):
                if envelope["field"] in ("before", "after"):
                    for field in envelope.get("fields", []):
                        if field["field"] not in columns:
                            columns.append(field["field"])
    return keys, columns


def payload_columns(lines: list[str]) -> list[str]:
    """Row columns of schemaless value payloads (their `after` / `before` images)."""
    columns: list[str] = []
    for line in lines:
        value = json.loads(line)
        for image in (value.get("after"), value.get("before")):
            for name in image or {}:
                if name not in columns:
                    columns.append(name)
    return columns


def discover() -> dict[str, dict]:
    """Table topics in the input: topic -> {kind, glob, keys, columns}."""
    topics: dict[str, dict] = {}
    for path in sorted((INPUT / "kcat").glob("*.kcat.jsonl")):
        topic = re.sub(r"-\d+(\.[a-z]+)*\.kcat\.jsonl$", "", path.name)
        if topic.count(".") < 2:
            continue
        spec = topics.setdefault(
            topic, {"kind": "kcat", "glob": str(INPUT / "kcat" / f"{topic}-*.kcat.jsonl"), "files": []}
        )
        spec["files"].append(path)
    for directory in sorted((INPUT / "jsonl" / "topics").glob("*")):
        topic = directory.name
        if topic.count(".") < 2:
            continue
        topics[topic] = {
            "kind": "jsonl",
            "glob": str(directory / "partition=*" / "*.json"),
            "files": sorted(directory.glob("partition=*/*.json")),
        }
    for topic, spec in topics.items():
        lines = [line for path in spec.pop("files") for line in first_and_last_lines(path)]
        table = topic.split(".")[-1]
        if spec["kind"] == "kcat":
            keys, columns = kcat_columns(lines)
        else:
            keys, columns = [], payload_columns(lines)
        spec["keys"] = keys or KEYS[table]
        spec["columns"] = columns
    return topics


def target_name(topic: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", topic.lower())


def define(topic: str, spec: dict) -> str:
    """The parse view and the AUTO CDC flow of one table topic; returns the target's name."""
    target = target_name(topic)
    columns = spec["columns"]
    row = "struct<" + ",".join(f"`{c}`:string" for c in columns) + ">"
    payload = f"struct<before:{row},after:{row},op:string,ts_ms:bigint,source:{SOURCE}>"
    key_struct = "struct<" + ",".join(f"`{c}`:string" for c in spec["keys"]) + ">"

    @dp.temporary_view(name=f"{target}_changes")
    def changes():
        lines = spark.readStream.text(spec["glob"])  # noqa: F821 (the CLI's session)
        if spec["kind"] == "kcat":
            record = F.from_json("value", KCAT_RECORD)
            parsed = lines.select(
                F.from_json(F.get_json_object(record.payload, "$.payload"), payload).alias("p"),
                F.from_json(F.get_json_object(record.key, "$.payload"), key_struct).alias("k"),
            )
        else:
            parsed = lines.select(F.from_json("value", payload).alias("p"), F.lit(None).alias("k"))
        parsed = parsed.where(F.col("p.op").isin("c", "u", "d", "r"))
        image = F.when(F.col("p.op") == "d", F.col("p.before")).otherwise(F.col("p.after"))
        source = F.col("p.source")
        keyed = spec["keys"] if spec["kind"] == "kcat" else []
        values = [
            (F.coalesce(F.col(f"k.`{c}`"), image[c]) if c in keyed else image[c]).alias(c) for c in columns
        ]
        return parsed.select(
            *values,
            F.col("p.op").alias("_op"),
            F.struct(
                source.commit_lsn.alias("commit_lsn"),
                source.change_lsn.alias("change_lsn"),
                source.event_serial_no.alias("event_serial_no"),
                source.lsn.alias("lsn"),
                source.file.alias("file"),
                source.pos.alias("pos"),
                source.row.alias("row"),
            ).alias("_position"),
            F.timestamp_millis(source.ts_ms).alias("_commit_ts"),
        )

    return scd2_flow(target, spec["keys"], "_op = 'd'")


TARGETS = [define(topic, spec) for topic, spec in discover().items()]
