"""Spark 4's VARIANT against the JSON functions the models use, on the same messages.

    .venv/bin/python benchmarks/variant_parse.py                  # the bronze tables of $CDC_LAKEHOUSE_DIR
    .venv/bin/python benchmarks/variant_parse.py --generate 20000  # generated messages, no lakehouse needed

For each producer, the fields its staging model needs first (a few envelope fields, a row
image as JSON text) are read from every message three ways:

- `from_json`: one parse into a struct of exactly those fields (what the staging models do);
- `get_json_object`: one parse per field;
- `variant`: `try_parse_json` once into a VARIANT, then `variant_get` per field.

Each way runs over the same cached messages, written to Spark's `noop` sink so that every
expression is evaluated; the best of three runs is reported as messages per second, with its
ratio to `from_json`. One process, the dbt target's Spark settings (python_ingest/profile.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# The fields read per producer: (name, JSON path). Objects come back as JSON text.
FIELDS = {
    "ces": [("type", "$.type"), ("source", "$.source"), ("id", "$.id"), ("operation", "$.operation"),
            ("logicalid", "$.logicalid"), ("data", "$.data")],
    "debezium": [("op", "$.payload.op"), ("table", "$.payload.source.table"),
                 ("lsn", "$.payload.source.lsn"), ("ts_ms", "$.payload.source.ts_ms"),
                 ("before", "$.payload.before"), ("after", "$.payload.after")],
    "dataworks": [("op", "$.payload.op"), ("sequence_id", "$.payload.sequenceId"),
                  ("event_time", "$.payload.timestamp.eventTime"), ("table", "$.schema.source.tableName"),
                  ("before", "$.payload.before.dataColumn"), ("after", "$.payload.after.dataColumn")],
    "qlik": [("magic", "$.magic"), ("type", "$.type"), ("operation", "$.message.headers.operation"),
             ("change_sequence", "$.message.headers.changeSequence"), ("schema_id", "$.message.schemaId"),
             ("data", "$.message.data")],
}  # fmt: skip


def struct_schema(fields: list[tuple[str, str]]) -> str:
    """A DDL struct holding the given paths, every leaf a string."""
    tree: dict = {}
    for _, path in fields:
        node = tree
        parts = path[2:].split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node.setdefault(parts[-1], None)

    def ddl(node: dict) -> str:
        return (
            "struct<" + ",".join(f"`{k}`:{'string' if v is None else ddl(v)}" for k, v in node.items()) + ">"
        )

    return ddl(tree)


def expressions(method: str, fields: list[tuple[str, str]]) -> list[str]:
    if method == "from_json":
        return [f"parsed.{path[2:]} as {name}" for name, path in fields]
    if method == "get_json_object":
        return [f"get_json_object(message_value, '{path}') as {name}" for name, path in fields]
    return [f"variant_get(parsed, '{path}', 'string') as {name}" for name, path in fields]


def generated(spark, per_producer: int):
    """Messages of every producer from the generators, as (source_format, message_value)."""
    import json

    from cdc_tools.generators import ces_traffic, dataworks_traffic, debezium_traffic, qlik_traffic

    def lines(partitions):
        return [
            m if isinstance(m, str) else json.dumps(m, separators=(",", ":")) for p in partitions for m in p
        ]

    messages = {
        "ces": lines(ces_traffic.generate(per_producer // 3, 1, big_every=0).partitions),
        "dataworks": lines(dataworks_traffic.generate(per_producer // 2, 1).partitions),
        "qlik": lines(qlik_traffic.generate(per_producer // 2, 1).partitions),
        "debezium": [
            r["payload"]
            for records in debezium_traffic.generate(per_producer // 3, 1).kcat.values()
            for r in records
            if r.get("payload")
        ],
    }
    rows = [(f, m) for f, values in messages.items() for m in values[:per_producer]]
    return spark.createDataFrame(rows, "source_format string, message_value string")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generate", type=int, metavar="N", help="N generated messages per producer")
    args = parser.parse_args(argv)
    from dbt.adapters.spark_embedded.api import active_session

    from python_ingest.profile import target_spark_parameters

    spark = active_session(target_spark_parameters())
    if args.generate:
        messages = generated(spark, args.generate)
    else:
        tables = {row.tableName for row in spark.sql("show tables in bronze").collect()}
        messages = None
        for producer in FIELDS:
            if f"raw_{producer}" in tables:
                part = spark.sql(
                    f"select '{producer}' as source_format, message_value from bronze.raw_{producer} "
                    "where message_value is not null"
                )
                messages = part if messages is None else messages.unionByName(part)
        if messages is None:
            print("no bronze tables: land messages first, or use --generate N", file=sys.stderr)
            return 2
    messages = messages.cache()
    counts = {
        r.source_format: r.n
        for r in messages.groupBy("source_format").count().withColumnRenamed("count", "n").collect()
    }
    row = "{:<10} {:>9} {:<16} {:>8} {:>11} {:>17}"
    print(row.format("producer", "messages", "method", "seconds", "messages/s", "rate ÷ from_json"))
    for producer, fields in FIELDS.items():
        if not counts.get(producer):
            continue
        rows = messages.where(f"source_format = '{producer}'")
        results: dict[str, float] = {}
        for method in ("from_json", "get_json_object", "variant"):
            if method == "from_json":
                source = rows.selectExpr(f"from_json(message_value, '{struct_schema(fields)}') as parsed")
            elif method == "variant":
                source = rows.selectExpr("try_parse_json(message_value) as parsed")
            else:
                source = rows
            query = source.selectExpr(*expressions(method, fields))
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                query.write.format("noop").mode("overwrite").save()
                best = min(best, time.perf_counter() - started)
            results[method] = best
        for method, seconds in results.items():
            rate = counts[producer] / seconds
            ratio = results["from_json"] / seconds
            cells = (f"{counts[producer]:,}", method, f"{seconds:.2f}", f"{rate:,.0f}", f"{ratio:.2f}")
            print(row.format(producer, *cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
