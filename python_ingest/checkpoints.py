"""Per-file and per-topic-partition landing checkpoints, kept under the lakehouse directory.

For each bronze table, a JSON file records, per landed file, where landing
stopped (byte offset and line number, or Avro records), how many messages it
landed, and a fingerprint of the file's first bytes. A file is complete only
when that position is its end: a JSON-lines or kcat file when the byte offset
is its size, a capture file when a landing read it to its last record at its
present size. Landing a complete file again reads nothing; any other file,
whether landing stopped short of its end (a killed run) or it has grown since,
is read on from where landing stopped. For each Kafka topic partition landed
(`land --kafka`) it records the next offset to land, and the topic's id.

The checkpoint must not claim more, or less, than bronze holds, even if a
run dies between the Iceberg commit and the checkpoint write. So each chunk
is written in two phases: the intended new state is saved as *pending* with a
chunk id, the chunk is appended to Iceberg with that id as a snapshot
property, then the pending state is committed. A later run that finds a
pending state looks for the chunk id in the table's snapshots and commits or
discards it accordingly.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from python_ingest.containers import ResumePoint

HEAD_BYTES = 4096


@dataclass
class FileState:
    resume: ResumePoint
    messages: int  # messages landed from this file so far
    size: int  # file size when this state was recorded
    head_length: int
    head_sha256: str
    # Landing read the file to its end when it was `size` bytes long (a chunk's
    # state in the middle of a file is not at the end).
    at_end: bool = False

    def to_json(self) -> dict:
        return {**asdict(self), "resume": asdict(self.resume)}

    @classmethod
    def from_json(cls, data: dict) -> FileState:
        return cls(**{**data, "resume": ResumePoint(**data["resume"])})


@dataclass
class Pending:
    chunk_id: str
    files: dict[str, FileState] = field(default_factory=dict)
    offsets: dict[str, int] = field(default_factory=dict)  # "<topic>#<partition>" -> next offset
    topic_ids: dict[str, str] = field(default_factory=dict)
    # Written on the lakehouse's warm engine: its Spark Connect address and this run's session
    # there, where the write may outlive a killed run (python_ingest/engine_writes.py).
    engine: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "files": {k: v.to_json() for k, v in self.files.items()},
            "offsets": dict(self.offsets),
            "topic_ids": dict(self.topic_ids),
            "engine": dict(self.engine),
        }

    @classmethod
    def from_json(cls, data: dict) -> Pending:
        files = {k: FileState.from_json(v) for k, v in data["files"].items()}
        return cls(
            data["chunk_id"],
            files,
            dict(data.get("offsets", {})),
            dict(data.get("topic_ids", {})),
            dict(data.get("engine", {})),
        )


def partition_key(topic: str, partition: int) -> str:
    """How a Kafka topic partition is named in the checkpoints."""
    return f"{topic}#{partition}"


def file_head(path: Path, length: int = HEAD_BYTES) -> tuple[int, str]:
    """Length and sha256 of the first ``length`` bytes of a file."""
    with path.open("rb") as handle:
        head = handle.read(length)
    return len(head), hashlib.sha256(head).hexdigest()


class CheckpointStore:
    """The checkpoints of one bronze table. One landing run at a time holds them: `locked()`
    takes the table's lock (other runs into the table wait for it; runs into other tables do
    not) and reads the checkpoints as the previous holder left them."""

    def __init__(self, directory: Path, table_name: str) -> None:
        self.path = directory / f"{table_name}.json"
        self.lock_path = directory / f"{table_name}.lock"
        self.files: dict[str, FileState] = {}
        self.offsets: dict[str, int] = {}
        self.topic_ids: dict[str, str] = {}
        self.pending: Pending | None = None
        self.load()

    def load(self) -> None:
        self.files, self.offsets, self.topic_ids, self.pending = {}, {}, {}, None
        if self.path.is_file():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.files = {k: FileState.from_json(v) for k, v in data.get("files", {}).items()}
            self.offsets = dict(data.get("offsets", {}))
            self.topic_ids = dict(data.get("topic_ids", {}))
            if data.get("pending"):
                self.pending = Pending.from_json(data["pending"])

    @contextlib.contextmanager
    def locked(self, waiting: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold the table's landing lock (calling `waiting` first if another run holds it),
        with the checkpoints read afresh; the kernel releases it when the process ends."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting is not None:
                    waiting()
                fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                self.load()
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "files": {k: v.to_json() for k, v in sorted(self.files.items())},
            "offsets": dict(sorted(self.offsets.items())),
            "topic_ids": dict(sorted(self.topic_ids.items())),
            "pending": None if self.pending is None else self.pending.to_json(),
        }
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def begin(
        self,
        chunk_id: str,
        files: dict[str, FileState],
        offsets: dict[str, int] | None = None,
        topic_ids: dict[str, str] | None = None,
        engine: dict[str, str] | None = None,
    ) -> None:
        """Phase one: record what the chunk about to be committed will change (and, for a
        chunk the warm engine writes, where)."""
        self.pending = Pending(
            chunk_id, files, dict(offsets or {}), dict(topic_ids or {}), dict(engine or {})
        )
        self._save()

    def commit(self) -> None:
        """Phase two: the chunk is in the table; make its state the checkpoint."""
        if self.pending is not None:
            self.files.update(self.pending.files)
            self.offsets.update(self.pending.offsets)
            self.topic_ids.update(self.pending.topic_ids)
            self.pending = None
            self._save()

    def discard(self) -> None:
        """The pending chunk never reached the table."""
        self.pending = None
        self._save()
