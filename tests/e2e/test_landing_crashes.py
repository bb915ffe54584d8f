"""Fault injection: `land` killed with SIGKILL at each point of a chunk's life, then run again.

Each test lands three files of one container into a lakehouse of its own, in real
subprocesses (``python -m python_ingest land``) with chunks smaller than a file. The hook
``$CDC_LAND_KILL_AT=<point>:<n>`` (python_ingest/landing.py, ``KillSwitch``) makes a run
SIGKILL itself at a chosen point; the runs follow each other on the same files:

1. ``after-append:2``: the second chunk is in Iceberg, its checkpoint not committed;
2. ``after-commit:1``: between chunks;
3. ``read:10``: inside a chunk, messages read and nothing of them written;
   then two files grow, one landed to its end and one landed part-way;
4. ``before-append:1``: the chunk's pending checkpoint saved, its append never made;
5. a run to the end, which must report the file it resumed and from where.

Then bronze must equal the files message for message (ids and values, no duplicate).
"""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from python_ingest.containers import iter_messages
from tests.helpers.eventhubs_capture import write_capture_file
from tests.helpers.lakehouse_query import query
from tests.helpers.processes import run_in_group
from tests.helpers.services import stop_services

CHUNK_SIZE = 7
KILLS = ("after-append:2", "after-commit:1", "read:10", "before-append:1")
GROW_BEFORE_RUN = 3  # the files grow after the third killed run
FORMAT = {"jsonl": "ces", "kcat": "debezium", "eventhubs-avro": "qlik"}
SIZES = (11, 13, 12)  # messages per file: 28 land before the growth, across all three files


def land(lakehouse: Path, container: str, paths: list[Path], kill_at: str | None = None):
    args = ["land", "--format", FORMAT[container], "--container", container, "--chunk-size", str(CHUNK_SIZE)]
    command = [sys.executable, "-m", "python_ingest", *args, *map(str, paths)]
    code, output, _ = run_in_group(command, lakehouse, kill_at)
    return code, output


# -- the three containers: write three files, then grow two of them ----------
def _jsonl_line(file: int, n: int) -> bytes:
    if n % 5 == 4:
        return b'{"broken": \xff\xfe not utf-8}\n'  # lands as base64
    return json.dumps({"file": file, "n": n, "pad": "x" * n}).encode() + b"\n"


def write_jsonl(directory: Path) -> list[Path]:
    paths = []
    for file, size in enumerate(SIZES):
        path = directory / f"part-{file}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = b"".join(_jsonl_line(file, n) + (b"\n" if n % 4 == 0 else b"") for n in range(size))
        path.write_bytes(body + (b"\n\n" if file == 2 else b""))  # trailing blank lines
        paths.append(path)
    return paths


def grow_jsonl(paths: list[Path]) -> None:
    for file, extra in ((0, 5), (2, 4)):
        with paths[file].open("ab") as handle:
            handle.write(b"".join(_jsonl_line(file, 100 + n) for n in range(extra)))


def _kcat_line(topic: str, partition: int, offset: int) -> bytes:
    record = {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "tstype": "create",
        "ts": 1735689600000 + offset,
        "broker": 0,
        "headers": ["h", str(offset)],
        "key": json.dumps({"id": offset}),
        "payload": None if offset % 6 == 5 else json.dumps({"op": "c", "after": {"id": offset}}),
    }
    return json.dumps(record).encode() + b"\n"


def write_kcat(directory: Path) -> list[Path]:
    topic = f"crash.{directory.parent.name}"
    paths = []
    for partition, size in enumerate(SIZES):
        path = directory / f"partition-{partition}.kcat"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(_kcat_line(topic, partition, 100 + n) for n in range(size)))
        paths.append(path)
    return paths


def grow_kcat(paths: list[Path]) -> None:
    topic = json.loads(paths[0].read_text().splitlines()[0])["topic"]
    for partition, extra in ((0, 5), (2, 4)):
        with paths[partition].open("ab") as handle:
            handle.write(b"".join(_kcat_line(topic, partition, 500 + n) for n in range(extra)))


def _capture_path(directory: Path, partition: int) -> Path:
    hub = f"hub-{directory.parent.name[-10:]}"
    return directory / "ns1" / hub / str(partition) / "2025" / "03" / "14" / "16" / "45" / "00.avro"


def _events(partition: int, first: int, count: int) -> list[dict]:
    return [
        {
            "SequenceNumber": first + n,
            "Offset": str((first + n) * 64),
            "Properties": {"partition": str(partition)},
            "Body": None if n % 6 == 5 else json.dumps({"p": partition, "n": first + n}).encode(),
        }
        for n in range(count)
    ]


def write_avro(directory: Path) -> list[Path]:
    return [
        write_capture_file(_capture_path(directory, partition), _events(partition, 0, size))
        for partition, size in enumerate(SIZES)
    ]


def grow_avro(paths: list[Path]) -> None:
    for partition, extra in ((0, 5), (2, 4)):
        write_capture_file(paths[partition], _events(partition, 1000, extra), append=True)


CONTAINERS: dict[str, tuple[Callable[[Path], list[Path]], Callable[[list[Path]], None]]] = {
    "jsonl": (write_jsonl, grow_jsonl),
    "kcat": (write_kcat, grow_kcat),
    "eventhubs-avro": (write_avro, grow_avro),
}


@pytest.mark.parametrize("container", list(CONTAINERS))
def test_land_killed_at_every_point_then_run_again_lands_the_files_exactly(
    container: str, tmp_path: Path
) -> None:
    write, grow = CONTAINERS[container]
    lakehouse = tmp_path / "lakehouse"
    paths = write(tmp_path / "in")
    try:
        land_killed_then_again(container, lakehouse, paths, grow)
    finally:
        stop_services(lakehouse)


def land_killed_then_again(container: str, lakehouse: Path, paths: list[Path], grow) -> None:
    for run, kill_at in enumerate(KILLS, start=1):
        if run == GROW_BEFORE_RUN + 1:
            grow(paths)
        code, output = land(lakehouse, container, paths, kill_at)
        assert code == -signal.SIGKILL, f"run {run} ({kill_at}) was not killed: exit {code}\n{output}"

    code, output = land(lakehouse, container, paths)
    assert code == 0, output
    # The killed runs landed 28 messages (after-append: 14, settled by the next run; after-commit:
    # 7; read: 7; before-append: none): the last run lands the rest and resumes the third file.
    assert "skipped 28 already landed" in output, output
    assert f"resumed {paths[2]} from " in output, output

    expected = Counter(
        (m.message_id, m.message_value) for path in paths for m in iter_messages(container, path)
    )
    rows = query(lakehouse, f"select message_id, message_value from bronze.raw_{FORMAT[container]}")
    landed = Counter((r["message_id"], r["message_value"]) for r in rows)
    assert sum(expected.values()) == sum(SIZES) + 9
    assert landed == expected
    assert len(rows) == len({r["message_id"] for r in rows})
