"""The files a traffic generator writes: one JSON-lines file a partition, and the live rows
the messages must end in (``_expected_current.json``, which landing skips)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

EXPECTED_FILE = "_expected_current.json"


class Keyed(Protocol):
    key: tuple[str, ...]  # the key columns, in key order


def key_text(table: Keyed, row: Mapping[str, str | None]) -> str:
    """How a key is identified in the expected rows (of generators whose row values are already
    text): `col=value` pairs in key order, joined by `,`."""
    return ",".join(f"{c}={row[c]}" for c in table.key)


def write_partitions(
    directory: Path, partitions: Iterable[Sequence[Any]], text: Callable[[Any], str]
) -> list[Path]:
    """Write each partition's messages as `partition-<n>.jsonl` in `directory`, `text(message)`
    a line; return the files in partition order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, messages in enumerate(partitions):
        path = directory / f"partition-{number}.jsonl"
        path.write_text("".join(text(m) + "\n" for m in messages), encoding="utf-8")
        paths.append(path)
    return paths


def write_expected(directory: Path, expected: Mapping[str, Any]) -> None:
    """Write `_expected_current.json` in `directory`: table_id -> key text -> row."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / EXPECTED_FILE).open("w", encoding="utf-8") as handle:
        json.dump(expected, handle, indent=1, ensure_ascii=False)
