"""When a file counts as landed, what `land DIR` reads, and the crash tests' hook (no Spark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_ingest.checkpoints import CheckpointStore, FileState
from python_ingest.containers import ResumePoint, past_blank_lines, read_jsonl
from python_ingest.landing import KillSwitch, LandingError, expand_paths, is_complete

ROOT = Path(__file__).resolve().parents[2]


def state(resume: ResumePoint, size: int, at_end: bool = False) -> FileState:
    return FileState(resume, messages=3, size=size, head_length=10, head_sha256="x", at_end=at_end)


def test_a_line_file_is_complete_only_when_its_landed_position_is_its_end() -> None:
    # A chunk's checkpoint in the middle of a file records the file's size too: that
    # must not make the file count as landed (the bug of issue 22).
    middle = state(ResumePoint(byte_offset=500, line_number=5), size=1000)
    assert not is_complete(middle, "jsonl", 1000)
    assert not is_complete(middle, "kcat", 1000)
    end = state(ResumePoint(byte_offset=1000, line_number=9), size=1000, at_end=True)
    assert is_complete(end, "jsonl", 1000)
    assert not is_complete(end, "jsonl", 1200)  # it grew


def test_a_capture_file_is_complete_when_read_to_its_end_at_its_present_size() -> None:
    middle = state(ResumePoint(records=7), size=4000)
    assert not is_complete(middle, "eventhubs-avro", 4000)
    end = state(ResumePoint(records=12), size=4000, at_end=True)
    assert is_complete(end, "eventhubs-avro", 4000)
    assert not is_complete(end, "eventhubs-avro", 4500)


def test_checkpoints_written_before_at_end_existed_are_read_as_not_at_end(tmp_path: Path) -> None:
    old = {"resume": {"byte_offset": 5, "line_number": 1, "records": 0}, "messages": 1, "size": 9}
    old.update(head_length=5, head_sha256="x")
    (tmp_path / "raw_ces.json").write_text(json.dumps({"files": {"f": old}, "pending": None}))
    loaded = CheckpointStore(tmp_path, "raw_ces").files["f"]
    assert loaded.at_end is False and loaded.resume == ResumePoint(5, 1, 0)


def test_past_blank_lines_stops_at_the_next_message(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \r\n{"b": 2}\n\n')
    [first, second] = read_jsonl(path)
    assert past_blank_lines(path, first.resume) == ResumePoint(byte_offset=14, line_number=3)
    assert past_blank_lines(path, ResumePoint(14, 3)) == ResumePoint(14, 3)  # a message follows
    after = past_blank_lines(path, second.resume)
    assert after == ResumePoint(byte_offset=path.stat().st_size, line_number=5)


def test_resume_points_say_where_for_a_person() -> None:
    assert ResumePoint(15_125, 25_632).describe("jsonl", 21_436_118) == (
        "line 25,633 (byte 15,125 of 21,436,118)"
    )
    assert ResumePoint(records=41).describe("eventhubs-avro", 10) == "record 42"


def test_landing_a_directory_skips_hidden_and_underscore_names(tmp_path: Path) -> None:
    for name in (
        "partition-0.jsonl",
        "_expected_current.json",
        ".partial.jsonl",
        "_tmp/partition-1.jsonl",
        "sub/partition-2.json",
        "notes.md",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    found = [p.relative_to(tmp_path.resolve()).as_posix() for p in expand_paths([tmp_path], "jsonl")]
    assert found == ["partition-0.jsonl", "sub/partition-2.json"]
    named = expand_paths([tmp_path / "_expected_current.json"], "jsonl")  # a file named is landed
    assert [p.name for p in named] == ["_expected_current.json"]


@pytest.mark.parametrize("spec", ["read", "nowhere:1", "read:0", "read:x"])
def test_kill_switch_refuses_a_malformed_setting(spec: str) -> None:
    with pytest.raises(LandingError, match="CDC_LAND_KILL_AT"):
        KillSwitch(spec)


def test_kill_switch_kills_the_process_at_the_nth_time_it_reaches_its_point() -> None:
    code = (
        "from python_ingest.landing import KillSwitch\n"
        "switch = KillSwitch('after-commit:2')\n"
        "switch.reached('read'); switch.reached('after-commit'); print('first', flush=True)\n"
        "switch.reached('after-commit'); print('not reached', flush=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == -9 and result.stdout == "first\n"
    assert KillSwitch(os.environ.get("NO_SUCH_VARIABLE")).point is None
