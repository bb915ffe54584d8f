"""Land Kafka topics straight into a bronze table (``land --kafka HOST:PORT --topic T``).

Each run asks the broker for every partition's first and next offset, then reads the
offset ranges not landed yet with Spark's Kafka source (a batch read, the
`spark-sql-kafka-0-10` jar by coordinate) in chunks of at most ``--chunk-size`` records.
A chunk is appended to the bronze table and the partitions' next offsets move with it in
the table's checkpoint, in the same two phases as a file's chunks
(:mod:`python_ingest.checkpoints`): a run killed at any point lands each record exactly
once when it runs again.

A record lands as the `kcat` container lands the same record (:mod:`python_ingest.containers`):
`source_uri` ``kafka:<topic>``, its partition and offset, the same `message_id`; key and
value as UTF-8 text, or base64 when they are not UTF-8 (value: header ``x-cdc-encoding``);
headers as a map (a repeated name keeps its last value); the broker's timestamp.

A topic whose id changed, or whose next offset is below the landed one, was deleted and
re-created: its offsets count again from 0, so its records would take the message ids of
the old topic's. Landing refuses it with one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from python_ingest.checkpoints import partition_key
from python_ingest.containers import ENCODING_HEADER, INGEST_ERROR_HEADER
from python_ingest.landing import Lander, LandingError

ADMIN_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class KafkaSource:
    """Where to read: the broker, the topics, and the client settings (security and the like)
    passed to every Kafka client as they are."""

    bootstrap: str
    topics: tuple[str, ...]
    settings: Mapping[str, str] = field(default_factory=dict)
    pattern: str | None = None  # also every topic whose whole name matches (Python `re`)

    def client_settings(self) -> dict[str, str]:
        return {**self.settings, "bootstrap.servers": self.bootstrap}

    def describe(self) -> str:
        named = list(self.topics) + ([f"topics matching {self.pattern}"] if self.pattern else [])
        return ", ".join(named)

    def chosen(self, existing: list[str]) -> list[str]:
        """The topics to land, of the `existing` ones: those named, then those matching."""
        matching = sorted(t for t in existing if self.pattern and re.fullmatch(self.pattern, t))
        return list(dict.fromkeys([*self.topics, *matching]))


def read_settings(pairs: list[str], files: list[Path]) -> dict[str, str]:
    """Kafka client settings from ``--kafka-config FILE`` (Java properties: ``name=value``
    lines, ``#`` comments) and ``--kafka-option name=value`` (later ones win)."""
    settings: dict[str, str] = {}
    lines: list[tuple[str, str]] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise LandingError(f"cannot read the Kafka settings file {path}: {exc.strerror}") from None
        lines += [(f"{path}", line) for line in text.splitlines()]
    lines += [("--kafka-option", pair) for pair in pairs]
    for origin, line in lines:
        text = line.strip()
        if not text or text.startswith(("#", "!")) and origin != "--kafka-option":
            continue
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise LandingError(f"{origin}: {text!r} is not a name=value Kafka setting")
        settings[name.strip()] = value.strip()
    if "bootstrap.servers" in settings:
        raise LandingError("give the broker with --kafka HOST:PORT, not as a bootstrap.servers setting")
    return settings


@dataclass(frozen=True)
class PartitionRange:
    topic: str
    partition: int
    start: int  # first offset to land
    end: int  # the partition's next offset when the run looked (exclusive)


@dataclass
class TopicView:
    topic_id: str
    first: dict[int, int]  # partition -> earliest offset on the broker
    next: dict[int, int]  # partition -> next offset (the end of the log)


class _Jvm:
    """Kafka's admin client, through the Spark driver's JVM (kafka-clients comes with the
    Kafka source jar): partitions, offsets and topic ids, without a Python Kafka client."""

    def __init__(self, spark: Any, source: KafkaSource) -> None:
        self.jvm = spark.sparkContext._jvm
        self.source = source

    def _properties(self) -> Any:
        properties = self.jvm.java.util.Properties()
        for name, value in self.source.client_settings().items():
            properties.setProperty(name, value)
        properties.setProperty("client.id", "cdc-land-admin")
        return properties

    def _get(self, future: Any) -> Any:
        unit = self.jvm.java.util.concurrent.TimeUnit.SECONDS
        return future.get(ADMIN_TIMEOUT_SECONDS, unit)

    def topics(self) -> dict[str, TopicView]:
        from py4j.protocol import Py4JJavaError

        admin_class = self.jvm.org.apache.kafka.clients.admin.Admin
        try:
            admin = admin_class.create(self._properties())
        except Py4JJavaError as exc:
            raise LandingError(
                f"cannot create a Kafka client for {self.source.bootstrap}: {_cause(exc)}"
            ) from None
        try:
            existing: list[str] = []
            if self.source.pattern:
                try:
                    existing = [str(name) for name in self._get(admin.listTopics().names())]
                except Py4JJavaError as exc:
                    raise LandingError(
                        f"cannot list the topics on {self.source.bootstrap}: {_cause(exc)}"
                    ) from None
            topics = self.source.chosen(existing)
            if not topics:
                return {}
            names = self.jvm.java.util.ArrayList()
            for topic in topics:
                names.add(topic)
            try:
                described = self._get(admin.describeTopics(names).allTopicNames())
            except Py4JJavaError as exc:
                raise LandingError(
                    f"cannot describe topic(s) {', '.join(topics)} on {self.source.bootstrap}: {_cause(exc)}"
                ) from None
            views: dict[str, TopicView] = {}
            specs = {"first": self.jvm.org.apache.kafka.clients.admin.OffsetSpec.earliest(), "next": None}
            specs["next"] = self.jvm.org.apache.kafka.clients.admin.OffsetSpec.latest()
            partitions: list[Any] = []
            for topic in topics:
                description = described.get(topic)
                views[topic] = TopicView(str(description.topicId().toString()), {}, {})
                for info in description.partitions():
                    partitions.append(
                        self.jvm.org.apache.kafka.common.TopicPartition(topic, info.partition())
                    )
            for which, spec in specs.items():
                request = self.jvm.java.util.HashMap()
                for topic_partition in partitions:
                    request.put(topic_partition, spec)
                try:
                    answer = self._get(admin.listOffsets(request).all())
                except Py4JJavaError as exc:
                    raise LandingError(
                        f"cannot read the offsets of {', '.join(topics)} on "
                        f"{self.source.bootstrap}: {_cause(exc)}"
                    ) from None
                for topic_partition in partitions:
                    offsets = getattr(views[topic_partition.topic()], which)
                    offsets[int(topic_partition.partition())] = int(answer.get(topic_partition).offset())
            return views
        finally:
            admin.close()


def _cause(exc: Any) -> str:
    """The innermost Java exception's message, in one line."""
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    text = f"{java.getClass().getSimpleName()}: {java.getMessage()}" if java is not None else str(exc)
    return " ".join(text.split())[:300]


def plan_ranges(
    views: Mapping[str, TopicView], landed: Mapping[str, int], topic_ids: Mapping[str, str], bootstrap: str
) -> tuple[list[PartitionRange], list[str]]:
    """The offset ranges not landed yet, and warnings (records removed by retention before
    they were landed). Raises LandingError, in one line, for a topic that is not the one
    landed before."""
    ranges: list[PartitionRange] = []
    warnings: list[str] = []
    for topic, view in views.items():
        known = topic_ids.get(topic)
        if known and view.topic_id != known:
            raise LandingError(
                f"topic {topic} on {bootstrap} is not the topic landed before (its id is {view.topic_id}, "
                f"was {known}): it was deleted and re-created, and its offsets count again, so its records "
                "would take the ids of the old topic's; land it into a new lakehouse"
            )
        for partition in sorted(view.next):
            start = landed.get(partition_key(topic, partition), 0)
            end, first = view.next[partition], view.first[partition]
            if end < start:
                raise LandingError(
                    f"topic {topic} partition {partition} on {bootstrap} ends at offset {end}, below the "
                    f"{start} already landed: the topic was deleted and re-created (or the broker lost "
                    "records); land it into a new lakehouse"
                )
            if first > start:
                warnings.append(
                    f"topic {topic} partition {partition}: offsets {start}..{first - 1} were removed by the "
                    "broker (retention) before they were landed"
                )
                start = first
            if end > start:
                ranges.append(PartitionRange(topic, partition, start, end))
    return ranges, warnings


def chunks(ranges: list[PartitionRange], size: int) -> Iterator[list[PartitionRange]]:
    """The ranges cut into chunks of at most `size` offsets each."""
    chunk: list[PartitionRange] = []
    room = size
    for whole in ranges:
        start = whole.start
        while start < whole.end:
            end = min(whole.end, start + room)
            chunk.append(PartitionRange(whole.topic, whole.partition, start, end))
            room -= end - start
            start = end
            if room == 0:
                yield chunk
                chunk, room = [], size
    if chunk:
        yield chunk


def _text(column: str) -> str:
    """A binary column as text: UTF-8 as it is, anything else as base64."""
    return f"case when is_valid_utf8({column}) then cast({column} as string) else base64({column}) end"


def bronze_select(max_bytes: int, table_columns: list[str]) -> list[str]:
    """Spark SQL over the Kafka source's rows (key, value, topic, partition, offset, timestamp,
    timestampType, headers) giving the bronze columns, as the kcat container lands a record.
    `ingested_at` and `ingest_batch_id` are bound as `_ingested_at` / `_ingest_batch_id`."""
    value = f"if(octet_length(value) > {max_bytes}, substr(value, 1, {max_bytes}), value)"
    cut = (
        f"concat('record at partition ', partition, ' offset ', offset, ' is ', "
        f"format_number(octet_length(value), 0), ' bytes, over the limit of {max_bytes:,} "
        "(land --max-message-bytes): only its first bytes were landed')"
    )
    extra = (
        f"concat(if(value is not null and not is_valid_utf8({value}), "
        f"array(struct('{ENCODING_HEADER}' as key, 'base64' as value)), array()), "
        f"if(octet_length(value) > {max_bytes}, "
        f"array(struct('{INGEST_ERROR_HEADER}' as key, {cut} as value)), array()))"
    )
    entries = (
        f"concat(transform(coalesce(headers, array()), h -> struct(h.key as key, "
        f"coalesce({_text('h.value')}, '') as value)), {extra})"
    )
    columns = {
        "message_id": (
            "sha2(concat_ws(char(31), concat('kafka:', topic), cast(partition as string), "
            "cast(offset as string)), 256)"
        ),
        "source_uri": "concat('kafka:', topic)",
        "source_partition": "partition",
        "source_offset": "offset",
        "message_key": _text("key"),
        "message_value": _text(value),
        # A repeated header name keeps its last value (spark.sql.mapKeyDedupPolicy=LAST_WIN).
        "headers": f"if(size({entries}) = 0, null, map_from_entries({entries}))",
        # timestampType -1: the record has no timestamp (kcat's tstype "none").
        "enqueued_at": "if(timestampType < 0, null, timestamp)",
        "ingested_at": "_ingested_at",
        "ingest_batch_id": "_ingest_batch_id",
    }
    return [f"{columns[name]} as {name}" for name in table_columns]


class KafkaLander:
    """Lands Kafka topics into one bronze table, through a file Lander's table, checkpoints
    and two-phase chunks."""

    def __init__(self, lander: Lander, source: KafkaSource, out: TextIO) -> None:
        self.lander = lander
        self.source = source
        self.out = out
        self.select = bronze_select(lander.max_message_bytes, [name for name, _ in lander.table.columns])

    def _read(self, chunk: list[PartitionRange]) -> Any:
        spark = self.lander.spark
        assign: dict[str, list[int]] = {}
        starting: dict[str, dict[str, int]] = {}
        ending: dict[str, dict[str, int]] = {}
        for part in chunk:
            assign.setdefault(part.topic, []).append(part.partition)
            starting.setdefault(part.topic, {})[str(part.partition)] = part.start
            ending.setdefault(part.topic, {})[str(part.partition)] = part.end
        reader = spark.read.format("kafka")
        for name, value in self.source.client_settings().items():
            reader = reader.option(f"kafka.{name}", value)
        frame = (
            reader.option("assign", json.dumps(assign))
            .option("startingOffsets", json.dumps(starting))
            .option("endingOffsets", json.dumps(ending))
            .option("includeHeaders", "true")
            # Offsets the planner saw but the log no longer has (compaction, aborted
            # transactions' markers) are gaps, not errors; retention is reported by plan_ranges.
            .option("failOnDataLoss", "false")
            .load()
        )
        from pyspark.sql import functions as F

        report = self.lander.report
        frame = frame.withColumn("_ingested_at", F.lit(self.lander.ingested_at)).withColumn(
            "_ingest_batch_id", F.lit(report.batch_id)
        )
        return frame.selectExpr(*self.select)

    def land_once(self) -> int:
        """Land everything the topics hold now; the records landed."""
        lander = self.lander
        spark = lander.spark
        spark.conf.set("spark.sql.mapKeyDedupPolicy", "LAST_WIN")
        landed = 0

        def waiting() -> None:
            print(
                f"  waiting for another land run into {lander.table.qualified_name} to finish", file=self.out
            )

        with lander.checkpoints.locked(waiting):
            lander.prepare()
            views = _Jvm(spark, self.source).topics()
            ranges, warnings = plan_ranges(
                views, lander.checkpoints.offsets, lander.checkpoints.topic_ids, self.source.bootstrap
            )
            for warning in warnings:
                print(f"warning: {warning}", file=self.out, flush=True)
            topic_ids = {topic: view.topic_id for topic, view in views.items()}
            new_topics = {t: i for t, i in topic_ids.items() if lander.checkpoints.topic_ids.get(t) != i}
            if new_topics and not ranges:
                lander.append_chunk(None, 0, topic_ids=new_topics)
            for chunk in chunks(ranges, lander.chunk_size):
                offsets = {partition_key(p.topic, p.partition): p.end for p in chunk}
                write = lander.frame_writer(self._read(chunk))
                landed += lander.append_chunk(write, None, offsets=offsets, topic_ids=topic_ids)
                spans = ", ".join(f"{p.topic}[{p.partition}] {p.start}..{p.end - 1}" for p in chunk)
                print(f"  landed offsets {spans}", file=self.out, flush=True)
        return landed
