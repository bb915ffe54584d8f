"""Does a file hold what `land` is told it holds? Checked once per new file, before any of it
lands (docs/landing.md, "Checking a file against --format").

- A file of a line container (`jsonl`, `kcat`) whose first block (64 KiB) holds a NUL byte,
  or whose lines there are mostly not UTF-8, is not text: a binary file named `.jsonl`.
- A file whose first messages (up to 20) the producers' detectors (`python_ingest/detect.py`,
  the ones `--format auto` uses) place under another producer, none under the one `--format`
  names, holds another producer's messages.

Either is refused in one line that says what the file looks like and which flag lands it;
the file is not marked landed, so a later run with the right flags lands it. `land --force`
lands such a file anyway: its messages land as they are, with the header
`x-cdc-looks-like` (FORCED_HEADER) naming what the check found, and dbt quarantines what it
cannot parse with a reason that names it (silver.cdc_quarantine). A producer without a
detector, or a file whose messages no detector recognises, is never refused here: dbt reports
such messages in quarantine.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from cdc_registry import registry
from python_ingest.containers import LINE_CONTAINERS, ContainerError, ResumePoint, file_uri, iter_messages
from python_ingest.detect import UNKNOWN, detect_format
from python_ingest.producers import detector

FORCED_HEADER = "x-cdc-looks-like"  # on the messages of a file landed with --force despite the check
TEXT_BLOCK = 64 * 1024  # bytes of a line file looked at for NUL bytes and invalid UTF-8
SAMPLE_MESSAGES = 20  # first messages whose producer is recognised


def not_text(path: Path) -> str | None:
    """Why a line file is not text, judged by its first block, or None."""
    with Path(path).open("rb") as handle:
        block = handle.read(TEXT_BLOCK)
    if b"\x00" in block:
        return "it holds NUL bytes"
    lines = block.splitlines()
    if len(block) == TEXT_BLOCK and len(lines) > 1:
        lines = lines[:-1]  # the block may end inside a line (or a character)
    lines = [line for line in lines if line.strip()]
    bad = 0
    for line in lines:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad += 1
    if lines and bad * 2 > len(lines):
        return f"{bad} of its first {len(lines)} lines are not UTF-8"
    return None


def looks_like(path: Path, container: str, source_format: str, max_bytes: int) -> str | None:
    """The other producer a file's first messages belong to, or None: at least half of them
    are that producer's by their shape, and none is `source_format`'s."""
    counts: Counter[str] = Counter()
    with contextlib.suppress(ContainerError, OSError):  # landing reports a broken file itself
        messages = iter_messages(container, path, ResumePoint(), max_bytes)
        with contextlib.closing(messages):
            for message in messages:
                counts[detect_format(message)] += 1
                if counts.total() >= SAMPLE_MESSAGES:
                    break
    if not counts or counts[source_format]:
        return None
    others = Counter({f: n for f, n in counts.items() if f != UNKNOWN})
    if not others:
        return None
    found, count = others.most_common(1)[0]
    return found if count * 2 >= counts.total() else None


class InputCheck:
    """The check of one `--format`/`--source` of a land run: a file's verdict is kept while
    its size and modification time stay the same, so `--format auto` (a pass per bronze
    table) and `--watch` (a pass per interval) check and refuse a file once."""

    def __init__(
        self,
        source_format: str,
        container: str,
        max_bytes: int,
        out: TextIO | None = None,
        force: bool = False,
    ):
        self.format, self.container, self.max_bytes = source_format, container, max_bytes
        self.out = out
        self.force = force  # --force: nothing is refused; forced_header() tells what was found
        self.refused: list[str] = []  # the refusals, in the order they were printed
        self._verdicts: dict[str, tuple[tuple[int, int], str | None]] = {}
        detectors = {p.name for p in registry() if detector(p.name) is not None}
        self._detects_format = source_format in detectors

    def refusal(self, path: Path, seen: tuple[int, int]) -> str | None:
        """Why the new file `path` (size, mtime_ns `seen`) is refused, or None; a refusal is
        printed (one line) the first time it is found. Under --force nothing is refused."""
        if self.force:
            return None
        key = file_uri(path)
        known = self._verdicts.get(key)
        if known is not None and known[0] == seen:
            return known[1]
        reason = self._judge(path)
        self._verdicts[key] = (seen, reason)
        if reason is not None:
            self.refused.append(reason)
            print(f"error: {reason}", file=self.out or sys.stderr, flush=True)
        return reason

    def forced_header(self, path: Path) -> dict[str, str] | None:
        """Under --force, the header the messages of the new file `path` land with when the
        check would have refused it: FORCED_HEADER, naming the producer its messages look like
        or that it is not text; None otherwise."""
        if not self.force:
            return None
        if self.container in LINE_CONTAINERS and not_text(path):
            return {FORCED_HEADER: "not text"}
        if self.format == "auto" or not self._detects_format:
            return None
        other = looks_like(path, self.container, self.format, self.max_bytes)
        return {FORCED_HEADER: other} if other else None

    def _judge(self, path: Path) -> str | None:
        if self.container in LINE_CONTAINERS and (why := not_text(path)):
            return (
                f"{path}: not landed: it is not text ({why}), while a {self.container} file holds "
                "one message per line of UTF-8 text; land --force lands it anyway (as base64)"
            )
        if self.format == "auto" or not self._detects_format:
            return None
        other = looks_like(path, self.container, self.format, self.max_bytes)
        if other is None:
            return None
        return (
            f"{path}: not landed: its first messages look like {other}'s, not {self.format}'s: "
            f"land it with --format {other} (--source {other}:{self.container}:PATH), or --format "
            f"auto; land --force lands it as {self.format} anyway"
        )
