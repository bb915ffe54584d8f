"""Append the messages of container files to a bronze table, idempotently.

I/O at the edges: files are read by :mod:`python_ingest.containers`
(streaming), rows go to Iceberg in chunks of bounded size, and every chunk is
checkpointed (see :mod:`python_ingest.checkpoints`), so driver memory stays
bounded whatever the file size and a re-run lands only what is new.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from python_ingest import engine_writes
from python_ingest.bronze import BRONZE_FORMATS, FORMATS, BronzeTable
from python_ingest.checkpoints import CheckpointStore, FileState, file_head
from python_ingest.containers import (
    CONTAINERS,
    DEFAULT_MAX_MESSAGE_BYTES,
    LINE_CONTAINERS,
    ContainerError,
    RawMessage,
    ResumePoint,
    file_uri,
    iter_messages,
    past_blank_lines,
)
from python_ingest.input_check import InputCheck

AUTO = "auto"  # land --format auto: each message's producer recognised by its shape
CHUNK_PROPERTY = "cdc.ingest-chunk"
KILL_ENV = "CDC_LAND_KILL_AT"
DEFAULT_CHUNK_SIZE = 50_000
# A chunk is also handed over once its messages' text reaches this many characters (at most
# 512 MiB of UTF-8), so a chunk of large messages stays small in memory, and each of its Arrow
# text columns below Arrow's 2 GiB per array even with one more message of the largest size
# --max-message-bytes allows (1 GiB).
CHUNK_CHARACTERS = 128 * 2**20
FILE_SUFFIXES = {
    "jsonl": (".jsonl", ".json", ".ndjson", ".txt", ".log"),
    "kcat": (".jsonl", ".json", ".ndjson", ".txt", ".log", ".kcat"),
    "eventhubs-avro": (".avro",),
}


class LandingError(RuntimeError):
    """Wrong input that stops landing before anything is written."""


@dataclass(frozen=True)
class FileSource:
    """Files of one producer format in one container, as `land` is given them: `--format F
    --container C PATH...`, or one `--source F:C:PATH`."""

    format: str
    container: str
    paths: tuple[Path, ...]

    @classmethod
    def parse(cls, text: str) -> FileSource:
        """`FORMAT:CONTAINER:PATH` (the path may hold colons of its own)."""
        source_format, _, rest = text.partition(":")
        container, _, path = rest.partition(":")
        if source_format not in (*FORMATS, AUTO) or container not in CONTAINERS or not path:
            raise ValueError(
                f"{text!r} is not FORMAT:CONTAINER:PATH with FORMAT one of {', '.join((*FORMATS, AUTO))} "
                f"and CONTAINER one of {', '.join(CONTAINERS)}"
            )
        return cls(source_format, container, (Path(path),))

    @property
    def tables(self) -> tuple[str, ...]:
        """The bronze tables it lands into: auto lands each message into its producer's."""
        return BRONZE_FORMATS if self.format == AUTO else (self.format,)

    def files(self) -> list[Path]:
        return expand_paths(self.paths, self.container)


@dataclass
class LandReport:
    table: str
    batch_id: str
    files: int = 0
    landed: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # "<file> from <where>", files read on mid-way

    def summary(self) -> str:
        text = (
            f"{self.table}: landed {self.landed} message(s), skipped {self.skipped} already landed, "
            f"from {self.files} file(s) (batch {self.batch_id})"
        )
        if self.errors:
            text += f"; {len(self.errors)} file(s) failed"
        if self.resumed:
            text += f"; resumed {len(self.resumed)} file(s) where an earlier landing stopped:"
            text += "".join(f"\n  resumed {where}" for where in self.resumed)
        return text


@dataclass
class WatchState:
    """What `land --watch` keeps between its passes over a table's files, each as (size,
    mtime_ns): files it found landed to their end, and files it refused because they
    changed. Either is passed over at once while it stays as it was."""

    quiet: dict[str, tuple[int, int]] = field(default_factory=dict)
    refused: dict[str, tuple[int, int]] = field(default_factory=dict)
    # A line file's last line without its line ending lands once the file has not changed
    # for this long; until then its writer may be in the middle of it.
    settle_seconds: float = 30.0


def is_complete(state: FileState, container: str, size: int) -> bool:
    """Whether a file of `size` bytes holds nothing beyond what its checkpoint has landed: its
    last landed position is its end. A line file's position is a byte offset; a capture file's
    is a record count, so it is complete when a landing read it to its end at this size."""
    if container in LINE_CONTAINERS:
        return state.resume.byte_offset >= size
    return state.at_end and state.size == size


