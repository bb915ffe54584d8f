"""Operator mistakes end to end: each is refused in one line, with the documented exit status,
no traceback, and nothing landed before is lost or duplicated (docs/landing.md, "Checking a
file against --format" and "Interrupting land"; docs/lakehouse.md, "Mistakes refused in one
line").

Wrong input is landed in-process into the shared test lakehouse (no Spark start of its own).
The refusals of dbt and of a lakehouse directory come before Spark starts, so those processes
are cheap. Ctrl-C and SIGTERM need a `land` process of its own: it lands into a new lakehouse,
whose SQL endpoint then answers the count of what landed and holds a port that another
lakehouse's `lakehouse start` is refused.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from python_ingest.containers import file_uri
from tests.helpers.lakehouse_query import endpoint_rows
from tests.helpers.processes import kill_group, start_in_group
from tests.helpers.services import stop_services

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
DBT = str(Path(sys.executable).parent / "dbt")
LAND = [sys.executable, "-m", "python_ingest", "land"]
BANNER = ("WARNING: Using incubator modules", "Setting default log level", "Setting Spark log level")
DBT_BANNER = "Running with dbt="


def one_line_refusal(output: str, *named: str) -> str:
    """The one error line of `output` (which shows no traceback nor Spark banner), naming `named`."""
    assert "Traceback" not in output, output
    assert not any(banner in output for banner in BANNER), output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for text in named:
        assert text in errors[0], (text, errors[0])
    return errors[0]


def run(command: list[str], lakehouse: Path, timeout: float = 120) -> tuple[int, str, str, float]:
    """Exit status, output, error output and seconds of a project command on `lakehouse`."""
    env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout, result.stderr, time.monotonic() - started


def dbt_refusal(lakehouse: Path, *named: str, command: str = "build") -> float:
    """Runs `dbt <command>` on `lakehouse`: refused with exit 2, one line on its error output,
    nothing on its output but dbt's version banner. Returns its seconds."""
    code, output, errors, seconds = run([DBT, command], lakehouse)
    assert code == 2, (output, errors)
    assert [line for line in output.splitlines() if DBT_BANNER not in line] == [], output
    assert len(errors.splitlines()) == 1, errors
    one_line_refusal(errors, *named)
    return seconds


def rows(spark, table: str, path: Path) -> tuple[int, int]:
    """(rows, distinct message ids) of bronze.`table` from the file `path`."""
    if not spark.catalog.tableExists(f"bronze.{table}"):
        return 0, 0
    found = spark.sql(
        f"select count(*), count(distinct message_id) from bronze.{table} "
        f"where source_uri = '{file_uri(path)}'"
    ).first()
    return found[0], found[1]


def message_lines(path: Path) -> int:
    """Messages of a JSON-lines file as landing counts them: its lines that are not blank."""
    return sum(1 for line in path.read_bytes().split(b"\n") if line.strip())


