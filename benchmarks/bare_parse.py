"""The denominator of benchmarks/pipeline.py: the least PySpark work that turns the bronze
messages of all producers into row changes of silver's shape, without dbt.

    .venv/bin/python benchmarks/bare_parse.py            # parse bronze, write bench.parsed_changes
    .venv/bin/python benchmarks/bare_parse.py --noop     # only start Spark and run `select 1`

Runs in its own process with the Spark settings of the dbt target (python_ingest/profile.py),
against `$CDC_LAKEHOUSE_DIR`, the way `land` and `dbt build` start Spark. Per producer it
parses the JSON with `from_json` into (source_format, table_id, operation, sequence,
primary_key, before, after, commit_ts): CES reassembles split events by logicalid and parses
`data` and the row images inside it; Debezium takes the payload (with or without schema) and
the Kafka key; DataWorks takes the row ops (an update pair's before half is not joined to its
after half); Qlik joins data messages to their metadata message for the key columns. Values stay
as sent (no type decoding), and one row is kept per (format, table, sequence, operation, key)
against redeliveries. The result is written to the Iceberg table bench.parsed_changes, which
forces full evaluation. Prints the row count and its own timings.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAP = "map<string,string>"

CES_ENVELOPE = (
    "struct<source:string,id:string,logicalid:string,operation:string,segmentindex:int,"
    "finalsegment:boolean,splitindex:int,splittotalcnt:int,data:string>"
)
CES_DATA = (
    "struct<eventsource:struct<db:string,schema:string,tbl:string,"
    "pkkey:array<struct<columnname:string,value:string>>,"
    "transaction:struct<commitlsn:string,sequencenumber:bigint,committime:string>>,"
    "eventrow:struct<old:string,current:string>>"
)
DEBEZIUM_PAYLOAD = (
    f"struct<before:{MAP},after:{MAP},op:string,ts_ms:bigint,source:struct<db:string,schema:string,"
    "table:string,ts_ms:bigint,commit_lsn:string,change_lsn:string,event_serial_no:bigint,lsn:bigint,"
    "file:string,pos:bigint,row:int>>"
)
DATAWORKS = (
    "struct<schema:struct<primaryKey:array<string>,source:struct<dbType:string,dbName:string,"
    "schemaName:string,tableName:string>>,payload:struct<before:struct<dataColumn:map<string,string>>,"
    "after:struct<dataColumn:map<string,string>>,sequenceId:string,op:string,"
    "timestamp:struct<eventTime:bigint>>>"
)
QLIK_BODY = (
    "struct<schemaId:string,lineage:struct<schema:string,table:string,tableVersion:int>,"
    "tableStructure:struct<tableColumns:map<string,struct<ordinal:int,primaryKeyPosition:int>>>,"
    f"schema:string,table:string,data:{MAP},beforeData:{MAP},headers:struct<operation:string,"
    "changeSequence:string,timestamp:string,externalSchemaId:string>>"
)
QLIK = f"struct<magic:string,type:string,messageSchemaId:string,message:{QLIK_BODY}>"

CHANGE_COLUMNS = (
    "source_format",
    "table_id",
    "operation",
    "sequence",
    "primary_key",
    "before",
    "after",
    "commit_ts",
)


def ces(spark):
    from pyspark.sql import functions as F

    raw = spark.table("bronze.raw_ces").select(F.from_json("message_value", CES_ENVELOPE).alias("m"))
    m = raw.select("m.*").where(F.col("data").isNotNull())
    index = F.coalesce("segmentindex", "splitindex")
    whole = (F.coalesce("finalsegment", F.lit(True)) & (index <= 1)) | (F.col("splittotalcnt") == 1)
    single = m.where(whole).select("logicalid", "operation", "data")
    split = (
        m.where(~whole)
        .groupBy("logicalid")
        .agg(
            F.first("operation").alias("operation"),
            F.array_sort(F.collect_set(F.struct(index.alias("i"), F.col("data").alias("d")))).alias("parts"),
        )
        .select("logicalid", "operation", F.concat_ws("", F.col("parts.d")).alias("data"))
    )
    events = single.unionByName(split).select("operation", F.from_json("data", CES_DATA).alias("e"))
    source = F.col("e.eventsource")
    return events.select(
        F.lit("ces").alias("source_format"),
        F.lower(F.concat_ws(".", source.db, source.schema, source.tbl)).alias("table_id"),
        F.col("operation"),
        F.concat_ws(
            ":", source.transaction.commitlsn, F.lpad(source.transaction.sequencenumber, 20, "0")
        ).alias("sequence"),
        F.map_from_entries(source.pkkey).alias("primary_key"),
        F.from_json("e.eventrow.old", MAP).alias("before"),
        F.from_json("e.eventrow.current", MAP).alias("after"),
        F.to_timestamp(source.transaction.committime).alias("commit_ts"),
    )


def debezium(spark):
    from pyspark.sql import functions as F

    raw = spark.table("bronze.raw_debezium").where(F.col("message_value").isNotNull())
    payload_text = F.coalesce(F.get_json_object("message_value", "$.payload"), F.col("message_value"))
    key_text = F.coalesce(F.get_json_object("message_key", "$.payload"), F.col("message_key"))
    p = raw.select(
        F.from_json(payload_text, DEBEZIUM_PAYLOAD).alias("p"), F.from_json(key_text, MAP).alias("k")
    )
    p = p.where(F.col("p.op").isin("c", "u", "d", "r"))
    source = F.col("p.source")
    sequence = F.concat_ws(
        ":",
        source.commit_lsn,
        source.change_lsn,
        source.event_serial_no,
        F.lpad(source.lsn, 20, "0"),
        source.file,
        F.lpad(source.pos, 12, "0"),
        source.row,
    )
    return p.select(
        F.lit("debezium").alias("source_format"),
        F.lower(F.concat_ws(".", source.db, source.schema, source.table)).alias("table_id"),
        F.col("p.op").alias("operation"),
        sequence.alias("sequence"),
        F.coalesce("k", F.create_map().cast(MAP)).alias("primary_key"),
        F.col("p.before").alias("before"),
        F.col("p.after").alias("after"),
        F.timestamp_millis(source.ts_ms).alias("commit_ts"),
    )


def dataworks(spark):
    from pyspark.sql import functions as F

    raw = spark.table("bronze.raw_dataworks").select(F.from_json("message_value", DATAWORKS).alias("m"))
    m = raw.where(F.col("m.payload.op").isin("INSERT", "UPDATE_AFTER", "DELETE"))
    source, payload = F.col("m.schema.source"), F.col("m.payload")
    image = F.coalesce(payload.after.dataColumn, payload.before.dataColumn)
    row_id = F.when(F.lower(source.dbType) == "oracle", F.lit("rowid")).otherwise(
        F.lit("#alibaba_rds_row_id#")
    )
    keys = F.coalesce(F.col("m.schema.primaryKey"), F.array(row_id))
    return m.select(
        F.lit("dataworks").alias("source_format"),
        F.lower(F.concat_ws(".", source.dbName, source.schemaName, source.tableName)).alias("table_id"),
        payload.op.alias("operation"),
        payload.sequenceId.alias("sequence"),
        F.map_from_arrays(keys, F.transform(keys, lambda k: image[k])).alias("primary_key"),
        payload.before.dataColumn.alias("before"),
        payload.after.dataColumn.alias("after"),
        F.timestamp_millis(payload.timestamp.eventTime).alias("commit_ts"),
    )


def qlik(spark):
    from pyspark.sql import functions as F

    raw = spark.table("bronze.raw_qlik").select(
        F.from_json("message_value", QLIK).alias("e"), "message_value"
    )
    body = F.when(F.col("e.magic") == "atMSG", F.col("e.message")).otherwise(
        F.from_json("message_value", QLIK_BODY)
    )
    m = raw.select(
        F.col("e.type").alias("type"), F.col("e.messageSchemaId").alias("schema_ref"), body.alias("b")
    )
    columns = F.map_entries("b.tableStructure.tableColumns")
    metadata = (
        m.where(F.col("b.schemaId").isNotNull() & F.col("b.tableStructure").isNotNull())
        .select(
            F.col("b.schemaId").alias("schema_id"),
            F.lower(F.concat_ws(".", "b.lineage.schema", "b.lineage.table")).alias("table_id"),
            F.transform(
                F.array_sort(
                    F.transform(
                        F.filter(columns, lambda c: c.value.primaryKeyPosition > 0),
                        lambda c: F.struct(c.value.primaryKeyPosition.alias("p"), c.key.alias("k")),
                    )
                ),
                lambda c: c.k,
            ).alias("keys"),
        )
        .dropDuplicates(["schema_id"])
    )
    data = m.where(F.col("b.headers.operation").isNotNull()).select(
        F.coalesce("schema_ref", "b.headers.externalSchemaId").alias("schema_id"), "b"
    )
    joined = data.join(F.broadcast(metadata), "schema_id")
    head = F.col("b.headers")
    return joined.select(
        F.lit("qlik").alias("source_format"),
        F.col("table_id"),
        head.operation.alias("operation"),
        F.when(head.operation == "REFRESH", F.lit("0"))
        .otherwise(F.concat(F.lit("1:"), head.changeSequence))
        .alias("sequence"),
        F.map_from_arrays("keys", F.transform("keys", lambda k: F.col("b.data")[k])).alias("primary_key"),
        F.col("b.beforeData").alias("before"),
        F.col("b.data").alias("after"),
        F.to_timestamp(F.when(head.timestamp != "", head.timestamp)).alias("commit_ts"),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noop", action="store_true", help="only start Spark and run `select 1`")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    from dbt.adapters.spark_embedded.api import active_session

    from python_ingest.profile import target_spark_parameters

    spark = active_session(target_spark_parameters())
    spark.sql("select 1").collect()
    ready = time.perf_counter()
    if args.noop:
        print(f"spark started in {ready - started:.1f}s")
        return 0
    from pyspark.sql import functions as F

    tables = {row.tableName for row in spark.sql("show tables in bronze").collect()}
    parts = [
        parse(spark).select(*CHANGE_COLUMNS)
        for name, parse in (
            ("raw_ces", ces),
            ("raw_debezium", debezium),
            ("raw_dataworks", dataworks),
            ("raw_qlik", qlik),
        )
        if name in tables
    ]
    changes = parts[0]
    for part in parts[1:]:
        changes = changes.unionByName(part)
    key = F.to_json(F.array_sort(F.map_entries("primary_key")))
    changes = (
        changes.withColumn("key_json", key)
        .dropDuplicates(["source_format", "table_id", "sequence", "operation", "key_json"])
        .drop("key_json")
    )
    spark.sql("create database if not exists bench")
    changes.writeTo("bench.parsed_changes").using("iceberg").createOrReplace()
    rows = spark.table("bench.parsed_changes").count()
    done = time.perf_counter()
    print(f"spark started in {ready - started:.1f}s; parsed {rows} change(s) in {done - ready:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