class KillSwitch:
    """Fault-injection hook for the crash tests: ``$CDC_LAND_KILL_AT=<point>:<n>`` makes the
    process SIGKILL itself the n-th time landing reaches ``point``. Points: ``read`` (a message
    was read into the open chunk, nothing of it written; the chunks before it are committed
    first, so that the point is the same whatever the writer thread's pace), ``before-append``
    (the chunk's pending checkpoint is saved, its Iceberg append not made), ``after-append``
    (appended, checkpoint not committed), ``after-commit`` (between chunks)."""

    POINTS = ("read", "before-append", "after-append", "after-commit")

    def __init__(self, spec: str | None) -> None:
        self.point, self.count, self.at = None, 0, 0
        if not spec:
            return
        point, _, n = spec.partition(":")
        if point not in self.POINTS or not n.isdigit() or int(n) < 1:
            raise LandingError(
                f"{KILL_ENV}={spec!r}: expected <point>:<n> with point one of {', '.join(self.POINTS)}"
            )
        self.point, self.at = point, int(n)

    def reached(self, point: str, settle: Callable[[], None] | None = None) -> None:
        """Count a point; the n-th time, call `settle` (if given), then die."""
        if point == self.point:
            self.count += 1
            if self.count == self.at:
                if settle is not None:
                    settle()
                os.kill(os.getpid(), signal.SIGKILL)


class StopFlag:
    """Set by SIGTERM or SIGINT: `land --watch` finishes the chunk it is reading (it commits
    what it has read), then exits."""

    def __init__(self) -> None:
        self.stopped = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)

    def _stop(self, *_: Any) -> None:
        self.stopped = True

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stopped and time.monotonic() < deadline:
            time.sleep(min(0.2, deadline - time.monotonic()))


def new_batch_id(now: datetime) -> str:
    """One id per land run: sortable by time, unique."""
    return f"{now:%Y%m%dT%H%M%S}Z-{uuid.uuid4().hex[:12]}"


def is_hidden(name: str) -> bool:
    """Names that landing a directory skips, as Spark's file sources do: `_SUCCESS`,
    `.part.tmp`, the generators' `_expected_current.json`."""
    return name.startswith(("_", "."))


