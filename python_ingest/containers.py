"""Streaming readers of the landing containers: JSON lines, kcat -J dumps and
Azure Event Hubs Capture Avro files.

Pure Python, no Spark: each reader yields :class:`RawMessage` records one by
one (never a whole file in memory), each carrying the point to resume from
after it, so that landing can checkpoint after any chunk. Nothing is lost
here: bytes that are not UTF-8 become base64 (``x-cdc-encoding: base64``) and
a kcat line that is not a kcat envelope becomes a raw message with the reason
in ``x-cdc-ingest-error``. Only a file that cannot be read at all (a broken
Avro container) raises :class:`ContainerError`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CONTAINERS = ("jsonl", "kcat", "eventhubs-avro")
LINE_CONTAINERS = ("jsonl", "kcat")  # positions are byte offsets; eventhubs-avro counts records
ENCODING_HEADER = "x-cdc-encoding"
INGEST_ERROR_HEADER = "x-cdc-ingest-error"
CAPTURE_PATH = re.compile(r"^\d+/\d{4}/\d{2}/\d{2}/\d{2}/\d{2}/\d{2}\.avro$")


class ContainerError(Exception):
    """A file that cannot be read at all; the message says which and why."""


@dataclass(frozen=True)
class ResumePoint:
    """Where a previous landing stopped in a file."""

    byte_offset: int = 0  # jsonl / kcat: byte position just after the last consumed line
    line_number: int = 0  # jsonl / kcat: lines consumed so far, blank ones included
    records: int = 0  # eventhubs-avro: records consumed so far

    def describe(self, container: str, size: int) -> str:
        """Where this point is, for a person: `line 25,632 (byte 15,125,000 of 21,436,118)`."""
        if container in LINE_CONTAINERS:
            return f"line {self.line_number + 1:,} (byte {self.byte_offset:,} of {size:,})"
        return f"record {self.records + 1:,}"


@dataclass(frozen=True)
class RawMessage:
    message_id: str
    source_uri: str
    source_partition: int | None
    source_offset: int
    message_key: str | None
    message_value: str | None
    headers: dict[str, str] | None
    enqueued_at: datetime | None
    resume: ResumePoint


def make_message_id(*parts: object) -> str:
    """Deterministic message id: sha256 of the parts (None as empty)."""
    text = "\x1f".join("" if part is None else str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_uri(path: Path) -> str:
    return Path(path).resolve().as_uri()


def decode_text(data: bytes) -> tuple[str, bool]:
    """UTF-8 text of `data`, or its base64 and True when it is not UTF-8."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), True


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return decode_text(value)[0]
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# -- line containers --------------------------------------------------------
def _lines(path: Path, resume: ResumePoint) -> Iterator[tuple[int, bytes, ResumePoint]]:
    """Non-blank lines (without line ending) with their 1-based number and the
    resume point after them."""
    offset, number = resume.byte_offset, resume.line_number
    with Path(path).open("rb") as handle:
        handle.seek(offset)
        for raw in handle:
            offset += len(raw)
            number += 1
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                yield number, line, ResumePoint(byte_offset=offset, line_number=number)


def past_blank_lines(path: Path, resume: ResumePoint) -> ResumePoint:
    """The point after the blank lines that follow `resume`: where a reader that
    has yielded its last message stands once it has consumed the file's end."""
    offset, number = resume.byte_offset, resume.line_number
    with Path(path).open("rb") as handle:
        handle.seek(offset)
        for raw in handle:
            if raw.strip():
                break
            offset += len(raw)
            number += 1
    return ResumePoint(byte_offset=offset, line_number=number)


def _plain_line(
    uri: str, number: int, line: bytes, after: ResumePoint, error: str | None = None
) -> RawMessage:
    value, encoded = decode_text(line)
    headers: dict[str, str] = {}
    if encoded:
        headers[ENCODING_HEADER] = "base64"
    if error:
        headers[INGEST_ERROR_HEADER] = error
    return RawMessage(
        message_id=make_message_id(uri, None, number),
        source_uri=uri,
        source_partition=None,
        source_offset=number,
        message_key=None,
        message_value=value,
        headers=headers or None,
        enqueued_at=None,
        resume=after,
    )


def read_jsonl(path: Path, resume: ResumePoint = ResumePoint()) -> Iterator[RawMessage]:
    """One message per non-blank line, exactly as written."""
    uri = file_uri(path)
    for number, line, after in _lines(path, resume):
        yield _plain_line(uri, number, line, after)


