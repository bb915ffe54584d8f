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
DEFAULT_MAX_MESSAGE_BYTES = 64 * 2**20  # land --max-message-bytes
LARGEST_MAX_MESSAGE_BYTES = 2**30  # Spark's strings end at 2 GiB; Arrow's text arrays too
MAX_PARTITION, MAX_OFFSET = 2**31 - 1, 2**63 - 1  # bronze: source_partition int, source_offset bigint
LINE_CONTAINERS = ("jsonl", "kcat")  # positions are byte offsets; eventhubs-avro counts records
ENCODING_HEADER = "x-cdc-encoding"
INGEST_ERROR_HEADER = "x-cdc-ingest-error"
SURROGATE = re.compile("[\ud800-\udfff]")
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
    """A key, header or other envelope value as text: JSON for what is not a string, a
    replacement character for a lone surrogate (a JSON escape no UTF-8 text can hold)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return decode_text(value)[0]
    if not isinstance(value, str):
        value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value if is_utf8_text(value) else SURROGATE.sub("\ufffd", value)


def is_utf8_text(text: str) -> bool:
    """Whether a string can be written as UTF-8 (a JSON `\\ud800` escape decodes to one that cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _value_text(value: Any, headers: dict[str, str]) -> str | None:
    """A message value as landed: text as it is; one that cannot be UTF-8 (lone surrogates) as
    the base64 of its bytes, with `x-cdc-encoding: base64` added to `headers`."""
    if isinstance(value, bytes):
        text, encoded = decode_text(value)
    elif isinstance(value, str) and not is_utf8_text(value):
        text, encoded = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii"), True
    else:
        text, encoded = _as_text(value), False
    if encoded:
        headers[ENCODING_HEADER] = "base64"
    return text


def _failure(exc: BaseException) -> str:
    """Why a record could not be read, in a few words."""
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return "it is not JSON"
    if isinstance(exc, RecursionError):
        return "it is nested deeper than the JSON parser allows"
    text = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:200] + "…"


# -- line containers --------------------------------------------------------
@dataclass(frozen=True)
class Line:
    number: int  # 1-based, blank lines counted
    data: bytes  # without the line ending; at most `max_bytes`
    after: ResumePoint
    length: int  # of the whole line as written
    cut: bool = False  # longer than the size limit: `data` is its first bytes


def _lines(path: Path, resume: ResumePoint, max_bytes: int, whole_lines: bool = False) -> Iterator[Line]:
    """Non-blank lines from a resume point. A line longer than `max_bytes` is cut to that
    length (the rest is read past, never held in memory). With `whole_lines`, a last line
    without its line ending is left for later: a writer may be in the middle of it."""
    offset, number = resume.byte_offset, resume.line_number
    with Path(path).open("rb") as handle:
        handle.seek(offset)
        while raw := handle.readline(max_bytes + 1):
            length, cut = len(raw), len(raw) > max_bytes and not raw.endswith(b"\n")
            ended = raw.endswith(b"\n")
            if cut:
                while rest := handle.readline(2**20):
                    length += len(rest)
                    if ended := rest.endswith(b"\n"):
                        break
                raw = raw[:max_bytes]
            if whole_lines and not ended:
                return
            offset += length
            number += 1
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                yield Line(number, line, ResumePoint(byte_offset=offset, line_number=number), length, cut)


def past_blank_lines(path: Path, resume: ResumePoint) -> ResumePoint:
    """The point after the blank lines that follow `resume`: where a reader that
    has yielded its last message stands once it has consumed the file's end."""
    offset, number = resume.byte_offset, resume.line_number
    with Path(path).open("rb") as handle:
        handle.seek(offset)
        while (raw := handle.readline(4096)) and not raw.strip():
            offset += len(raw)
            number += 1
    return ResumePoint(byte_offset=offset, line_number=number)


def _cut_text(data: bytes) -> str | None:
    """A line cut at the size limit as text, dropping a character it cut in two; None if
    it is not UTF-8 anyway."""
    for drop in range(4):
        try:
            return data[: len(data) - drop].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _plain_line(uri: str, line: Line, max_bytes: int, error: str | None = None) -> RawMessage:
    headers: dict[str, str] = {}
    if line.cut:
        text = _cut_text(line.data)
        value = text if text is not None else _value_text(line.data, headers)
        error = (
            f"line {line.number} is {line.length:,} bytes, over the limit of {max_bytes:,} "
            "(land --max-message-bytes): only its first bytes were landed"
        )
    else:
        value = _value_text(line.data, headers)
    if error:
        headers[INGEST_ERROR_HEADER] = error
    return RawMessage(
        message_id=make_message_id(uri, None, line.number),
        source_uri=uri,
        source_partition=None,
        source_offset=line.number,
        message_key=None,
        message_value=value,
        headers=headers or None,
        enqueued_at=None,
        resume=line.after,
    )


def read_jsonl(
    path: Path,
    resume: ResumePoint = ResumePoint(),
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    whole_lines: bool = False,
) -> Iterator[RawMessage]:
    """One message per non-blank line, exactly as written."""
    uri = file_uri(path)
    for line in _lines(path, resume, max_bytes, whole_lines):
        yield _plain_line(uri, line, max_bytes)


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
    try:
        return datetime.fromtimestamp(ts / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):  # beyond the years a timestamp can hold
        return None


