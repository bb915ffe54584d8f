"""The file sources of one process landed pass after pass: `land` (one pass), `land --watch` and
`python -m python_ingest pipeline` (a pass per cycle) share this.

Each pass lands, for every source (`--source FORMAT:CONTAINER:PATH`) and each bronze table it
feeds, what its files hold beyond their checkpoints: a Lander per table and pass
(python_ingest/landing.py), its files checked once against the source's format
(python_ingest/input_check.py). Watching (`watch_interval`), a pass passes over the files an
earlier pass found landed to their end, and waits for a line file's unterminated last line to
settle.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from python_ingest.bronze import bronze_table
from python_ingest.checkpoints import CheckpointStore
from python_ingest.detect import detect_format
from python_ingest.input_check import InputCheck
from python_ingest.landing import AUTO, FileSource, Lander, LandingError, StopFlag, WatchState


class SourcesLanding:
    """Lands `sources` into the lakehouse at `home` with `spark`, a pass at a time."""

    def __init__(
        self,
        spark,
        sources: list[FileSource],
        home: Path,
        chunk_size: int,
        max_message_bytes: int,
        force: bool = False,
        watch_interval: float | None = None,
        stop: StopFlag | None = None,
        out: TextIO | None = None,
        announce: bool = True,
    ) -> None:
        self.spark = spark
        self.sources = sources
        self.home = home
        self.chunk_size = chunk_size
        self.max_message_bytes = max_message_bytes
        self.stop = stop
        self.out = out  # None: the process's stdout at the time of each line (print's default)
        self.announce = announce  # a line per table and pass: `land` without --watch
        self.watching = watch_interval is not None
        # Watching: what each (source, table) found in earlier passes.
        self.watches = {
            (i, t): WatchState(settle_seconds=max(30.0, 3 * (watch_interval or 0)))
            for i, s in enumerate(sources)
            for t in s.tables
        }
        # Each source's files checked against its --format, once each (input_check.py).
        self.checks = [InputCheck(s.format, s.container, max_message_bytes, force=force) for s in sources]
        self.landers: list[Lander] = []  # every Lander made, for what an interrupted run committed
        self.errors: list[str] = []

    @property
    def refused(self) -> bool:
        """Whether a file was refused (named in one line when it was found)."""
        return any(check.refused for check in self.checks)

    def land_pass(self) -> int:
        """One pass over every source; the messages it landed."""
        started = time.monotonic()
        landed = 0
        for index, source in enumerate(self.sources):
            for target in source.tables:
                if self.stop is not None and self.stop.stopped:
                    break
                table = bronze_table(target)
                accept: Callable | None = (
                    (lambda message, target=target: detect_format(message) == target)
                    if source.format == AUTO
                    else None
                )
                try:
                    files = source.files()
                except LandingError as exc:  # a watched path went away
                    print(f"error: {exc}", file=sys.stderr, flush=True)
                    self._error(str(exc))
                    continue
                if self.announce:
                    print(
                        f"landing {len(files)} file(s) into {table.qualified_name} ({source.container})",
                        file=self.out,
                        flush=True,
                    )
                lander = Lander(
                    self.spark,
                    table,
                    CheckpointStore(self.home / "ingest_checkpoints", table.name),
                    chunk_size=self.chunk_size,
                    max_message_bytes=self.max_message_bytes,
                    **({"out": self.out} if self.out is not None else {}),
                    accept=accept,
                    stop=self.stop,
                    watch=self.watches[(index, target)] if self.watching else None,
                    check=self.checks[index],
                )
                self.landers.append(lander)
                report = lander.land(files, source.container)
                landed += report.landed
                if self.announce:
                    print(
                        f"{report.summary()} in {time.monotonic() - started:.1f}s", file=self.out, flush=True
                    )
                for error in report.errors:
                    self._error(error)
        return landed

    def _error(self, error: str) -> None:
        if error not in self.errors:
            self.errors.append(error)
