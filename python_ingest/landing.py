"""Append the messages of container files to a bronze table, idempotently.

I/O at the edges: files are read by :mod:`python_ingest.containers`
(streaming), rows go to Iceberg in chunks of bounded size, and every chunk is
checkpointed (see :mod:`python_ingest.checkpoints`), so driver memory stays
bounded whatever the file size and a re-run lands only what is new.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from python_ingest.bronze import BronzeTable
from python_ingest.checkpoints import CheckpointStore, FileState, file_head
from python_ingest.containers import ContainerError, RawMessage, ResumePoint, file_uri, iter_messages

CHUNK_PROPERTY = "cdc.ingest-chunk"
DEFAULT_CHUNK_SIZE = 50_000
FILE_SUFFIXES = {
    "jsonl": (".jsonl", ".json", ".ndjson", ".txt", ".log"),
    "kcat": (".jsonl", ".json", ".ndjson", ".txt", ".log", ".kcat"),
    "eventhubs-avro": (".avro",),
}


class LandingError(RuntimeError):
    """Wrong input that stops landing before anything is written."""


@dataclass
class LandReport:
    table: str
    batch_id: str
    files: int = 0
    landed: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"{self.table}: landed {self.landed} message(s), skipped {self.skipped} already landed, "
            f"from {self.files} file(s) (batch {self.batch_id})"
        )
        if self.errors:
            text += f"; {len(self.errors)} file(s) failed"
        return text


def new_batch_id(now: datetime) -> str:
    """One id per land run: sortable by time, unique."""
    return f"{now:%Y%m%dT%H%M%S}Z-{uuid.uuid4().hex[:12]}"


def expand_paths(paths: Iterable[Path], container: str) -> list[Path]:
    """Files to land: the files named, and the matching files below each
    directory (recursively, hidden ones excluded), in a stable order."""
    files: list[Path] = []
    for path in paths:
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = [
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix.lower() in FILE_SUFFIXES[container]
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
            files.extend(found)
        else:
            raise LandingError(f"path not found: {path}")
    unique: dict[Path, None] = dict.fromkeys(p.resolve() for p in files)
    return list(unique)


class Lander:
    """Lands files into one bronze table within one batch."""

    def __init__(
        self,
        spark: Any,
        table: BronzeTable,
        checkpoints: CheckpointStore,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        out: TextIO = sys.stdout,
        now: datetime | None = None,
        accept: Callable[[RawMessage], bool] | None = None,
    ) -> None:
        self.spark = spark
        self.table = table
        self.checkpoints = checkpoints
        self.chunk_size = chunk_size
        self.out = out
        self.accept = accept  # lands only the messages it accepts (land --format auto)
        self.ingested_at = now or datetime.now(UTC)
        self.report = LandReport(table.qualified_name, new_batch_id(self.ingested_at))
        self._rows: list[tuple] = []
        self._states: dict[str, FileState] = {}
        self._chunks = 0

    # -- table -----------------------------------------------------------
    def prepare(self) -> None:
        """Create the table if absent; settle a chunk a crashed run left pending."""
        self.spark.sql(f"create database if not exists {self.table.schema}")
        self.spark.sql(self.table.create_statement())
        pending = self.checkpoints.pending
        if pending is not None:
            found = self.spark.sql(
                f"select count(*) from {self.table.qualified_name}.snapshots "
                f"where summary['{CHUNK_PROPERTY}'] = '{pending.chunk_id}'"
            ).first()[0]
            if found:
                self.checkpoints.commit()
            else:
                self.checkpoints.discard()

    def _row(self, message: RawMessage) -> tuple:
        values = {
            **{name: getattr(message, name, None) for name, _ in self.table.columns},
            "ingested_at": self.ingested_at,
            "ingest_batch_id": self.report.batch_id,
        }
        return tuple(values[name] for name, _ in self.table.columns)

    def _flush(self) -> None:
        if not self._rows and not self._states:
            return
        self._chunks += 1
        chunk_id = f"{self.report.batch_id}:{self._chunks}"
        self.checkpoints.begin(chunk_id, dict(self._states))
        if self._rows:
            frame = self.spark.createDataFrame(self._rows, schema=self.table.ddl_columns, verifySchema=False)
            frame.writeTo(self.table.qualified_name).option(
                f"snapshot-property.{CHUNK_PROPERTY}", chunk_id
            ).append()
        self.checkpoints.commit()
        self.report.landed += len(self._rows)
        self._rows = []
        self._states = {}

    # -- files -----------------------------------------------------------
    def land_file(self, path: Path, container: str) -> None:
        key = file_uri(path)
        size = path.stat().st_size
        state = self.checkpoints.files.get(key)
        self.report.files += 1
        if state is not None:
            head_length, head_sha = file_head(path, state.head_length)
            if size < state.size or head_length != state.head_length or head_sha != state.head_sha256:
                self.report.errors.append(
                    f"{path}: the file changed since it was landed (it is shorter or its first bytes "
                    "differ); landing it again would mix two versions. Land the new content under a "
                    "new file name."
                )
                print(f"error: {self.report.errors[-1]}", file=self.out)
                return
            self.report.skipped += state.messages
            if size == state.size:
                return
        resume = state.resume if state else ResumePoint()
        landed_before = state.messages if state else 0
        head_length, head_sha = (state.head_length, state.head_sha256) if state else file_head(path)
        new_messages = 0
        try:
            for message in iter_messages(container, path, resume):
                if self.accept is None or self.accept(message):
                    self._rows.append(self._row(message))
                    new_messages += 1
                self._states[key] = FileState(
                    message.resume, landed_before + new_messages, size, head_length, head_sha
                )
                if len(self._rows) >= self.chunk_size:
                    self._flush()
                    self._progress(path, message.resume, size)
        except ContainerError as exc:
            self._flush()  # keep what was read before the damage
            self.report.errors.append(str(exc))
            print(f"error: {exc}", file=self.out)
            return
        last = self._states.get(key) or self.checkpoints.files.get(key)
        final_resume = last.resume if last else resume
        self._states[key] = FileState(final_resume, landed_before + new_messages, size, head_length, head_sha)

    def _progress(self, path: Path, resume: ResumePoint, size: int) -> None:
        where = (
            f"{resume.byte_offset / 2**20:,.1f} of {size / 2**20:,.1f} MiB"
            if resume.byte_offset
            else f"{resume.records:,} records"
        )
        print(
            f"  {path.name}: {self.report.landed:,} messages landed so far ({where})",
            file=self.out,
            flush=True,
        )

    def land(self, files: Iterable[Path], container: str) -> LandReport:
        self.prepare()
        for path in files:
            self.land_file(path, container)
        self._flush()
        return self.report