def _kcat_headers(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("headers is neither null nor an array")
    pairs = value + [""] if len(value) % 2 else value
    return {str(_as_text(pairs[i])): _as_text(pairs[i + 1]) or "" for i in range(0, len(pairs), 2)}


def _kcat_time(record: dict[str, Any]) -> datetime | None:
    ts = record.get("ts")
    if record.get("tstype") == "none" or not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
        return None
    return datetime.fromtimestamp(ts / 1000, tz=UTC)


def _kcat_message(record: Any, after: ResumePoint) -> RawMessage:
    """A kcat -J envelope as a message; ValueError says what is wrong with it."""
    if not isinstance(record, dict):
        raise ValueError("it is not a JSON object")
    topic, partition, offset = record.get("topic"), record.get("partition"), record.get("offset")
    if not isinstance(topic, str) or not topic:
        raise ValueError("it has no topic")
    for name, value in (("partition", partition), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"its {name} is not an integer")
    uri = f"kafka:{topic}"
    return RawMessage(
        message_id=make_message_id(uri, partition, offset),
        source_uri=uri,
        source_partition=partition,
        source_offset=offset,
        message_key=_as_text(record.get("key")),
        message_value=_as_text(record.get("payload")),
        headers=_kcat_headers(record.get("headers")),
        enqueued_at=_kcat_time(record),
        resume=after,
    )


def read_kcat(path: Path, resume: ResumePoint = ResumePoint()) -> Iterator[RawMessage]:
    """One Kafka record per line of `kcat -C -J` output."""
    uri = file_uri(path)
    for number, line, after in _lines(path, resume):
        try:
            record = json.loads(line.decode("utf-8"))
            yield _kcat_message(record, after)
        except (UnicodeDecodeError, ValueError) as exc:
            reason = "it is not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
            if isinstance(exc, json.JSONDecodeError):
                reason = "it is not JSON"
            error = f"line {number} is not a kcat -J JSON envelope: {reason}"
            yield _plain_line(uri, number, line, after, error)


# -- Event Hubs Capture -----------------------------------------------------
def parse_enqueued_time(value: Any) -> datetime | None:
    """Capture's EnqueuedTimeUtc: .NET form `9/21/2021 1:42:04 AM` or ISO 8601, as UTC."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    for pattern in ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %H:%M:%S"):
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def capture_location(path: Path) -> tuple[str, int] | None:
    """(`eventhubs://namespace/hub`, partition) if the path follows the capture
    layout `{namespace}/{hub}/{partition}/{yyyy}/{MM}/{dd}/{HH}/{mm}/{ss}.avro`."""
    parts = Path(path).resolve().parts
    if len(parts) < 10 or not CAPTURE_PATH.match("/".join(parts[-7:])):
        return None
    return f"eventhubs://{parts[-9]}/{parts[-8]}", int(parts[-7])


def _avro_records(path: Path) -> Iterator[dict[str, Any]]:
    import fastavro

    with Path(path).open("rb") as handle:
        try:
            reader = fastavro.reader(handle)
            fields = {f["name"] for f in reader.writer_schema.get("fields", [])}
        except Exception as exc:  # fastavro raises several types for a bad header
            raise ContainerError(f"{path}: not a readable Event Hubs Capture Avro file: {exc}") from exc
        if "Body" not in fields:
            raise ContainerError(
                f"{path}: not a readable Event Hubs Capture Avro file: its schema has no Body field "
                f"(fields: {', '.join(sorted(fields)) or 'none'})"
            )
        try:
            yield from reader
        except Exception as exc:
            raise ContainerError(f"{path}: not a readable Event Hubs Capture Avro file: {exc}") from exc


def read_eventhubs_avro(path: Path, resume: ResumePoint = ResumePoint()) -> Iterator[RawMessage]:
    """One message per EventData record of a capture file; a 0-byte file is an idle capture."""
    if Path(path).stat().st_size == 0:
        return
    location = capture_location(path)
    uri = file_uri(path)
    for index, record in enumerate(_avro_records(path), start=1):
        if index <= resume.records:
            continue
        system = record.get("SystemProperties") or {}
        if location is not None:
            source_uri, partition = location
        else:
            source_uri = uri
            partition_text = _as_text(system.get("x-opt-partition-id"))
            partition = int(partition_text) if partition_text and partition_text.isdigit() else None
        offset_text = str(record.get("Offset") or "")
        offset = int(offset_text) if offset_text.isdigit() else int(record.get("SequenceNumber") or 0)
        key = system.get("x-opt-kafka-key", system.get("x-opt-partition-key"))
        headers = {str(k): _as_text(v) or "" for k, v in (record.get("Properties") or {}).items()}
        body = record.get("Body")
        value: str | None = None
        if body is not None:
            value, encoded = decode_text(body if isinstance(body, bytes) else str(body).encode("utf-8"))
            if encoded:
                headers[ENCODING_HEADER] = "base64"
        yield RawMessage(
            message_id=make_message_id(source_uri, partition, offset)
            if location is not None
            else make_message_id(uri, None, index),
            source_uri=source_uri,
            source_partition=partition,
            source_offset=offset,
            message_key=_as_text(key),
            message_value=value,
            headers=headers or None,
            enqueued_at=parse_enqueued_time(record.get("EnqueuedTimeUtc")),
            resume=ResumePoint(records=index),
        )


READERS = {"jsonl": read_jsonl, "kcat": read_kcat, "eventhubs-avro": read_eventhubs_avro}


def iter_messages(container: str, path: Path, resume: ResumePoint = ResumePoint()) -> Iterator[RawMessage]:
    """The messages of one file in a container, from a resume point on."""
    try:
        reader = READERS[container]
    except KeyError:
        raise ValueError(
            f"unknown container {container!r}; expected one of {', '.join(CONTAINERS)}"
        ) from None
    return reader(path, resume)