def expand_paths(paths: Iterable[Path], container: str) -> list[Path]:
    """Files to land: the files named, and below each directory (recursively) the files
    with the container's suffixes, except hidden ones (a name, or a folder's name below
    the directory, starting with `_` or `.`), in a stable order."""
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
                and not any(is_hidden(part) for part in p.relative_to(path).parts)
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
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        out: TextIO = sys.stdout,
        now: datetime | None = None,
        accept: Callable[[RawMessage], bool] | None = None,
        stop: StopFlag | None = None,
        watch: WatchState | None = None,
        check: InputCheck | None = None,
    ) -> None:
        self.spark = spark
        self.table = table
        self.checkpoints = checkpoints
        self.chunk_size = chunk_size
        self.max_message_bytes = max_message_bytes
        self.out = out
        self.accept = accept  # lands only the messages it accepts (land --format auto)
        self.ingested_at = now or datetime.now(UTC)
        self.report = LandReport(table.qualified_name, new_batch_id(self.ingested_at))
        self._messages: list[RawMessage] = []  # the open chunk
        self._characters = 0  # of its message values
        self._states: dict[str, FileState] = {}
        self._chunks = 0
        self.kill_switch = KillSwitch(os.environ.get(KILL_ENV))
        self.stop = stop  # land --watch: stop reading when set, commit what was read
        self.watch = watch  # land --watch: what earlier passes found, and a line per commit
        self.check = check  # refuses a new file that is not text or is another producer's
        self._appender: Any = None  # the table, for appends without a Spark job (iceberg_files)
        self._writer: ThreadPoolExecutor | None = None
        self._writing: Future | None = None
        self._since = time.monotonic()
        # On the lakehouse's warm engine (Spark Connect), where the engine appends: its address
        # and this run's session there, kept with each pending chunk (engine_writes). Empty for
        # this process's own Spark (active_session gives Connect sessions of the engine only).
        from dbt.adapters.spark_embedded.api import remote_url

        url = remote_url(spark)
        self._engine = engine_writes.record(spark, url) if url else {}

    # -- table -----------------------------------------------------------
    def prepare(self) -> None:
        """Create the table if absent; settle a chunk a crashed run left pending."""
        self.spark.sql(f"create database if not exists {self.table.schema}")
        try:
            self.spark.sql(self.table.create_statement())
        except Exception:  # a dbt build's run-start hook created it at the same moment
            if not self.spark.catalog.tableExists(self.table.qualified_name):
                raise
        pending = self.checkpoints.pending
        if pending is not None:
            if pending.engine:  # appended by the warm engine, which may still be at it
                engine_writes.settle(pending.engine, pending.chunk_id)
            found = self.spark.sql(
                f"select count(*) from {self.table.qualified_name}.snapshots "
                f"where summary['{CHUNK_PROPERTY}'] = '{pending.chunk_id}'"
            ).first()[0]
            if found:
                self.checkpoints.commit()
            else:
                self.checkpoints.discard()

    def _flush(self) -> None:
        """Hand the open chunk to the writer thread, once it has committed the chunk before:
        while Spark writes one chunk, the next one is read. Chunks still commit one at a time,
        in order, each in two phases (append_chunk)."""
        if not self._messages and not self._states:
            return
        messages, states = self._messages, dict(self._states)
        self._messages, self._states, self._characters = [], {}, 0
        self._written()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="land-writer")
        self._writing = self._writer.submit(self._write_chunk, messages, states)

    def _written(self) -> None:
        """Wait until the chunk the writer thread has is committed (raising what it raised)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def _write_chunk(self, messages: list[RawMessage], states: dict[str, FileState]) -> None:
        if not self._engine:  # this process's own Spark, not the warm engine (Spark Connect)
            # The JVM keeps the active session per thread; Iceberg's writes look for it.
            self.spark._jvm.SparkSession.setActiveSession(self.spark._jsparkSession)
        if self._appender is None:
            from python_ingest.iceberg_files import IcebergAppender, SparkAppender

            appender = SparkAppender if self._engine else IcebergAppender
            self._appender = appender(self.spark, self.table.qualified_name)
        write = None
        if messages:
            data = self._arrow_chunk(messages)
            if self._appender.direct:  # a Parquet file of pyarrow's, committed by Iceberg's API

                def write(chunk_id: str) -> None:
                    self._appender.append(data, {CHUNK_PROPERTY: chunk_id})

            else:  # a cluster (its executors write), or a warehouse on an object store (S3A)
                write = self.frame_writer(self.spark.createDataFrame(data))
        self.append_chunk(write, len(messages), files=states)

    def frame_writer(self, frame: Any) -> Callable[[str], None]:
        """How a chunk's DataFrame (in the table's columns) is appended by Spark."""

        def write(chunk_id: str) -> None:
            with engine_writes.tagged(self.spark, chunk_id) if self._engine else contextlib.nullcontext():
                frame.writeTo(self.table.qualified_name).option(
                    f"snapshot-property.{CHUNK_PROPERTY}", chunk_id
                ).append()

        return write

    def _arrow_chunk(self, messages: list[RawMessage]) -> Any:
        """A chunk's messages as one Arrow table in the bronze table's columns (with their
        Iceberg field ids), built column by column."""
        import pyarrow as pa

        constant = {"ingested_at": self.ingested_at, "ingest_batch_id": self.report.batch_id}
        arrays = []
        for column in self._appender.schema:
            if column.name in constant:
                values = [constant[column.name]] * len(messages)
            else:
                values = [getattr(message, column.name, None) for message in messages]
            if pa.types.is_map(column.type):  # headers: Arrow takes a map as (key, value) pairs
                values = [None if value is None else list(value.items()) for value in values]
            arrays.append(pa.array(values, type=column.type))
        return pa.Table.from_arrays(arrays, schema=self._appender.schema)

    def append_chunk(
        self,
        write: Callable[[str], None] | None,
        count: int | None,
        files: dict[str, FileState] | None = None,
        offsets: dict[str, int] | None = None,
        topic_ids: dict[str, str] | None = None,
    ) -> int:
        """Append one chunk (`write(chunk_id)` appends its rows in one Iceberg snapshot tagged
        with the chunk id; None: positions only) and move the checkpoint with it, in two phases
        (see :mod:`python_ingest.checkpoints`). Returns the rows appended: `count`, or when
        None, what the chunk's snapshot says."""
        self._chunks += 1
        chunk_id = f"{self.report.batch_id}:{self._chunks}"
        self.checkpoints.begin(chunk_id, files or {}, offsets, topic_ids, self._engine)
        self.kill_switch.reached("before-append")
        if write is not None:
            write(chunk_id)
            if count is None:
                count = self._snapshot_records(chunk_id)
        self.kill_switch.reached("after-append")
        self.checkpoints.commit()
        self.kill_switch.reached("after-commit")
        self.report.landed += count or 0
        if self.watch is not None and (count or files):
            seconds, self._since = time.monotonic() - self._since, time.monotonic()
            print(
                f"{self.table.qualified_name}: committed {count or 0:,} message(s) from "
                f"{len(files or {}) or len(offsets or {})} file(s) in {seconds:.1f}s "
                f"({(count or 0) / max(seconds, 1e-3):,.0f} messages/s)",
                file=self.out,
                flush=True,
            )
        return count or 0

    def _snapshot_records(self, chunk_id: str) -> int:
        """Rows the snapshot of a chunk added (0 when an empty append made no snapshot)."""
        found = self.spark.sql(
            "select sum(cast(summary['added-records'] as bigint)) "
            f"from {self.table.qualified_name}.snapshots where summary['{CHUNK_PROPERTY}'] = '{chunk_id}'"
        ).first()[0]
        return int(found or 0)

    # -- files -----------------------------------------------------------
    def land_file(self, path: Path, container: str) -> None:
        key = file_uri(path)
        stat = path.stat()
        size, seen = stat.st_size, (stat.st_size, stat.st_mtime_ns)
        if self.watch is not None and seen in (self.watch.quiet.get(key), self.watch.refused.get(key)):
            return
        state = self.checkpoints.files.get(key)
        if state is None and self.check is not None and self.check.refusal(path, seen):
            return  # not landed, and no checkpoint: a run with the right flags lands it
        # --force on a file the check would refuse: each message says what the file looked like.
        forced = self.check.forced_header(path) if state is None and self.check is not None else None
        self.report.files += 1
        if state is not None:
            head_length, head_sha = file_head(path, state.head_length)
            if (
                size < max(state.size, state.resume.byte_offset)
                or head_length != state.head_length
                or head_sha != state.head_sha256
            ):
                self.report.errors.append(
                    f"{path}: the file changed since it was landed (it is shorter or its first bytes "
                    "differ); landing it again would mix two versions. Land the new content under a "
                    "new file name."
                )
                print(f"error: {self.report.errors[-1]}", file=self.out, flush=True)
                if self.watch is not None:
                    self.watch.refused[key] = seen
                return
            self.report.skipped += state.messages
            if is_complete(state, container, size):
                if self.watch is not None:
                    self.watch.quiet[key] = seen
                return
            where = state.resume.describe(container, size)
            self.report.resumed.append(f"{path} from {where}")
            print(
                f"  {path.name}: resuming from {where}, after {state.messages:,} message(s) landed before",
                file=self.out,
                flush=True,
            )
        resume = state.resume if state else ResumePoint()
        landed_before = state.messages if state else 0
        head_length, head_sha = (state.head_length, state.head_sha256) if state else file_head(path)
        new_messages = 0
        after = resume  # where the last message read ends

        def reached() -> FileState:  # the file's state after the last message read
            return FileState(after, landed_before + new_messages, size, head_length, head_sha)

        settling = self.watch is not None and time.time() - stat.st_mtime < self.watch.settle_seconds
        try:
            for message in iter_messages(container, path, resume, self.max_message_bytes, settling):
                if forced:
                    message = replace(message, headers={**(message.headers or {}), **forced})
                if self.accept is None or self.accept(message):
                    self._messages.append(message)
                    self._characters += len(message.message_value or "")
                    new_messages += 1
                    self.kill_switch.reached("read", self._written)
                after = message.resume
                if len(self._messages) >= self.chunk_size or self._characters >= CHUNK_CHARACTERS:
                    self._states[key] = reached()
                    self._flush()
                    if self.watch is None:
                        self._progress(path, message.resume, size)
                if self.stop is not None and self.stop.stopped:
                    self._states[key] = reached()
                    return  # land() commits what was read
        except ContainerError as exc:
            if after != resume:
                self._states[key] = reached()
            self._flush()  # keep what was read before the damage
            self.report.errors.append(str(exc))
            print(f"error: {exc}", file=self.out, flush=True)
            if self.watch is not None:  # tried again once the file changes
                self.watch.refused[key] = seen
            return
        # The whole file was read: its state is its end (past trailing blank lines).
        end = after
        if container in LINE_CONTAINERS:
            end = past_blank_lines(path, end)
        self._states[key] = FileState(
            end, landed_before + new_messages, size, head_length, head_sha, at_end=True
        )
        if self.watch is not None and (container not in LINE_CONTAINERS or end.byte_offset >= size):
            self.watch.quiet[key] = seen

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
        """Land the files. Runs into one table take turns (its checkpoint lock); the Iceberg
        commits of runs into different tables, and of builds, go on side by side."""

        def waiting() -> None:
            print(f"  waiting for another land run into {self.table.qualified_name} to finish", file=self.out)

        with self.checkpoints.locked(waiting):
            self.prepare()
            try:
                for path in files:
                    if self.stop is not None and self.stop.stopped:
                        break
                    self.land_file(path, container)
                self._flush()
            finally:
                self._written()  # every chunk committed (or its failure raised) before the lock goes
                if self._writer is not None:
                    self._writer.shutdown()
        return self.report
