"""`land --kafka` against a real Kafka broker (KRaft, on 127.0.0.1), in real subprocesses.

1. Exactly once across crashes: two topics (three partitions and one), records with keys,
   repeated headers, tombstones; `land` SIGKILLed at each point of a chunk's life
   (``$CDC_LAND_KILL_AT``, python_ingest/landing.py), with records produced between the
   runs; then bronze must equal the topics record for record, and each row must be what the
   `kcat` container lands for the same record read back from the broker as a kcat -J dump
   (same message_id, key, value, headers, partition, offset).
2. A topic deleted and re-created is refused with one line, and nothing is landed.
3. ``--watch`` (with ``--topic-pattern``) lands what arrives until SIGTERM, then exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from python_ingest.containers import read_kcat
from tests.helpers.lakehouse_query import query
from tests.helpers.processes import kill_group, run_in_group, start_in_group
from tests.helpers.real_servers import KafkaBroker, require_real_servers
from tests.helpers.services import stop_services

pytestmark = pytest.mark.services

KILLS = ("after-append:2", "before-append:1", "after-commit:1")
BRONZE_COLUMNS = (
    "message_id, source_uri, source_partition, source_offset, message_key, message_value, headers"
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory):
    require_real_servers(databases=False)
    with KafkaBroker(tmp_path_factory.mktemp("kafka")) as running:
        yield running


def land(lakehouse: Path, *args: str, kill_at: str | None = None) -> tuple[int, str, str]:
    command = [sys.executable, "-m", "python_ingest", "land", "--format", "debezium", *args]
    return run_in_group(command, lakehouse, kill_at, stderr_apart=True)


def records(batch: int, count: int) -> list[tuple]:
    """Debezium-like records: keyed, some with a repeated header, every seventh a tombstone."""
    made = []
    for i in range(count):
        key = f'{{"id":{batch * 1000 + i}}}'
        value = (
            None
            if i % 7 == 6
            else f'{{"payload":{{"op":"c","after":{{"id":{batch * 1000 + i},"n":"é{i}"}}}}}}'
        )
        headers = [("trace", f"a{i}"), ("trace", f"b{i}")] if i % 3 == 0 else None
        made.append((key, value, headers, None))
    return made


def bronze(lakehouse: Path) -> list[dict]:
    return query(lakehouse, f"select {BRONZE_COLUMNS} from bronze.raw_debezium")


def test_landing_from_kafka_is_exactly_once_across_kills(broker: KafkaBroker, tmp_path: Path) -> None:
    lakehouse = tmp_path / "lakehouse"
    broker.create_topic("pg.public.orders", partitions=3)
    broker.create_topic("pg.public.customers", partitions=1)
    topics = ("--kafka", broker.bootstrap, "--topic", "pg.public.orders", "--topic", "pg.public.customers")
    try:
        for run, kill in enumerate(KILLS):
            broker.produce("pg.public.orders", records(run, 15))
            broker.produce("pg.public.customers", records(100 + run, 6))
            code, out, err = land(lakehouse, *topics, "--chunk-size", "7", kill_at=kill)
            assert code == -signal.SIGKILL, f"run {run} was to be killed at {kill}: {code}\n{out}\n{err}"
        code, out, err = land(lakehouse, *topics, "--chunk-size", "7")
        assert code == 0, out + err
        assert "landed" in out and "pg.public.orders[" in out
        code, out, err = land(lakehouse, *topics)  # nothing new: nothing landed
        assert code == 0 and "landed 0 record(s)" in out, out + err

        dump = tmp_path / "topics.kcat"
        broker.dump(dump, ["pg.public.orders", "pg.public.customers"])
        expected = {m.message_id: m for m in read_kcat(dump)}
        assert len(expected) == len(KILLS) * 21
        rows = bronze(lakehouse)
        assert len(rows) == len(expected) == len({r["message_id"] for r in rows})
        for row in rows:
            message = expected[row["message_id"]]
            assert (row["source_uri"], row["source_partition"], row["source_offset"]) == (
                message.source_uri,
                message.source_partition,
                message.source_offset,
            )
            assert (row["message_key"], row["message_value"]) == (message.message_key, message.message_value)
            assert (row["headers"] or None) == message.headers

        # The topic deleted and re-created: its offsets count again; refused, nothing landed.
        broker.delete_topic("pg.public.customers")
        broker.create_topic("pg.public.customers", partitions=1)
        broker.produce("pg.public.customers", records(200, 2))
        code, out, err = land(lakehouse, *topics)
        assert code == 1, out + err
        refusal = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(refusal) == 1 and "re-created" in refusal[0], err
        assert len(bronze(lakehouse)) == len(expected)
    finally:
        stop_services(lakehouse)


def test_watch_lands_what_arrives_until_stopped(broker: KafkaBroker, tmp_path: Path) -> None:
    lakehouse = tmp_path / "lakehouse"
    broker.create_topic("maria.shop.items", partitions=2)
    broker.produce("maria.shop.items", records(300, 10))
    env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    args = ["land", "--format", "debezium", "--kafka", broker.bootstrap, "--topic-pattern", r"maria\..*"]
    process = start_in_group(
        [sys.executable, "-m", "python_ingest", *args, "--watch", "--interval", "0.5"], env
    )
    lines: list[str] = []
    try:

        def landed_so_far() -> int:
            total = 0
            for line in lines:
                if ": landed " in line and " record(s) from " in line:
                    total += int(line.split(": landed ")[1].split()[0])
            return total

        def wait_for(total: int) -> None:
            deadline = time.monotonic() + 180
            while landed_so_far() < total:
                line = process.stdout.readline()
                assert line, "land --watch ended early:\n" + "".join(lines)
                lines.append(line)
                assert time.monotonic() < deadline, "".join(lines)

        wait_for(10)
        broker.produce("maria.shop.items", records(301, 5))
        wait_for(15)
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=120)
        lines.append(rest)
        assert process.returncode == 0, "".join(lines)
        assert "stopped watching topics matching maria" in rest
        assert landed_so_far() == 15
        rows = bronze(lakehouse)
        assert len(rows) == 15 == len({r["message_id"] for r in rows})
    finally:
        kill_group(process.pid)
        stop_services(lakehouse)
