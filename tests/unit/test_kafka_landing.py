"""Landing from Kafka without a broker: settings, offset planning, chunking, and the bronze
columns the Kafka source's rows become (the same as the kcat container gives a record)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cdc_cli import build_parser, main
from python_ingest.containers import read_kcat
from python_ingest.kafka import (
    KafkaSource,
    PartitionRange,
    TopicView,
    bronze_select,
    chunks,
    plan_ranges,
    read_settings,
)
from python_ingest.landing import LandingError
from tests.helpers.tables import BRONZE_COLUMNS


def test_settings_come_from_files_then_options(tmp_path: Path) -> None:
    config = tmp_path / "eventhubs.properties"
    config.write_text(
        "# Event Hubs' Kafka endpoint\nsecurity.protocol=SASL_SSL\nsasl.mechanism = PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="$ConnectionString" password="Endpoint=sb://x/;SharedAccessKey=a=b";\n\n',
        encoding="utf-8",
    )
    settings = read_settings(["sasl.mechanism=SCRAM-SHA-512"], [config])
    assert settings["security.protocol"] == "SASL_SSL"
    assert settings["sasl.mechanism"] == "SCRAM-SHA-512"  # the command line wins
    assert settings["sasl.jaas.config"].endswith('SharedAccessKey=a=b";')  # only the first = splits
    with pytest.raises(LandingError, match="not a name=value"):
        read_settings(["security.protocol"], [])
    with pytest.raises(LandingError, match="--kafka HOST:PORT"):
        read_settings(["bootstrap.servers=elsewhere:9092"], [])
    with pytest.raises(LandingError, match="cannot read the Kafka settings file"):
        read_settings([], [tmp_path / "missing.properties"])


def test_topics_named_and_matching() -> None:
    source = KafkaSource("b:9092", ("b.x",), {}, r"pg\..*")
    assert source.chosen(["pg.public.b", "__consumer_offsets", "pg.public.a", "pgx", "b.x"]) == [
        "b.x",
        "pg.public.a",
        "pg.public.b",
    ]
    assert source.describe() == r"b.x, topics matching pg\..*"
    assert KafkaSource("b:9092", ("t",)).chosen([]) == ["t"]  # named topics need not be listed


def view(topic_id: str, **partitions: tuple[int, int]) -> TopicView:
    return TopicView(
        topic_id,
        {int(p[1:]): first for p, (first, _) in partitions.items()},
        {int(p[1:]): end for p, (_, end) in partitions.items()},
    )


def test_plan_lands_what_is_new_and_refuses_a_recreated_topic() -> None:
    views = {"orders": view("id-1", p0=(0, 10), p1=(0, 4), p2=(0, 0))}
    ranges, warnings = plan_ranges(views, {"orders#0": 6}, {"orders": "id-1"}, "b:9092")
    assert ranges == [PartitionRange("orders", 0, 6, 10), PartitionRange("orders", 1, 0, 4)] and not warnings
    # Records removed by retention before they were landed: said, and landing goes on.
    ranges, warnings = plan_ranges({"orders": view("id-1", p0=(8, 10))}, {"orders#0": 6}, {}, "b:9092")
    assert ranges == [PartitionRange("orders", 0, 8, 10)]
    assert warnings == [
        "topic orders partition 0: offsets 6..7 were removed by the broker (retention) before they were "
        "landed"
    ]
    for views, landed in (
        ({"orders": view("id-2", p0=(0, 10))}, {"orders#0": 6}),  # a new topic id
        ({"orders": view("id-1", p0=(0, 3))}, {"orders#0": 6}),  # offsets went back
    ):
        with pytest.raises(LandingError) as refused:
            plan_ranges(views, landed, {"orders": "id-1"}, "b:9092")
        assert "re-created" in str(refused.value) and "\n" not in str(refused.value)


def test_chunks_hold_at_most_the_chunk_size() -> None:
    ranges = [PartitionRange("t", 0, 0, 7), PartitionRange("t", 1, 3, 5)]
    cut = list(chunks(ranges, 3))
    assert [[(p.partition, p.start, p.end) for p in chunk] for chunk in cut] == [
        [(0, 0, 3)],
        [(0, 3, 6)],
        [(0, 6, 7), (1, 3, 5)],
    ]
    assert list(chunks([], 3)) == []


def test_land_options_fit_together(capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        ("--kafka", "h:1", "--container", "jsonl", "--topic", "t"): "not --container, --source or paths",
        ("--kafka", "h:1"): "needs at least one --topic",
        ("--kafka", "h:1", "--topic-pattern", "("): "is not a regular expression",
        ("--topic", "t", "--container", "jsonl", "x"): "go with --kafka",
        ("--container", "jsonl"): "give --format, --container and at least one PATH",
        ("--container", "jsonl", "x", "--watch", "--interval", "0"): "--interval must be more than 0",
    }
    for options, said in cases.items():
        assert main(["land", "--format", "debezium", *options]) == 2
        assert said in capsys.readouterr().err
    assert main(["land", "--format", "auto", "--kafka", "h:1", "--topic", "t"]) == 2
    args = build_parser().parse_args(
        ["land", "--format", "qlik", "--kafka", "h:1", "--topic", "a", "--topic", "b"]
    )
    assert args.topic == ["a", "b"] and not args.watch


KAFKA_ROWS_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, "
    "timestampType int, headers array<struct<key: string, value: binary>>"
)


@pytest.mark.spark
def test_a_record_lands_as_the_kcat_container_lands_it(spark, tmp_path: Path) -> None:
    """The Kafka source's rows, through `bronze_select`, against the same records written as a
    kcat -J dump and read by the kcat container: every bronze column but the landing's own."""
    when = datetime(2026, 11, 25, 6, 30, 15, 123000, tzinfo=UTC)
    records = [  # key, value, partition, offset, timestamp type, headers
        (b"k1", b'{"op":"c"}', 0, 0, 0, [("trace", b"a"), ("trace", b"b"), ("empty", None)]),
        (None, None, 1, 41, 1, None),  # a tombstone, no key, no headers
        (b"\xff", b"\xff\xfe bad", 1, 42, -1, []),  # neither is UTF-8; no timestamp
        (b"k", b"a" + "é".encode() * 8, 2, 7, 0, None),  # over the size limit: cut mid-character
    ]
    rows = [
        (
            key,
            value,
            "pg.public.orders",
            p,
            o,
            when.replace(tzinfo=None),
            t,
            [(n, v) for n, v in hs] if hs is not None else None,
        )
        for key, value, p, o, t, hs in records
    ]
    spark.conf.set("spark.sql.mapKeyDedupPolicy", "LAST_WIN")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    frame = spark.createDataFrame(rows, KAFKA_ROWS_SCHEMA)
    frame = frame.selectExpr("*", "timestamp'2026-01-01 00:00:00' as _ingested_at", "'b' as _ingest_batch_id")
    select = bronze_select(10, list(BRONZE_COLUMNS))
    landed = {r["source_offset"]: r.asDict() for r in frame.selectExpr(*select).collect()}

    dump = tmp_path / "dump.kcat"
    with dump.open("w", encoding="utf-8") as out:
        for key, value, p, o, t, hs in records:
            envelope = {
                "topic": "pg.public.orders",
                "partition": p,
                "offset": o,
                "tstype": {0: "create", 1: "logappend", -1: "none"}[t],
                "ts": int(when.timestamp() * 1000),
                "broker": 1,
                "headers": None
                if hs is None
                else [x for n, v in hs for x in (n, None if v is None else v.decode())],
                "key": None if key is None else key.decode("utf-8", "surrogateescape"),
                "payload": None if value is None else value.decode("utf-8", "surrogateescape"),
            }
            out.write(json.dumps(envelope) + "\n")
    kcat = {m.source_offset: m for m in read_kcat(dump)}
    for offset, message in kcat.items():
        row = landed[offset]
        assert row["message_id"] == message.message_id
        assert (row["source_uri"], row["source_partition"]) == (message.source_uri, message.source_partition)
        assert row["enqueued_at"] == (
            None if message.enqueued_at is None else message.enqueued_at.replace(tzinfo=None)
        )
    # What kcat -J cannot carry as bytes (not UTF-8) lands as base64 from the topic.
    assert landed[0]["headers"] == {"trace": "b", "empty": ""}
    assert landed[0]["message_value"] == '{"op":"c"}' and landed[0]["message_key"] == "k1"
    assert landed[41]["message_value"] is None and landed[41]["headers"] is None
    assert landed[42]["message_key"] == "/w==" and landed[42]["message_value"] == "//4gYmFk"
    assert landed[42]["headers"] == {"x-cdc-encoding": "base64"}
    cut = landed[7]
    assert cut["headers"]["x-cdc-encoding"] == "base64"  # ten bytes end inside a character
    assert "is 17 bytes, over the limit of 10" in cut["headers"]["x-cdc-ingest-error"]
