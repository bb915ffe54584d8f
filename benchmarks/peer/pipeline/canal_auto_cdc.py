"""A Spark Declarative Pipeline (Spark 4.3, `pyspark.pipelines`) that does what a Spark user
would write for Alibaba Canal's flat JSON messages (docs/producers/canal.md): read the raw files,
parse them with `from_json`, one row per entry of `data`, and apply them with AUTO CDC, SCD
type 2, one target table per source table.

Loaded by `spark-pipelines run` (see benchmarks/peer_auto_cdc.py, `--producer canal`). `spark`
is put into this module's globals by the CLI. The input is `$PEER_INPUT`: the directory
`python -m python_ingest generate --format canal` writes, `partition-<n>[.more].jsonl` (one
flat message a line, the tables mixed).

Per table (`database`.`table`), one streaming view parses every message file, keeps that
table's INSERT, UPDATE and DELETE messages and explodes `data` with each entry's index, and one
AUTO CDC flow applies them:

    keys            the message's `pkNames`
    sequence_by     struct(es, ts, row index): a flat message holds no binlog position. `es`
                    (the binlog event's time) has whole seconds, so the changes of one
                    transaction tie on it; `ts` (when Canal handled the message) breaks the tie,
                    and the entry's index in `data` orders the rows of one message
    apply_as_deletes  type = 'DELETE'
    row values      the `data` entry, every column as the string Canal sent (bytes stay one
                    character per byte, as sent)

The tables, their keys and columns are read, as a user would write them down, from the
messages themselves (`pkNames` and `mysqlType`, a scan of the files before the flows are
defined), so the column an `ALTER TABLE ... ADD COLUMN` brought mid-stream is there.

What it leaves out, and why:
- tables without a primary key (`pkNames` null): AUTO CDC needs keys, and these rows cannot be
  told apart; no flow (the project quarantines them too);
- TRUNCATE: a DDL message (`isDdl` true), no rows; pyspark 4.3.0's `create_auto_cdc_flow` has no
  `apply_as_truncates`; the truncated rows stay open. Other DDL is not read either;
- partial images (binlog_row_image=NOBLOB): an UPDATE leaves an unchanged TEXT / BLOB column out
  of `data`; AUTO CDC writes the image it is given, so that version has it null;
- key changes: an UPDATE whose key differs from its `old` one is applied as an update of the new
  key; the old key is never closed (splitting it needs `old` laid over `data` and a second
  emitted row, more than a user writes for AUTO CDC);
- redelivery: a copy Canal sends again is handled again, with a later `ts`: it sequences after
  the first copy, and after any change of the key that came between the two; `es` alone would
  tie the changes of one transaction instead. No choice of these fields is right for both;
- `old`, `sqlType`, `id` and `gtid` are not read; `es` is kept as `_commit_ts`.
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


def discover() -> dict[tuple[str, str], dict]:
    """Keyed tables in the input: (database, table) -> {keys, columns} (in the order first seen)."""
    tables: dict[tuple[str, str], dict] = {}
    for path in sorted(INPUT.glob("partition-*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                message = json.loads(line)
                if message.get("isDdl") or not message.get("pkNames"):
                    continue
                spec = tables.setdefault((message["database"], message["table"]), {"keys": [], "columns": {}})
                for key in message["pkNames"]:
                    if key not in spec["keys"]:
                        spec["keys"].append(key)
                spec["columns"].update(dict.fromkeys(message.get("mysqlType") or {}))
    return {name: {"keys": s["keys"], "columns": list(s["columns"])} for name, s in tables.items()}


def target_name(database: str, table: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", f"{database}.{table}".lower())


def define(database: str, table: str, spec: dict) -> str:
    """The parse view and the AUTO CDC flow of one table; returns the target's name."""
    target = target_name(database, table)
    columns = spec["columns"]
    row = "struct<" + ",".join(f"`{c}`:string" for c in columns) + ">"
    schema = (
        "struct<database:string,table:string,type:string,isDdl:boolean,es:bigint,ts:bigint,"
        f"data:array<{row}>>"
    )

    @dp.temporary_view(name=f"{target}_changes")
    def changes():
        lines = spark.readStream.text(FILES)  # noqa: F821 (the CLI's session)
        parsed = lines.select(F.from_json("value", schema).alias("m"))
        parsed = parsed.where(
            (F.col("m.database") == database)
            & (F.col("m.table") == table)
            & F.col("m.type").isin("INSERT", "UPDATE", "DELETE")
        )
        rows = parsed.select("m", F.posexplode("m.data").alias("row_index", "r"))
        return rows.select(
            *(F.col("r")[c].alias(c) for c in columns),
            F.col("m.type").alias("_op"),
            F.struct(
                F.col("m.es").alias("es"),
                F.col("m.ts").alias("ts"),
                # posexplode's index is never null; AUTO CDC's SCD type 2 cannot cast a sequence
                # struct with a non-nullable field to its own, so the index is made nullable.
                F.when(F.col("row_index") >= 0, F.col("row_index")).alias("row_index"),
            ).alias("_position"),
            F.timestamp_millis(F.col("m.es")).alias("_commit_ts"),
        )

    return scd2_flow(target, spec["keys"], "_op = 'DELETE'")


TARGETS = [define(database, table, spec) for (database, table), spec in discover().items()]
