"""A Spark Declarative Pipeline (Spark 4.3, `pyspark.pipelines`) that does what a Spark user
would write for SQL Server Change Event Streaming (CES) CloudEvents JSON (docs/producers/ces.md):
read the raw files, parse the envelope, its `data` string and the row images in it with
`from_json`, and apply them with AUTO CDC, SCD type 2, one target table per source table.

Loaded by `spark-pipelines run` (see benchmarks/peer_auto_cdc.py, `--producer ces`). `spark` is
put into this module's globals by the CLI. The input is `$PEER_INPUT`: the directory
`python -m python_ingest generate --format ces` writes, `partition-<n>[.more].jsonl` (one
CloudEvent a line, the tables mixed, round-robin over the partitions).

Per table (`eventsource` `db`.`schema`.`tbl`), one streaming view parses every message file and
keeps that table's events, and one AUTO CDC flow applies them:

    keys            the columns of `eventsource.pkkey`
    sequence_by     struct(transaction.commitlsn, transaction.sequencenumber): the commit LSN is
                    fixed-width hex, so it sorts as text; a redelivered copy has the same
    apply_as_deletes  operation = 'DEL'
    row values      `eventrow.current` (a JSON string inside the `data` string), or
                    `eventrow.old` for a delete; every column as the string CES sent (no
                    decoding by the SQL Server type: datetime2's seventh digit, bit as 1 / 0 and
                    binary as 0x-hex stay as sent)

The tables, their keys and columns are read, as a user would write them down, from the
messages themselves (`eventsource.cols` and `pkkey`, a scan of the files before the flows are
defined).

What it leaves out, and why:
- split events: an event larger than the message size comes as several messages sharing a
  `logicalid`, each holding a piece of the `data` string; no piece parses, so `from_json` gives
  null and the event is lost. Joining them needs state across messages and micro-batches, in
  the view that feeds AUTO CDC: more than a user writes for it;
- updates sent with `old` "{}" or with only the changed columns ("include all columns" off):
  AUTO CDC writes the image it is given (the generated traffic has whole images).
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
ENVELOPE = "struct<operation:string,time:string,data:string>"


def discover() -> dict[tuple[str, str, str], dict]:
    """Tables in the input: (db, schema, tbl) -> {keys, columns} (in the order first seen). A
    message whose `data` does not parse alone (a segment of a split event) is skipped."""
    tables: dict[tuple[str, str, str], dict] = {}
    for path in sorted(INPUT.glob("partition-*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    source = json.loads(json.loads(line)["data"])["eventsource"]
                except (ValueError, KeyError, TypeError):
                    continue
                spec = tables.setdefault(
                    (source["db"], source["schema"], source["tbl"]), {"keys": [], "columns": {}}
                )
                for key in source.get("pkkey") or []:
                    if key["columnname"] not in spec["keys"]:
                        spec["keys"].append(key["columnname"])
                spec["columns"].update(dict.fromkeys(c["name"] for c in source.get("cols") or []))
    return {name: {"keys": s["keys"], "columns": list(s["columns"])} for name, s in tables.items()}


def target_name(db: str, schema: str, tbl: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", f"{db}.{schema}.{tbl}".lower())


def define(db: str, schema: str, tbl: str, spec: dict) -> str:
    """The parse view and the AUTO CDC flow of one table; returns the target's name."""
    target = target_name(db, schema, tbl)
    columns = spec["columns"]
    row = "struct<" + ",".join(f"`{c}`:string" for c in columns) + ">"
    data = (
        "struct<eventsource:struct<db:string,schema:string,tbl:string,"
        "transaction:struct<commitlsn:string,sequencenumber:bigint,committime:string>>,"
        "eventrow:struct<old:string,current:string>>"
    )

    @dp.temporary_view(name=f"{target}_changes")
    def changes():
        lines = spark.readStream.text(FILES)  # noqa: F821 (the CLI's session)
        envelope = lines.select(F.from_json("value", ENVELOPE).alias("e"))
        parsed = envelope.select("e.operation", F.from_json("e.data", data).alias("d"))
        source = F.col("d.eventsource")
        parsed = parsed.where(
            (source.db == db)
            & (source.schema == schema)
            & (source.tbl == tbl)
            & F.col("operation").isin("INS", "UPD", "DEL")
        )
        image = F.when(F.col("operation") == "DEL", F.col("d.eventrow.old")).otherwise(
            F.col("d.eventrow.current")
        )
        values = F.from_json(image, row)
        return parsed.select(
            *(values[c].alias(c) for c in columns),
            F.col("operation").alias("_op"),
            F.struct(
                source.transaction.commitlsn.alias("commitlsn"),
                source.transaction.sequencenumber.alias("sequencenumber"),
            ).alias("_position"),
            F.to_timestamp(source.transaction.committime).alias("_commit_ts"),
        )

    return scd2_flow(target, spec["keys"], "_op = 'DEL'")


TARGETS = [define(db, schema, tbl, spec) for (db, schema, tbl), spec in discover().items()]
