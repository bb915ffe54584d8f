"""A Spark Declarative Pipeline (Spark 4.3, `pyspark.pipelines`) that does what a Spark user
would write for Oracle GoldenGate's JSON operation messages (docs/producers/goldengate.md): read
the raw files, parse them with `from_json`, and apply them with AUTO CDC, SCD type 2, one target
table per source table.

Loaded by `spark-pipelines run` (see benchmarks/peer_auto_cdc.py, `--producer goldengate`).
`spark` is put into this module's globals by the CLI. The input is `$PEER_INPUT`: the directory
`python -m python_ingest generate --format goldengate` writes, `partition-<n>[.more].jsonl` (one
operation a line, every table mixed) and `schema-topic.jsonl` (JSON schema documents, not read:
they carry no key).

Per table (`table`, e.g. `ORCLPDB1.SALES.CUSTOMERS`), one streaming view parses every message
file and keeps that table's row operations, and one AUTO CDC flow applies them:

    keys            the message's `primary_keys`; for a table without a key (`primary_keys`
                    absent) every column of the row, as GoldenGate's own docs advise
    sequence_by     `pos` (the trail file's sequence number and offset, 20 digits: it sorts as
                    text); redelivered copies carry the same `pos`
    apply_as_deletes  op_type = 'D'
    row values      `after`, or `before` for a delete; every column as the JSON text of its value
                    (numbers as sent, no types: the JSON carries none)

The tables, their keys and columns are read, as a user would write them down, from the
messages themselves (a scan of the files before the flows are defined), so the column an
`ALTER TABLE ... ADD` brought mid-stream is there.

What it leaves out, and why:
- truncates (`op_type` 'T'): pyspark 4.3.0's `create_auto_cdc_flow` has no
  `apply_as_truncates`, and a truncate names no key; the truncated rows stay open;
- compressed updates: an update's `after` holds only the key and the changed columns; AUTO CDC
  writes the image it is given, so the unchanged columns of that version are null (a user
  would need the previous version, which a flow cannot read);
- primary-key updates: an update whose `before` key differs from its `after` key is applied as
  an update of the new key; the old key is never closed (splitting it into a delete and an
  insert needs the old key's whole row, see the previous point);
- `op_ts` is kept as `_commit_ts`, `tokens` and `current_ts` are not read.
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


def discover() -> dict[str, dict]:
    """Tables in the input: name -> {keys, columns} (columns in the order first seen)."""
    tables: dict[str, dict] = {}
    for path in sorted(INPUT.glob("partition-*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                message = json.loads(line)
                if "op_type" not in message:
                    continue
                spec = tables.setdefault(message["table"], {"keys": [], "columns": {}})
                for key in message.get("primary_keys") or []:
                    if key not in spec["keys"]:
                        spec["keys"].append(key)
                for image in (message.get("before"), message.get("after")):
                    spec["columns"].update(dict.fromkeys(image or {}))
    return {name: {"keys": s["keys"], "columns": list(s["columns"])} for name, s in tables.items()}


def target_name(table: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", table.lower())


def define(table: str, spec: dict) -> str:
    """The parse view and the AUTO CDC flow of one table; returns the target's name."""
    target = target_name(table)
    columns = spec["columns"]
    row = "struct<" + ",".join(f"`{c}`:string" for c in columns) + ">"
    schema = f"struct<table:string,op_type:string,op_ts:string,pos:string,before:{row},after:{row}>"

    @dp.temporary_view(name=f"{target}_changes")
    def changes():
        lines = spark.readStream.text(FILES)  # noqa: F821 (the CLI's session)
        parsed = lines.select(F.from_json("value", schema).alias("m"))
        parsed = parsed.where((F.col("m.table") == table) & F.col("m.op_type").isin("I", "U", "D"))
        image = F.when(F.col("m.op_type") == "D", F.col("m.before")).otherwise(F.col("m.after"))
        return parsed.select(
            *(image[c].alias(c) for c in columns),
            F.col("m.op_type").alias("_op"),
            F.col("m.pos").alias("_position"),
            F.to_timestamp("m.op_ts", "yyyy-MM-dd HH:mm:ss.SSSSSS").alias("_commit_ts"),
        )

    return scd2_flow(target, spec["keys"] or columns, "_op = 'D'")


TARGETS = [define(table, spec) for table, spec in discover().items()]
