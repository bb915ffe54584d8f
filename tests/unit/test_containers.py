"""Container readers: streaming, resumable, nothing lost (no Spark)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from python_ingest.containers import (
    ENCODING_HEADER,
    INGEST_ERROR_HEADER,
    ContainerError,
    ResumePoint,
    capture_location,
    file_uri,
    iter_messages,
    make_message_id,
    parse_enqueued_time,
    read_eventhubs_avro,
    read_jsonl,
    read_kcat,
)
from tests.helpers.eventhubs_capture import write_capture_file


def test_jsonl_lines_exactly_as_written(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n   \nnot json\n\xff\xfe bad\n{"last": true}')
    messages = list(read_jsonl(path))
    assert [m.source_offset for m in messages] == [1, 4, 5, 6]
    assert messages[0].message_value == '{"a": 1}'
    assert messages[1].message_value == "not json" and messages[1].headers is None
    assert messages[2].headers == {ENCODING_HEADER: "base64"}
    assert base64.b64decode(messages[2].message_value) == b"\xff\xfe bad"
    assert messages[3].message_value == '{"last": true}'
    assert messages[3].resume == ResumePoint(byte_offset=path.stat().st_size, line_number=6)
    uri = file_uri(path)
    assert all(m.source_uri == uri and m.source_partition is None for m in messages)
    assert messages[0].message_id == make_message_id(uri, None, 1)
    assert [m.message_id for m in read_jsonl(path)] == [m.message_id for m in messages]


def test_jsonl_resumes_after_growth(tmp_path: Path) -> None:
    path = tmp_path / "grow.jsonl"
    path.write_text('{"n": 1}\n\n{"n": 2}\n')
    first = list(read_jsonl(path))
    with path.open("a") as handle:
        handle.write('{"n": 3}\n{"n": 4}\n')
    rest = list(read_jsonl(path, first[-1].resume))
    assert [m.message_value for m in rest] == ['{"n": 3}', '{"n": 4}']
    assert [m.source_offset for m in rest] == [4, 5]


@pytest.mark.parametrize("container", ["jsonl", "kcat"])
def test_whole_lines_leaves_a_last_line_without_its_ending_for_later(tmp_path: Path, container: str) -> None:
    """land --watch reads a file while its writer appends: a last line without its line ending
    may be half written, so it waits; it is read once ended, as one message."""
    path = tmp_path / "growing.jsonl"
    whole, half = kcat_line(offset=1, payload="a"), kcat_line(offset=2, payload="bb")
    path.write_text(whole + "\n" + half[:20])
    [first] = iter_messages(container, path, whole_lines=True)
    assert first.resume.byte_offset == len(whole) + 1
    assert list(iter_messages(container, path, first.resume, whole_lines=True)) == []
    with path.open("a") as handle:
        handle.write(half[20:] + "\n")
    [second] = iter_messages(container, path, first.resume, whole_lines=True)
    assert second.message_value == (half if container == "jsonl" else "bb")
    assert second.resume.byte_offset == path.stat().st_size
    # Without whole_lines (a one-off land), a file's last line is landed as it is.
    path.write_text(whole + "\n" + half)
    assert len(list(iter_messages(container, path))) == 2


def kcat_line(**fields) -> str:
    record = {
        "topic": "t",
        "partition": 0,
        "offset": 1,
        "tstype": "create",
        "ts": 0,
        "broker": 0,
        "headers": None,
        "key": None,
        "payload": None,
    }
    record.update(fields)
    return json.dumps(record)


def test_kcat_records(tmp_path: Path) -> None:
    path = tmp_path / "dump.kcat"
    lines = [
        kcat_line(
            offset=5,
            key='{"id":1}',
            payload='{"op":"c"}',
            headers=["a", "1", "b", "2", "a", "3"],
            ts=1735689600000,
        ),
        kcat_line(offset=6, key='{"id":1}', payload=None),  # tombstone
        kcat_line(offset=7, headers=["lonely"], payload={"already": "parsed"}, key=42, tstype="none"),
        "",
        "not json at all",
        json.dumps({"topic": "t", "partition": "zero", "offset": 1}),
        json.dumps([1, 2]),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\n")
    messages = list(read_kcat(path))
    first, tombstone, odd = messages[:3]
    assert first.source_uri == "kafka:t" and (first.source_partition, first.source_offset) == (0, 5)
    assert first.message_id == make_message_id("kafka:t", 0, 5)
    assert first.headers == {"a": "3", "b": "2"}
    assert first.enqueued_at == datetime(2025, 1, 1, tzinfo=UTC)
    assert (
        tombstone.message_value is None and tombstone.message_key == '{"id":1}' and tombstone.headers is None
    )
    assert odd.headers == {"lonely": ""} and odd.message_value == '{"already":"parsed"}'
    assert odd.message_key == "42" and odd.enqueued_at is None
    bad = messages[3:]
    assert [m.source_offset for m in bad] == [5, 6, 7, 8]
    assert all(m.source_uri == file_uri(path) for m in bad)
    reasons = [m.headers[INGEST_ERROR_HEADER] for m in bad]
    assert reasons[0] == "line 5 is not a kcat -J JSON envelope: it is not JSON"
    assert "partition is not an integer" in reasons[1]
    assert "not a JSON object" in reasons[2]
    assert "not UTF-8" in reasons[3] and bad[3].headers[ENCODING_HEADER] == "base64"
    assert bad[0].message_value == "not json at all"


def test_enqueued_time_forms() -> None:
    assert parse_enqueued_time("9/21/2021 1:42:04 AM") == datetime(2021, 9, 21, 1, 42, 4, tzinfo=UTC)
    assert parse_enqueued_time("9/21/2021 1:42:04 PM") == datetime(2021, 9, 21, 13, 42, 4, tzinfo=UTC)
    assert parse_enqueued_time("2021-09-21T01:42:04.123Z") == datetime(
        2021, 9, 21, 1, 42, 4, 123000, tzinfo=UTC
    )
    assert parse_enqueued_time("2021-09-21T03:42:04+02:00") == datetime(2021, 9, 21, 1, 42, 4, tzinfo=UTC)
    assert parse_enqueued_time("yesterday") is None
    assert parse_enqueued_time(None) is None


def test_capture_location(tmp_path: Path) -> None:
    path = tmp_path / "ns" / "hub" / "12" / "2025" / "01" / "02" / "03" / "04" / "05.avro"
    assert capture_location(path) == ("eventhubs://ns/hub", 12)
    assert capture_location(tmp_path / "plain.avro") is None


def test_eventhubs_capture_records(tmp_path: Path) -> None:
    path = tmp_path / "ns" / "hub" / "1" / "2025" / "01" / "02" / "03" / "04" / "05.avro"
    write_capture_file(
        path,
        [
            {
                "SequenceNumber": 1,
                "Offset": "100",
                "EnqueuedTimeUtc": "1/2/2025 3:04:05 AM",
                "SystemProperties": {"x-opt-kafka-key": b"k1"},
                "Properties": {"p": "v", "n": 5},
                "Body": b"{}",
            },
            {
                "SequenceNumber": 2,
                "Offset": "200",
                "EnqueuedTimeUtc": "2025-01-02T03:04:06Z",
                "SystemProperties": {"x-opt-partition-key": "pk"},
                "Body": b"\xff\x00",
            },
            {"SequenceNumber": 3, "Offset": "300", "Body": None},
        ],
    )
    messages = list(read_eventhubs_avro(path))
    assert [(m.source_uri, m.source_partition, m.source_offset) for m in messages] == [
        ("eventhubs://ns/hub", 1, 100),
        ("eventhubs://ns/hub", 1, 200),
        ("eventhubs://ns/hub", 1, 300),
    ]
    assert messages[0].message_key == "k1" and messages[0].headers == {"p": "v", "n": "5"}
    assert messages[0].enqueued_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert messages[0].message_id == make_message_id("eventhubs://ns/hub", 1, 100)
    assert messages[1].message_key == "pk" and messages[1].headers == {ENCODING_HEADER: "base64"}
    assert base64.b64decode(messages[1].message_value) == b"\xff\x00"
    assert messages[2].message_value is None
    assert [m.source_offset for m in read_eventhubs_avro(path, messages[0].resume)] == [200, 300]


def test_eventhubs_plain_path_uses_file_and_record_index(tmp_path: Path) -> None:
    path = write_capture_file(
        tmp_path / "x.avro", [{"Offset": "7", "SystemProperties": {"x-opt-partition-id": "4"}, "Body": b"a"}]
    )
    [message] = read_eventhubs_avro(path)
    assert message.source_uri == file_uri(path) and message.source_partition == 4
    assert message.message_id == make_message_id(file_uri(path), None, 1)


def test_empty_and_header_only_capture_files_yield_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.avro"
    empty.write_bytes(b"")
    assert list(read_eventhubs_avro(empty)) == []
    assert list(read_eventhubs_avro(write_capture_file(tmp_path / "idle.avro", []))) == []


def test_unreadable_avro_is_a_container_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.avro"
    broken.write_bytes(b"Obj\x01garbage")
    with pytest.raises(ContainerError, match="broken.avro: not a readable Event Hubs Capture Avro file"):
        list(read_eventhubs_avro(broken))
    truncated = tmp_path / "truncated.avro"
    good = write_capture_file(tmp_path / "good.avro", [{"Body": b"x" * 1000} for _ in range(20)])
    truncated.write_bytes(good.read_bytes()[:-400])
    with pytest.raises(ContainerError, match="truncated.avro"):
        list(read_eventhubs_avro(truncated))


def test_avro_without_body_is_refused(tmp_path: Path) -> None:
    import fastavro

    path = tmp_path / "other.avro"
    schema = {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "long"}]}
    with path.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), [{"x": 1}])
    with pytest.raises(ContainerError, match="no Body field"):
        list(read_eventhubs_avro(path))


def test_unknown_container() -> None:
    with pytest.raises(ValueError, match="unknown container 'parquet'"):
        iter_messages("parquet", Path("x"))


def test_a_kcat_line_that_breaks_its_envelope_in_any_way_lands_as_text_with_why(tmp_path: Path) -> None:
    lines = [
        kcat_line(partition=2**40),  # beyond the bronze table's int
        kcat_line(offset=2**70),
        kcat_line(offset=-1),
        json.dumps({"topic": "t", "partition": 0, "offset": 1, "headers": {"not": "a list"}}),
        '{"topic": ' + "[" * 3000 + "]" * 3000 + "}",  # RecursionError in Python's parser
        '{"topic": "t", "partition": 0, "offset": 1e400}',
    ]
    path = tmp_path / "broken.kcat"
    path.write_text("\n".join(lines) + "\n")
    messages = list(read_kcat(path))
    reasons = [m.headers[INGEST_ERROR_HEADER] for m in messages]
    assert len(messages) == len(lines) and all(m.source_uri == file_uri(path) for m in messages)
    assert "partition 1099511627776 is not between 0 and 2147483647" in reasons[0]
    assert "offset 1180591620717411303424 is not between 0" in reasons[1]
    assert "offset -1 is not between 0" in reasons[2]
    assert "headers is neither null nor an array" in reasons[3]
    assert "nested deeper than the JSON parser allows" in reasons[4]
    assert "offset is not an integer" in reasons[5]
    assert [m.message_value for m in messages] == lines


def test_kcat_timestamps_beyond_the_calendar_are_unknown_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ts.kcat"
    path.write_text(kcat_line(ts=10**30) + "\n" + kcat_line(offset=2, ts=1735689600000) + "\n")
    far, near = read_kcat(path)
    assert far.enqueued_at is None and INGEST_ERROR_HEADER not in (far.headers or {})
    assert near.enqueued_at == datetime(2025, 1, 1, tzinfo=UTC)


def test_a_value_with_a_lone_surrogate_lands_as_base64_of_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.kcat"
    # JSON escapes for lone surrogates: valid JSON, but no UTF-8 text can hold what they decode to.
    path.write_text(kcat_line(payload='{"a": "\ud800"}', key="k\udfff", headers=["h", "\ud800"]) + "\n")
    [message] = read_kcat(path)
    assert message.headers[ENCODING_HEADER] == "base64"
    assert base64.b64decode(message.message_value) == '{"a": "\ud800"}'.encode("utf-8", "surrogatepass")
    assert message.message_key == "k\ufffd" and message.headers["h"] == "\ufffd"


@pytest.mark.parametrize("reader", [read_jsonl, read_kcat])
def test_a_line_over_the_size_limit_lands_cut_and_marked_and_the_next_lines_follow(
    tmp_path: Path, reader
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"small": 1}\n' + b'{"big": "' + "é".encode() * 100 + b'"}\n' + b'{"small": 2}\n')
    first, big, last = reader(path, max_bytes=64)
    assert INGEST_ERROR_HEADER not in (first.headers or {}) or reader is read_kcat
    assert len(big.message_value.encode()) <= 64 and big.message_value.startswith('{"big": "é')
    assert "over the limit of 64 (land --max-message-bytes)" in big.headers[INGEST_ERROR_HEADER]
    assert last.source_offset == 3 and last.resume.byte_offset == path.stat().st_size


def test_a_damaged_capture_file_is_refused_naming_where_after_its_good_records(tmp_path: Path) -> None:
    path = write_capture_file(tmp_path / "cut.avro", [{"Body": b"x" * 1000} for _ in range(20)])
    path.write_bytes(path.read_bytes()[:-400])
    with pytest.raises(
        ContainerError, match=r"cut.avro: the Event Hubs Capture Avro file is damaged at record"
    ):
        list(read_eventhubs_avro(path))
