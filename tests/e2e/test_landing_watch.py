"""Continuous landing: `land --watch` keeps one Spark session and lands new files and the new
lines of grown files as they appear, one commit per pass, until SIGTERM; a kill -9 in the
middle of a commit, then a restart, loses and duplicates nothing.

One lakehouse of its own, three `land --watch` processes one after the other (real
subprocesses, ``python -m python_ingest land --watch``) over two sources at once: JSON-lines
files of CES and kcat dumps of Debezium. At the end bronze must equal what was written,
message for message (ids and values, no duplicate).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from python_ingest.containers import iter_messages
from tests.helpers.lakehouse_query import queries
from tests.helpers.processes import Watch, kill_group
from tests.helpers.services import stop_services


def lines(count: int, tag: str) -> str:
    return "".join(json.dumps({"tag": tag, "n": n}) + "\n" for n in range(count))


def kcat_lines(first: int, count: int) -> str:
    return "".join(
        json.dumps(
            {
                "topic": "pg.public.items",
                "partition": 0,
                "offset": offset,
                "tstype": "create",
                "ts": 1_700_000_000_000 + offset,
                "broker": 0,
                "headers": None,
                "key": json.dumps({"id": offset}),
                "payload": json.dumps({"op": "c", "after": {"id": offset}}),
            }
        )
        + "\n"
        for offset in range(first, first + count)
    )


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def messages(container: str, paths: list[Path]) -> set[tuple[str, str]]:
    return {(m.message_id, m.message_value) for p in paths for m in iter_messages(container, p)}


def test_watch_lands_new_and_grown_files_stops_cleanly_and_survives_kill_9(tmp_path: Path) -> None:
    lakehouse = tmp_path / "lakehouse"
    ces, dbz = tmp_path / "inbox" / "ces", tmp_path / "inbox" / "debezium"
    ces.mkdir(parents=True)
    dbz.mkdir(parents=True)
    sources = [f"ces:jsonl:{ces}", f"debezium:kcat:{dbz}"]
    (ces / "a1.jsonl").write_text(lines(10, "a1"))
    (dbz / "items-0.kcat").write_text(kcat_lines(0, 6))
    try:
        watch = Watch(lakehouse, sources)
        try:
            watch.wait_for(
                "first landing", lambda: watch.committed() == {"bronze.raw_ces": 10, "bronze.raw_debezium": 6}
            )
            # A new file, grown files, and a last line still being written (it must wait).
            (ces / "a2.jsonl").write_text(lines(5, "a2"))
            half = json.dumps({"tag": "a1", "n": "written in two goes"})
            append(ces / "a1.jsonl", lines(3, "a1+") + half[:12])
            append(dbz / "items-0.kcat", kcat_lines(6, 2))
            watch.wait_for(
                "new and grown files",
                lambda: watch.committed() == {"bronze.raw_ces": 18, "bronze.raw_debezium": 8},
            )
            append(ces / "a1.jsonl", half[12:] + "\n")
            watch.wait_for("the ended line", lambda: watch.committed()["bronze.raw_ces"] == 19)
            # A landed file whose beginning changes is refused in one line; the watch goes on.
            (ces / "a3.jsonl").write_text(lines(4, "a3"))
            watch.wait_for("a3", lambda: watch.committed()["bronze.raw_ces"] == 23)
            a3_landed = messages("jsonl", [ces / "a3.jsonl"])
            (ces / "a3.jsonl").write_text(lines(6, "rewritten"))
            (ces / "a4.jsonl").write_text(lines(2, "a4"))
            watch.wait_for("a4 after the refusal", lambda: watch.committed()["bronze.raw_ces"] == 25)
            refusals = [
                line for line in watch.lines if "a3.jsonl: the file changed since it was landed" in line
            ]
            assert len(refusals) == 1, watch.output  # said once, not on every pass
        finally:
            code = watch.stop()
        assert code == 0, watch.output
        assert watch.lines[-1].startswith("stopped watching"), watch.output
        assert "Traceback" not in watch.output

        # kill -9 between a chunk's append and its checkpoint's commit, then a restart.
        (ces / "a5.jsonl").write_text(lines(9, "a5"))
        killed = Watch(lakehouse, sources, kill_at="after-append:1")
        assert killed.process.wait(timeout=300) == -signal.SIGKILL, killed.output
        kill_group(killed.process.pid)
        append(dbz / "items-0.kcat", kcat_lines(8, 3))
        again = Watch(lakehouse, sources)
        try:
            again.wait_for(
                "the rest", lambda: again.committed() == {"bronze.raw_ces": 2, "bronze.raw_debezium": 3}
            )
        finally:
            assert again.stop(signal.SIGINT) == 0, again.output

        files = sorted(p for p in ces.iterdir() if p.name != "a3.jsonl")
        expected = {
            "bronze.raw_ces": messages("jsonl", files) | a3_landed,
            "bronze.raw_debezium": messages("kcat", [dbz / "items-0.kcat"]),
        }
        found = queries(lakehouse, [f"select message_id, message_value from {table}" for table in expected])
        for (table, want), rows in zip(expected.items(), found, strict=True):
            got = [(row["message_id"], row["message_value"]) for row in rows]
            assert len(got) == len(set(got)) == len(want), table  # nothing lost, nothing twice
            assert set(got) == want, table
        assert len(expected["bronze.raw_ces"]) == 34 and len(expected["bronze.raw_debezium"]) == 11
    finally:
        stop_services(lakehouse)
