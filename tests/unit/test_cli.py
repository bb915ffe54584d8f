"""The command line answers wrong arguments and missing paths at once,
with a clear message and a non-zero exit, before starting Spark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_cli import main
from cdc_registry import producer_names

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "python_ingest", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "required"),
        (["land", "--container", "jsonl", "x.jsonl"], "--format"),
        (["land", "--format", "oracle", "--container", "jsonl", "x"], "invalid choice: 'oracle'"),
        (["land", "--format", "ces", "--container", "parquet", "x"], "invalid choice: 'parquet'"),
        (["land", "--format", "ces", "--container", "jsonl"], "PATH"),
        (["land", "--format", "ces", "--container", "jsonl", "--chunk-size", "0", "x"], "at least 1"),
        (["land", "--source", "ces:jsonl"], "is not FORMAT:CONTAINER:PATH"),
        (["land", "--source", "ces:jsonl:x", "--max-message-bytes", str(2**30 + 1)], "at most 1073741824"),
        (["land", "--source", "oracle:jsonl:x"], "is not FORMAT:CONTAINER:PATH"),
        (["land", "--format", "ces", "--source", "ces:jsonl:x"], "give --format, --container"),
        (["frobnicate"], "invalid choice"),
        (["generate", "--format", "ces", "--large-every", "-1", "x"], "at least 0"),
    ],
)
def test_wrong_arguments_exit_2_with_usage(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr


def test_missing_path_exits_2_before_spark(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    result = run("land", "--format", "ces", "--container", "jsonl", str(missing))
    assert result.returncode == 2
    assert f"error: path not found: {missing}" in result.stderr
    assert "landing" not in result.stdout


def test_sources_name_format_container_and_path() -> None:
    from cdc_cli import build_parser
    from cdc_cli.land import file_sources
    from python_ingest.landing import FileSource

    args = build_parser().parse_args(
        ["land", "--format", "ces", "--container", "jsonl", "a", "b", "--source", "qlik:kcat:c:/d"]
    )
    assert file_sources(args) == [
        FileSource("ces", "jsonl", (Path("a"), Path("b"))),
        FileSource("qlik", "kcat", (Path("c:/d"),)),
    ]
    assert FileSource.parse("auto:jsonl:x").tables == (*producer_names(), "unknown")


def test_help_lists_formats_and_containers() -> None:
    result = run("land", "--help")
    assert result.returncode == 0
    for word in (*producer_names(), "jsonl", "kcat", "eventhubs-avro"):
        assert word in result.stdout


def test_generate_writes_partitions_and_expected_rows(tmp_path: Path) -> None:
    result = run("generate", "--format", "ces", "--changes", "30", "--partitions", "2", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["_expected_current.json", "partition-0.jsonl", "partition-1.jsonl"]
    lines = (tmp_path / "out" / "partition-0.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["type"] == "com.microsoft.SQL.CES.DML.V1" for line in lines)
    again = run(
        "generate", "--format", "ces", "--changes", "30", "--partitions", "2", str(tmp_path / "again")
    )
    assert again.returncode == 0
    assert (tmp_path / "again" / "partition-0.jsonl").read_text() == "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("producer", "table_id"), [("dataworks", "orcl.hr.employees"), ("qlik", "sales.orders")]
)
def test_generate_writes_a_file_a_partition_and_the_expected_rows(
    producer: str, table_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / producer
    assert main(["generate", "--format", producer, "--changes", "40", "--partitions", "2", str(out)]) == 0
    assert f"{producer} message(s)" in capsys.readouterr().out
    files = sorted(p.name for p in out.iterdir())
    assert files == ["_expected_current.json", "partition-0.jsonl", "partition-1.jsonl"]
    assert json.loads((out / "_expected_current.json").read_text(encoding="utf-8"))[table_id]


@pytest.mark.parametrize(("large_every", "split"), [("0", False), ("5", True)])
def test_generate_large_every_sets_how_often_ces_events_are_split(
    tmp_path: Path, large_every: str, split: bool
) -> None:
    out = tmp_path / "out"
    result = run("generate", "--format", "ces", "--changes", "30", "--large-every", large_every, str(out))
    assert result.returncode == 0, result.stderr
    assert ("(0 split event(s)" not in result.stdout) is split