def test_wrong_input_is_refused_in_one_line_and_lands_later_with_the_right_flags(
    spark, land, tmp_path: Path
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    good = inbox / "ces.jsonl"
    shutil.copy(next((ROOT / "sample_data" / "ces" / "jsonl").glob("*.jsonl")), good)
    qlik = inbox / "qlik_as_ces.jsonl"
    shutil.copy(next((ROOT / "sample_data" / "qlik" / "jsonl").glob("*.jsonl")), qlik)
    binary = inbox / "ls.jsonl"
    shutil.copy("/bin/ls", binary)  # NUL bytes
    latin = inbox / "latin1.jsonl"  # no NUL byte, but mostly not UTF-8
    latin.write_bytes(b"".join(f'{{"name": "caf\xe9 {n}"}}\n'.encode("latin-1") for n in range(9)) + b"{}\n")

    result = land("--format", "ces", "--container", "jsonl", inbox)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 3, result.output  # one line per refused file
    [wrong] = [line for line in errors if str(qlik) in line]
    assert "look like qlik's" in wrong and "--format qlik" in wrong and "--force" in wrong, wrong
    assert any(str(binary) in line and "NUL bytes" in line for line in errors), errors
    assert any(str(latin) in line and "not UTF-8" in line for line in errors), errors
    # The good file of the same run landed; the refused ones did not, and are not checkpointed.
    assert rows(spark, "raw_ces", good) == (message_lines(good),) * 2
    for refused in (qlik, binary, latin):
        assert rows(spark, "raw_ces", refused) == (0, 0)

    again = land("--format", "ces", "--container", "jsonl", inbox)  # refused again, the rest skipped
    assert again.exit_code == 1 and len(again.output.split("error:")) == 4, again.output
    right = land("--format", "qlik", "--container", "jsonl", qlik)
    assert right.exit_code == 0, right.output
    assert rows(spark, "raw_qlik", qlik) == (message_lines(qlik),) * 2
    forced = land("--format", "ces", "--container", "jsonl", "--force", binary, latin)
    assert forced.exit_code == 0 and "error" not in forced.output, forced.output
    for path in (binary, latin):
        assert rows(spark, "raw_ces", path) == (message_lines(path),) * 2
    assert rows(spark, "raw_ces", good) == (message_lines(good),) * 2  # nothing landed twice
    assert rows(spark, "raw_ces", qlik) == (0, 0)


def test_a_forced_file_reaches_quarantine_with_what_it_looked_like(spark, land, dbt, tmp_path: Path) -> None:
    """land --force lands a file the check refuses; its messages carry the header
    x-cdc-looks-like, and the reasons in silver.cdc_quarantine name the producer to land it as."""
    qlik = tmp_path / "qlik_forced_as_ces.jsonl"
    shutil.copy(next((ROOT / "sample_data" / "qlik" / "jsonl").glob("*.jsonl")), qlik)
    binary = tmp_path / "forced_binary.jsonl"
    binary.write_bytes(b"\x00\x01\x02\n" * 2)
    forced = land("--format", "ces", "--container", "jsonl", "--force", qlik, binary)
    assert forced.exit_code == 0 and "error" not in forced.output, forced.output
    looks = {
        row[0]: row[1]
        for row in spark.sql(
            "select source_uri, collect_set(headers['x-cdc-looks-like']) from bronze.raw_ces "
            f"where source_uri in ('{file_uri(qlik)}', '{file_uri(binary)}') group by source_uri"
        ).collect()
    }
    assert looks == {file_uri(qlik): ["qlik"], file_uri(binary): ["not text"]}, looks
    dbt("build")
    reasons = spark.sql(
        "select b.source_uri, q.reason from silver.cdc_quarantine q join bronze.raw_ces b "
        f"on q.message_id = b.message_id where b.source_uri in ('{file_uri(qlik)}', '{file_uri(binary)}')"
    ).collect()
    assert {r.source_uri for r in reasons} == {file_uri(qlik), file_uri(binary)}, reasons
    for row in reasons:
        if row.source_uri == file_uri(qlik):
            assert "looks like qlik's messages: land it with --format qlik." in row.reason, row.reason
        else:
            assert row.reason.endswith("although its file is not text."), row.reason


def test_a_lakehouse_directory_that_is_missing_or_unwritable_is_named_in_one_line(
    dbt, lakehouse_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no" / "such" / "lakehouse"
    seconds = dbt_refusal(missing, f"no lakehouse at {missing}", "python_ingest land")
    assert seconds < 10, seconds  # before dbt parses the project (about 1.5 s measured)
    for action, status in (("start", 2), ("status", 1), ("stop", 0)):
        code, output, errors, _ = run([sys.executable, "-m", "python_ingest", "lakehouse", action], missing)
        assert code == status, (action, output, errors)
        assert "Traceback" not in output + errors and len((output + errors).splitlines()) == 1
    assert not missing.parent.parent.exists(), "only land creates a lakehouse"

    # Under a file: land cannot create it; dbt finds no lakehouse there.
    under_file = tmp_path / "a-file" / "lakehouse"
    under_file.parent.write_text("not a directory")
    code, output, errors, _ = run([*LAND, "--format", "ces", "--container", "jsonl", str(ROOT)], under_file)
    assert code == 2 and output == "", (output, errors)
    one_line_refusal(errors, f"cannot create the lakehouse at {under_file}")

    # A lakehouse this user cannot write: land and dbt name it, in one line.
    locked = tmp_path / "locked"
    locked.mkdir()
    root = os.geteuid() == 0
    if root and shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: no directory is unwritable")
    subprocess.run(["chattr", "+i", str(locked)], check=True) if root else locked.chmod(0o555)
    try:
        code, output, errors, _ = run([*LAND, "--format", "ces", "--container", "jsonl", str(ROOT)], locked)
        assert code == 2 and output == "", (output, errors)
        one_line_refusal(errors, f"the lakehouse {locked} is not writable")
        dbt_refusal(locked, f"the lakehouse {locked} is not writable")
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True) if root else locked.chmod(0o755)

    # A second build while one holds the lakehouse's build lock: this process holds it once an
    # in-process dbt command that writes (here: seed) has run on the shared test lakehouse.
    dbt("seed")
    seconds = dbt_refusal(lakehouse_dir, f"(pid {os.getpid()},", "one build at a time")
    assert seconds < 10, seconds  # issue 39 asks for 2 s; about 1.5 s measured on 2 busy cores


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def interrupted_land(lakehouse: Path, path: Path, sig: signal.Signals) -> tuple[int, str]:
    """`land` of `path` into `lakehouse`, sent `sig` once it has committed a chunk."""
    env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    command = [*LAND, "--format", "ces", "--container", "jsonl", "--chunk-size", "2000", str(path)]
    process = start_in_group(command, env)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "landed so far" in line:
                process.send_signal(sig)
                break
        lines.extend(process.stdout)
        process.wait(timeout=120)
    finally:
        kill_group(process.pid)
    return process.returncode, "".join(lines)


def test_ctrl_c_and_sigterm_on_land_say_what_was_committed_and_the_next_run_resumes(tmp_path: Path) -> None:
    lakehouse = tmp_path / "new" / "lakehouse"
    path = tmp_path / "many.jsonl"
    line = '{"specversion": "1.0", "type": "com.microsoft.SQL.CES.DML.V1", "id": "%d", "data": "%s"}\n'
    path.write_text("".join(line % (n, "x" * 100) for n in range(200_000)))
    committed = 0
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            code, output = interrupted_land(lakehouse, path, sig)
            assert code == 130, output
            assert "Traceback" not in output and not any(b in output for b in BANNER), output
            last = output.strip().splitlines()[-1]
            assert last.startswith("interrupted: ") and last.endswith(
                " messages committed; run the same command again to resume"
            ), output
            committed += int(last.split()[1].replace(",", ""))
            if sig == signal.SIGINT:
                assert output.startswith(f"new lakehouse at {lakehouse}\n"), output
        assert 0 < committed < 200_000
        code, output, errors, _ = run(
            [*LAND, "--format", "ces", "--container", "jsonl", str(path)], lakehouse
        )
        assert code == 0, (output, errors)
        assert f"landed {200_000 - committed} message(s), skipped {committed} already landed" in output

        # What landed, counted by the lakehouse's SQL endpoint: every line once.
        port = free_port()
        code, output, errors, _ = run(
            [sys.executable, "-m", "python_ingest", "lakehouse", "start", "--port", str(port)], lakehouse
        )
        assert code == 0, (output, errors)
        counting = "select count(*), count(distinct message_id) from bronze.raw_ces"
        counted = endpoint_rows(port, counting, "test")
        assert counted == [(200_000, 200_000)]

        # Another lakehouse wanting that port is told whose endpoint holds it.
        other = tmp_path / "other"
        other.mkdir()
        code, output, errors, _ = run(
            [sys.executable, "-m", "python_ingest", "lakehouse", "start", "--port", str(port)], other
        )
        assert code == 1 and output == "", (output, errors)
        one_line_refusal(errors, f"127.0.0.1:{port} is held by the SQL endpoint of the lakehouse {lakehouse}")
        stop_services(other)
    finally:
        stop_services(lakehouse)