def _kcat_message(record: Any, after: ResumePoint) -> RawMessage:
    """A kcat -J envelope as a message; ValueError says what is wrong with it."""
    if not isinstance(record, dict):
        raise ValueError("it is not a JSON object")
    topic, partition, offset = record.get("topic"), record.get("partition"), record.get("offset")
    if not isinstance(topic, str) or not topic:
        raise ValueError("it has no topic")
    for name, value, most in (("partition", partition, MAX_PARTITION), ("offset", offset, MAX_OFFSET)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"its {name} is not an integer")
        if not 0 <= value <= most:
            raise ValueError(f"its {name} {value} is not between 0 and {most}")
    uri = f"kafka:{_as_text(topic)}"
    headers = _kcat_headers(record.get("headers"))
    value_headers: dict[str, str] = {}
    value = _value_text(record.get("payload"), value_headers)
    return RawMessage(
        message_id=make_message_id(uri, partition, offset),
        source_uri=uri,
        source_partition=partition,
        source_offset=offset,
        message_key=_as_text(record.get("key")),
        message_value=value,
        headers={**(headers or {}), **value_headers} or headers,
        enqueued_at=_kcat_time(record),
        resume=after,
    )


def read_kcat(
    path: Path,
    resume: ResumePoint = ResumePoint(),
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    whole_lines: bool = False,
) -> Iterator[RawMessage]:
    """One Kafka record per line of `kcat -C -J` output. A line that is not a kcat envelope
    (whatever the reason: not JSON, nested too deep, fields out of range) lands as raw text
    with the reason in `x-cdc-ingest-error`."""
    uri = file_uri(path)
    for line in _lines(path, resume, max_bytes, whole_lines):
        if line.cut:
            yield _plain_line(uri, line, max_bytes)
            continue
        try:
            message = _kcat_message(json.loads(line.data.decode("utf-8")), line.after)
        except Exception as exc:  # noqa: BLE001 - any damage: the line lands as text, with why
            error = f"line {line.number} is not a kcat -J JSON envelope: {_failure(exc)}"
            message = _plain_line(uri, line, max_bytes, error)
        yield message


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
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def capture_location(path: Path) -> tuple[str, int] | None:
    """(`eventhubs://namespace/hub`, partition) if the path follows the capture
    layout `{namespace}/{hub}/{partition}/{yyyy}/{MM}/{dd}/{HH}/{mm}/{ss}.avro`."""
    parts = Path(path).resolve().parts
    if len(parts) < 10 or not CAPTURE_PATH.match("/".join(parts[-7:])) or int(parts[-7]) > MAX_PARTITION:
        return None
    return f"eventhubs://{parts[-9]}/{parts[-8]}", int(parts[-7])


def _avro_records(path: Path) -> Iterator[dict[str, Any]]:
    import fastavro

    with Path(path).open("rb") as handle:
        try:
            reader = fastavro.reader(handle)
            fields = {f["name"] for f in reader.writer_schema.get("fields", [])}
        except Exception as exc:  # noqa: BLE001 - fastavro raises several types for a bad header
            raise ContainerError(
                f"{path}: not a readable Event Hubs Capture Avro file: {_failure(exc)}"
            ) from exc
        if "Body" not in fields:
            raise ContainerError(
                f"{path}: not a readable Event Hubs Capture Avro file: its schema has no Body field "
                f"(fields: {', '.join(sorted(fields)) or 'none'})"
            )
        read = 0
        try:
            for record in reader:
                read += 1
                yield record
        except Exception as exc:  # noqa: BLE001 - a damaged block, a bad sync marker, a cut file
            raise ContainerError(
                f"{path}: the Event Hubs Capture Avro file is damaged at record {read + 1:,} (byte "
                f"{handle.tell():,}); the {read:,} record(s) before it were read: {_failure(exc)}"
            ) from exc


def _capture_offset(record: dict[str, Any], index: int) -> int:
    """The event's offset (`Offset`, else `SequenceNumber`, else its place in the file)."""
    for value in (str(record.get("Offset") or ""), record.get("SequenceNumber")):
        if isinstance(value, str) and value.isdigit() and int(value) <= MAX_OFFSET:
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_OFFSET:
            return value
    return index


def read_eventhubs_avro(
    path: Path, resume: ResumePoint = ResumePoint(), max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> Iterator[RawMessage]:
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
            partition = (
                int(partition_text)
                if partition_text and partition_text.isdigit() and int(partition_text) <= MAX_PARTITION
                else None
            )
        offset = _capture_offset(record, index)
        key = system.get("x-opt-kafka-key", system.get("x-opt-partition-key"))
        headers = {str(_as_text(k)): _as_text(v) or "" for k, v in (record.get("Properties") or {}).items()}
        body = record.get("Body")
        value: str | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else str(body).encode("utf-8", "surrogatepass")
            if len(data) > max_bytes:
                headers[INGEST_ERROR_HEADER] = (
                    f"record {index} is {len(data):,} bytes, over the limit of {max_bytes:,} "
                    "(land --max-message-bytes): only its first bytes were landed"
                )
                value = _cut_text(data[:max_bytes])
                data = data[:max_bytes] if value is None else b""
            value = value if value is not None else _value_text(data, headers)
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


def iter_messages(
    container: str,
    path: Path,
    resume: ResumePoint = ResumePoint(),
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    whole_lines: bool = False,
) -> Iterator[RawMessage]:
    """The messages of one file in a container, from a resume point on; a record longer than
    `max_bytes` is cut to it and marked (`x-cdc-ingest-error`). `whole_lines`: in a line
    container, a last line without its line ending is not read yet (see _lines)."""
    try:
        reader = READERS[container]
    except KeyError:
        raise ValueError(
            f"unknown container {container!r}; expected one of {', '.join(CONTAINERS)}"
        ) from None
    if container in LINE_CONTAINERS:
        return reader(path, resume, max_bytes, whole_lines)
    return reader(path, resume, max_bytes)
