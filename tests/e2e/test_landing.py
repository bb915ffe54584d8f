"""End to end: `python -m python_ingest land` into the embedded lakehouse.

Each test lands its own files (fresh paths under tmp_path, so fresh
message ids) and checks bronze by those ids, so tests share one lakehouse
without depending on each other.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from python_ingest.containers import file_uri
from tests.helpers.eventhubs_capture import write_capture_file
from tests.helpers.tables import BRONZE_COLUMNS

pytestmark = pytest.mark.spark


def rows_from(spark, table: str, condition: str) -> list:
    return spark.sql(f"select * from bronze.{table} where {condition} order by source_offset").collect()


def count(spark, table: str) -> int:
    if not spark.catalog.tableExists(f"bronze.{table}"):
        return 0
    return spark.table(f"bronze.{table}").count()


def test_bronze_tables_have_exactly_the_contract_columns(spark, land, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text('{"a": 1}\n')
    assert land("--format", "qlik", "--container", "jsonl", path).exit_code == 0
    fields = {f.name: f.dataType.simpleString() for f in spark.table("bronze.raw_qlik").schema.fields}
    assert list(fields) == list(BRONZE_COLUMNS)
    assert fields["source_partition"] == "int"
    assert fields["source_offset"] == "bigint"
    assert fields["headers"] == "map<string,string>"
    assert fields["enqueued_at"] == "timestamp"
    # Only an Iceberg table has metadata tables; the append made a snapshot.
    assert spark.sql("select * from bronze.raw_qlik.snapshots").count() >= 1


def test_jsonl_lands_everything_once_and_only_new_lines_when_grown(spark, land, tmp_path: Path) -> None:
    path = tmp_path / "ces" / "events.jsonl"
    path.parent.mkdir()
    good = json.dumps({"specversion": "1.0", "id": "e1"})
    path.write_bytes(
        good.encode()
        + b"\n"
        + b"\n"  # blank line: skipped, still counted
        + b"this is not json\r\n"
        + b'{"bad bytes": "\xff\xfe"}\n'
    )
    before = count(spark, "raw_ces")

    first = land("--format", "ces", "--container", "jsonl", path.parent)
    assert first.exit_code == 0, first.output
    assert "landed 3 message(s), skipped 0" in first.output
    rows = rows_from(spark, "raw_ces", f"source_uri = '{file_uri(path)}'")
    assert [r.source_offset for r in rows] == [1, 3, 4]
    assert rows[0].message_value == good
    assert rows[1].message_value == "this is not json"
    assert rows[2].headers == {"x-cdc-encoding": "base64"}
    assert base64.b64decode(rows[2].message_value) == b'{"bad bytes": "\xff\xfe"}'
    assert all(r.source_partition is None and r.message_key is None for r in rows)
    assert len({r.ingest_batch_id for r in rows}) == 1

    second = land("--format", "ces", "--container", "jsonl", path)
    assert second.exit_code == 0, second.output
    assert "landed 0 message(s), skipped 3" in second.output
    assert count(spark, "raw_ces") == before + 3

    with path.open("ab") as handle:
        handle.write(b'{"id": "e5"}\n{"id": "e6"}')  # the last line has no newline
    third = land("--format", "ces", "--container", "jsonl", path)
    assert "landed 2 message(s), skipped 3" in third.output
    rows = rows_from(spark, "raw_ces", f"source_uri = '{file_uri(path)}'")
    assert [r.source_offset for r in rows] == [1, 3, 4, 5, 6]
    assert len({r.message_id for r in rows}) == 5
    assert count(spark, "raw_ces") == before + 5


def test_message_ids_are_deterministic(spark, land, tmp_path: Path) -> None:
    from python_ingest.containers import make_message_id

    path = tmp_path / "ids.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}\n')
    land("--format", "dataworks", "--container", "jsonl", path)
    rows = rows_from(spark, "raw_dataworks", f"source_uri = '{file_uri(path)}'")
    assert [r.message_id for r in rows] == [make_message_id(file_uri(path), None, n) for n in (1, 2)]


def test_changed_file_is_refused_not_mixed(spark, land, tmp_path: Path) -> None:
    path = tmp_path / "rewritten.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}\n')
    assert land("--format", "dataworks", "--container", "jsonl", path).exit_code == 0
    path.write_text('{"n": 9}\n')
    result = land("--format", "dataworks", "--container", "jsonl", path)
    assert result.exit_code == 1
    assert "changed since it was landed" in result.output
    assert len(rows_from(spark, "raw_dataworks", f"source_uri = '{file_uri(path)}'")) == 2


def test_kcat_keeps_keys_headers_and_tombstones(spark, land, tmp_path: Path) -> None:
    topic = f"pg.public.orders_{tmp_path.name[-12:]}"
    records = [
        {
            "topic": topic,
            "partition": 0,
            "offset": 10,
            "tstype": "create",
            "ts": 1735689600000,
            "broker": 1,
            "headers": ["__debezium.oldkey", '{"id":1}', "trace", "abc"],
            "key": '{"id":1}',
            "payload": '{"op":"d","before":{"id":1}}',
        },
        {
            "topic": topic,
            "partition": 0,
            "offset": 11,
            "tstype": "create",
            "ts": 1735689600001,
            "broker": 1,
            "headers": None,
            "key": '{"id":1}',
            "payload": None,
        },
        {
            "topic": topic,
            "partition": 2,
            "offset": 11,
            "tstype": "create",
            "ts": 1735689600002,
            "broker": 1,
            "headers": [],
            "key": None,
            "payload": '{"op":"c"}',
        },
    ]
    path = tmp_path / "dump.kcat"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not a kcat envelope\n")

    result = land("--format", "debezium", "--container", "kcat", path)
    assert result.exit_code == 0, result.output
    assert "landed 4 message(s)" in result.output
    rows = rows_from(spark, "raw_debezium", f"source_uri = 'kafka:{topic}'")
    by_offset = {(r.source_partition, r.source_offset): r for r in rows}
    deleted = by_offset[(0, 10)]
    assert deleted.message_key == '{"id":1}'
    assert deleted.headers == {"__debezium.oldkey": '{"id":1}', "trace": "abc"}
    assert deleted.enqueued_at == datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)
    tombstone = by_offset[(0, 11)]
    assert tombstone.message_value is None and tombstone.message_key == '{"id":1}'
    assert by_offset[(2, 11)].message_key is None
    malformed = rows_from(spark, "raw_debezium", f"source_uri = '{file_uri(path)}'")
    assert len(malformed) == 1
    assert malformed[0].message_value == "not a kcat envelope"
    assert "x-cdc-ingest-error" in malformed[0].headers

    # The same Kafka records in a second dump file: they land again (silver
    # deals with duplicates) and keep their Kafka-derived message ids.
    copy = tmp_path / "dump-copy.kcat"
    copy.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert "landed 3 message(s)" in land("--format", "debezium", "--container", "kcat", copy).output
    rows = rows_from(spark, "raw_debezium", f"source_uri = 'kafka:{topic}'")
    assert len(rows) == 6 and len({r.message_id for r in rows}) == 3


def test_eventhubs_capture_lands_partition_offset_and_enqueued_time(spark, land, tmp_path: Path) -> None:
    hub = f"hub{tmp_path.name[-8:]}"
    base = tmp_path / "capture" / "ns1" / hub
    first = base / "3" / "2025" / "03" / "14" / "16" / "45" / "00.avro"
    empty = base / "3" / "2025" / "03" / "14" / "16" / "46" / "00.avro"
    idle = base / "3" / "2025" / "03" / "14" / "16" / "47" / "00.avro"
    write_capture_file(
        first,
        [
            {
                "SequenceNumber": 7,
                "Offset": "4096",
                "EnqueuedTimeUtc": "3/14/2025 4:45:01 PM",
                "SystemProperties": {"x-opt-kafka-key": b'{"id":105}'},
                "Properties": {"source": "ces"},
                "Body": b'{"id":"a"}',
            },
            {
                "SequenceNumber": 8,
                "Offset": "4200",
                "EnqueuedTimeUtc": "2025-03-14T16:45:02Z",
                "SystemProperties": {},
                "Properties": {},
                "Body": b'{"id":"b"}',
            },
        ],
    )
    write_capture_file(empty, [])
    idle.parent.mkdir(parents=True)
    idle.write_bytes(b"")

    result = land("--format", "ces", "--container", "eventhubs-avro", tmp_path / "capture")
    assert result.exit_code == 0, result.output
    assert "landed 2 message(s)" in result.output and "from 3 file(s)" in result.output
    rows = rows_from(spark, "raw_ces", f"source_uri = 'eventhubs://ns1/{hub}'")
    assert [(r.source_partition, r.source_offset) for r in rows] == [(3, 4096), (3, 4200)]
    assert rows[0].enqueued_at == datetime(2025, 3, 14, 16, 45, 1)
    assert rows[1].enqueued_at == datetime(2025, 3, 14, 16, 45, 2)
    assert rows[0].message_key == '{"id":105}'
    assert rows[0].headers == {"source": "ces"}
    assert rows[0].message_value == '{"id":"a"}'

    again = land("--format", "ces", "--container", "eventhubs-avro", tmp_path / "capture")
    assert "landed 0 message(s), skipped 2" in again.output


def test_unreadable_avro_fails_with_a_clear_message(spark, land, tmp_path: Path) -> None:
    broken = tmp_path / "broken.avro"
    broken.write_bytes(b"this is not avro at all")
    result = land("--format", "qlik", "--container", "eventhubs-avro", broken)
    assert result.exit_code == 1
    assert "broken.avro" in result.output and "not a readable Event Hubs Capture Avro file" in result.output


def test_interrupted_chunk_is_settled_on_the_next_run(
    spark, land, lakehouse_dir: Path, tmp_path: Path
) -> None:
    """A run that died after its Iceberg commit but before its checkpoint
    commit must not land the chunk twice; one that died before the Iceberg
    commit must land it."""
    from python_ingest.bronze import bronze_table
    from python_ingest.checkpoints import CheckpointStore
    from python_ingest.landing import Lander

    table = bronze_table("qlik")
    path = tmp_path / "crash.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}\n')
    store = CheckpointStore(lakehouse_dir / "ingest_checkpoints", table.name)
    lander = Lander(spark, table, store)
    lander.prepare()
    lander.land_file(path, "jsonl")
    # Simulate a crash between the Iceberg append and the checkpoint commit.
    store.commit = lambda: None  # type: ignore[method-assign]
    lander._flush()
    lander._written()  # the writer thread's append is made
    assert len(rows_from(spark, "raw_qlik", f"source_uri = '{file_uri(path)}'")) == 2

    result = land("--format", "qlik", "--container", "jsonl", path)
    assert "landed 0 message(s), skipped 2" in result.output, result.output
    assert len(rows_from(spark, "raw_qlik", f"source_uri = '{file_uri(path)}'")) == 2

    # A crash before the Iceberg commit: the pending state is discarded.
    other = tmp_path / "crash-early.jsonl"
    other.write_text('{"n": 3}\n')
    store = CheckpointStore(lakehouse_dir / "ingest_checkpoints", table.name)
    from python_ingest.checkpoints import FileState
    from python_ingest.containers import ResumePoint

    store.begin("never-committed:1", {file_uri(other): FileState(ResumePoint(10, 1, 0), 1, 10, 10, "x")})
    result = land("--format", "qlik", "--container", "jsonl", other)
    assert "landed 1 message(s)" in result.output, result.output


def test_both_ways_of_appending_a_chunk_land_the_same_rows(spark, land, monkeypatch, tmp_path: Path) -> None:
    """On the embedded lakehouse a chunk is a Parquet file of pyarrow's committed by Iceberg's
    API; on a cluster Spark appends it. Both give the same rows; Spark's snapshot says so
    (`spark.app.id`), the direct one carries only the chunk's id."""
    from python_ingest import iceberg_files

    class OnACluster(iceberg_files.IcebergAppender):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            self.direct = False

    lines = [json.dumps({"n": n, "text": "é" * n}) for n in range(5)] + ["not json", '{"k": "\\ud800"}']
    landed = {}
    for way in ("direct", "spark"):
        if way == "spark":
            monkeypatch.setattr(iceberg_files, "IcebergAppender", OnACluster)
        path = tmp_path / way / "same.kcat"
        path.parent.mkdir()
        path.write_text(
            "".join(
                json.dumps(
                    {
                        "topic": "t",
                        "partition": 1,
                        "offset": i,
                        "tstype": "create",
                        "ts": 1_700_000_000_000 + i,
                    }
                    | {"broker": 0, "headers": ["h", str(i), "h2", None], "key": f"k{i}", "payload": line}
                )
                + "\n"
                for i, line in enumerate(lines)
            )
        )
        result = land("--format", "debezium", "--container", "kcat", path)
        assert result.exit_code == 0, result.output
        rows = rows_from(
            spark, "raw_debezium", f"source_uri = 'kafka:t' and ingest_batch_id = '{batch_of(result)}'"
        )
        landed[way] = [(r.message_id, r.message_key, r.message_value, r.headers, r.enqueued_at) for r in rows]
        apps = spark.sql(
            "select summary['spark.app.id'] as app from bronze.raw_debezium.snapshots "
            f"where summary['cdc.ingest-chunk'] like '{batch_of(result)}:%'"
        ).collect()
        assert [row.app is not None for row in apps] == [way == "spark"], way
    assert len(landed["direct"]) == len(lines)
    assert landed["direct"] == landed["spark"]


def batch_of(result) -> str:
    return result.output.split("(batch ")[1].split(")")[0]


def test_a_chunk_of_large_messages_is_handed_over_before_its_count(
    spark, land, monkeypatch, tmp_path
) -> None:
    """Chunks end at --chunk-size messages or at CHUNK_CHARACTERS of message text, whichever
    comes first: memory stays bounded, and so does each Arrow text column."""
    from python_ingest import landing

    monkeypatch.setattr(landing, "CHUNK_CHARACTERS", 100)
    path = tmp_path / "large.jsonl"
    path.write_text("".join(json.dumps({"n": n, "pad": "x" * 50}) + "\n" for n in range(5)))  # 62 chars each
    result = land("--format", "qlik", "--container", "jsonl", path)
    assert result.exit_code == 0, result.output
    chunks = spark.sql(
        "select summary['added-records'] as added from bronze.raw_qlik.snapshots "
        f"where summary['cdc.ingest-chunk'] like '{batch_of(result)}:%' order by committed_at"
    ).collect()
    assert [int(c.added) for c in chunks] == [2, 2, 1]
    assert len(rows_from(spark, "raw_qlik", f"source_uri = '{file_uri(path)}'")) == 5
