"""One row per landing batch and producer format: what the batch brought.

A dbt Python model because the JSON check must be strict: Spark's JSON
functions are lenient (single quotes, unquoted field names, NaN and trailing
garbage are accepted), while Python's json module accepts only RFC 8259
JSON, which is what every producer promises to send. Counting messages
that are not a JSON object here shows a bad feed at the batch level, before
silver quarantines the messages one by one.

Incremental: the batches that got messages staged since the last run are
profiled again from all their messages and merged, so a batch that was
still landing when dbt last ran is completed on the next run. Only messages
landed since the earliest of those batches began are read.
"""

from __future__ import annotations

import json

from pyspark.sql import functions as F
from pyspark.sql import types as T

ENCODING_HEADER = "x-cdc-encoding"
INGEST_ERROR_HEADER = "x-cdc-ingest-error"


def is_json_object(text: str | None) -> bool:
    """Whether `text` is strict JSON whose top level is an object (one nested deeper than
    Python's parser goes, or with a number of more than 4,300 digits, counts as not)."""
    if text is None:
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def model(dbt, session):
    dbt.config(
        # dbt makes a Python model a table unless its own config says otherwise; the
        # strategy (merge) and on_schema_change (fail) come from dbt_project.yml.
        materialized="incremental",
        unique_key=["source_format", "ingest_batch_id"],
        submission_method="session",
        tags=["python"],  # runs in a Spark session: `dbt build --target thrift --exclude tag:python`
    )
    messages = dbt.ref("stg_bronze__messages")

    if dbt.is_incremental:
        held = session.table(str(dbt.this))
        newest = held.agg(F.max("staged_at")).first()[0]
        if newest is not None:
            batch = ["source_format", "ingest_batch_id"]
            touched = (
                messages.where(F.col("staged_at") > F.lit(newest))
                .groupBy(*batch)
                .agg(F.min("ingested_at").alias("new_since"))
            )
            # A touched batch's first message: among its new messages or, for a batch
            # profiled before, the profile's ingested_at. As a literal bound it lets
            # Iceberg skip the data files of older batches instead of reading every
            # staged message (with its text) to find the touched batches' ones.
            earliest = (
                touched.join(held.select(*batch, F.col("ingested_at").alias("held_since")), batch, "left")
                .agg(F.min(F.least("new_since", "held_since")).cast("string"))
                .first()[0]
            )
            since = F.lit(earliest).cast("timestamp")  # as text: no Python time-zone round trip
            messages = messages.where(F.col("ingested_at") >= since).join(
                touched.select(*batch), batch, "left_semi"
            )

    json_object = F.udf(is_json_object, T.BooleanType())
    flag = lambda condition: F.sum(F.when(condition, 1).otherwise(0)).cast("bigint")  # noqa: E731

    return (
        messages.groupBy("source_format", "ingest_batch_id")
        .agg(
            F.min("ingested_at").alias("ingested_at"),
            F.count(F.lit(1)).alias("messages"),
            flag(F.col("message_value").isNull()).alias("tombstones"),
            flag(F.col("headers")[ENCODING_HEADER].isNotNull()).alias("not_utf8"),
            flag(F.col("headers")[INGEST_ERROR_HEADER].isNotNull()).alias("malformed_container"),
            flag(
                F.col("message_value").isNotNull()
                & F.col("headers")[ENCODING_HEADER].isNull()
                & ~json_object(F.col("message_value"))
            ).alias("not_json_object"),
            F.countDistinct("source_uri").alias("sources"),
            F.min("enqueued_at").alias("first_enqueued_at"),
            F.max("enqueued_at").alias("last_enqueued_at"),
        )
        .withColumn("staged_at", F.current_timestamp())
    )
