"""The real-producer pipeline, end to end, for tests/e2e/test_real_producers.py and for the demo
(scripts/real_producers_demo.sh): real PostgreSQL and MariaDB, Debezium in Kafka Connect and a
Kafka broker on 127.0.0.1 (tests/helpers/real_servers.py), the scripted workloads of
tests/helpers/real_workload.py, `land --kafka` and `dbt build`, and what gold holds afterwards.

    python -m tests.helpers.real_pipeline DIR     # run it all under DIR; compare gold with the databases

The connectors run with the lossless settings every start of the servers uses
(tests/helpers/real_servers.py, LOSSLESS_SETTINGS: truncates sent, unsigned BIGINTs and
intervals exact, years as stored) and, on MariaDB, `provide.transaction.metadata=true` (so that
transaction markers reach the lakehouse too). Two of MariaDB's table topics are created with
three partitions before the connector starts: a truncate (no key) and the rows after it land
in different partitions, so only the binlog position orders them.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.lakehouse_query import queries
from tests.helpers.processes import run_in_group
from tests.helpers.real_servers import DebeziumConnect, KafkaBroker, MariaDB, Postgres
from tests.helpers.real_workload import (
    SENTINEL_TABLE,
    Key,
    Workload,
    key_of,
    mariadb_workload,
    postgres_workload,
)
from tests.helpers.services import stop_services

CONNECTOR_OPTIONS = {"maria": {"provide.transaction.metadata": "true"}}  # beyond LOSSLESS_SETTINGS
TOPIC_PATTERN = r"pg\..*|maria|maria\..*"  # every topic the two connectors write
PARTITIONED_MARIADB_TOPICS = ("customers", "events")  # created with 3 partitions


@dataclass
class Run:
    workloads: dict[str, Workload]  # connector (source_connector in silver) -> its workload
    records: list[dict[str, Any]]  # every record the connectors wrote (kcat -J dicts)
    current: list[dict[str, Any]]
    history: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]
    outcomes: list[dict[str, Any]]
    changes: list[dict[str, Any]]
    schema_changes: list[dict[str, Any]]
    control_events: list[dict[str, Any]]
    seconds: dict[str, float]


def run_process(command: list[str], lakehouse: Path, timeout: float) -> str:
    """Run a project command against `lakehouse` in a process group of its own (its Spark JVM
    goes with it, whatever happens); its output, or a failed assertion with the output."""
    code, output, _ = run_in_group(command, lakehouse, timeout=timeout)
    assert code == 0, f"{' '.join(command)} exited {code}:\n{output[-6000:]}"
    return output


def all_records(broker: KafkaBroker) -> list[dict[str, Any]]:
    """Every record of every topic the connectors write, once two reads in a row find the same:
    Debezium has sent everything (the workload's last step has already arrived)."""
    previous: list[dict[str, Any]] | None = None
    for _ in range(30):
        topics = [t for t in broker.topics() if re.fullmatch(TOPIC_PATTERN, t)]
        records = broker.consume(topics)
        if previous is not None and len(records) == len(previous):
            return records
        previous = records
        time.sleep(1)
    raise AssertionError("the connectors kept writing for 30 reads of the topics")


def run_pipeline(root: Path) -> Run:
    """Start the servers under `root`, run both workloads, land every record the connectors
    wrote (one `land --kafka`), stop the servers, `dbt build` (one process), and read back what
    the checks need. The lakehouse is `root/lakehouse`; its services are stopped at the end."""
    lakehouse = root / "lakehouse"
    seconds: dict[str, float] = {}
    began = time.monotonic()

    def lap(name: str) -> None:
        seconds[name] = round(time.monotonic() - began - sum(seconds.values()), 1)

    with contextlib.ExitStack() as lakehouse_services:
        lakehouse_services.callback(stop_services, lakehouse)
        with contextlib.ExitStack() as servers:
            broker = servers.enter_context(KafkaBroker(root))
            postgres = servers.enter_context(Postgres(root))
            mariadb = servers.enter_context(MariaDB(root))
            workloads = {"postgresql": postgres_workload(), "mariadb": mariadb_workload()}
            databases = {"postgresql": postgres, "mariadb": mariadb}
            for kind, workload in workloads.items():
                workload.prepare(databases[kind])
            for table in PARTITIONED_MARIADB_TOPICS:
                broker.create_topic(
                    f"{DebeziumConnect.maria_prefix}.{mariadb.database}.{table}", partitions=3
                )
            lap("servers")
            connect = servers.enter_context(
                DebeziumConnect(root, broker, postgres, mariadb, connector_options=CONNECTOR_OPTIONS)
            )
            lap("connect and snapshots")
            for kind, workload in workloads.items():
                workload.run(databases[kind])
            sentinels = [connect.pg_topic(SENTINEL_TABLE), connect.maria_topic(SENTINEL_TABLE)]
            connect.wait_for(sentinels, 2, timeout=120)
            records = all_records(broker)
            lap("workload")
            landed = run_process(
                [sys.executable, "-m", "python_ingest", "land", "--format", "debezium"]
                + ["--kafka", broker.bootstrap, "--topic-pattern", TOPIC_PATTERN],
                lakehouse,
                timeout=300,
            )
            assert f"landed {len(records)} record(s)" in landed, landed
            lap("land")
        # The servers have stopped: the build has the machine to itself.
        run_process([str(Path(sys.executable).parent / "dbt"), "build"], lakehouse, timeout=600)
        lap("dbt build")
        results = queries(
            lakehouse,
            [
                "select table_id, primary_key, row_data from gold.cdc_current",
                "select table_id, primary_key, version_number, is_deleted, operation, row_data "
                "from gold.cdc_history order by table_id, key_hash, version_number",
                "select message_id, reason from silver.cdc_quarantine",
                "select b.source_uri, o.outcome, count(*) as messages "
                "from (select distinct message_id, source_uri from bronze.raw_debezium) as b "
                "left join silver.cdc_message_outcomes as o on b.message_id = o.message_id "
                "group by b.source_uri, o.outcome",
                "select source_connector, table_id, operation, primary_key, transaction_id, sequence "
                "from silver.cdc_changes",
                "select table_id, ddl_operation, ddl_text from silver.cdc_schema_changes",
                "select control_type, transaction_id from silver.cdc_control_events",
            ],
        )
        lap("queries")
    print("\nreal producers, seconds:", seconds, "total", round(sum(seconds.values()), 1))
    return Run(workloads, records, *results, seconds)


def differences(expected: dict[Key, dict], found: dict[Key, dict]) -> list[str]:
    """Readable differences between two tables' rows (key -> row): missing and extra keys, and
    per key the columns whose values differ."""
    lines = []
    for key in sorted(set(expected) | set(found), key=str):
        if key not in found:
            lines.append(f"{dict(key)}: missing from gold (database: {expected[key]})")
        elif key not in expected:
            lines.append(f"{dict(key)}: in gold only ({found[key]})")
        elif expected[key] != found[key]:
            for column in sorted(set(expected[key]) | set(found[key])):
                database, gold = expected[key].get(column, "(absent)"), found[key].get(column, "(absent)")
                if database != gold:
                    lines.append(f"{dict(key)} {column}: database {database!r}, gold {gold!r}")
    return lines


def current_differences(run: Run) -> dict[str, list[str]]:
    """Per table of the workloads, how gold.cdc_current differs from the database table
    (an empty list: equal, every key and every column)."""
    found: dict[str, list[str]] = {}
    for workload in run.workloads.values():
        for table_id, rows in workload.final.items():
            expected = {key: workload.comparable(table_id, row) for key, row in rows.items()}
            gold = {
                key_of(r["primary_key"]): workload.comparable(table_id, r["row_data"])
                for r in run.current
                if r["table_id"] == table_id
            }
            found[table_id] = differences(expected, gold)
    return found


def main(argv: list[str] | None = None) -> int:
    """The demo: the whole pipeline under DIR, then gold against the databases, table by table."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.helpers.real_pipeline", description=__doc__)
    parser.add_argument(
        "directory", type=Path, metavar="DIR", help="where the servers and the lakehouse live"
    )
    args = parser.parse_args(argv)
    root = args.directory.resolve()
    root.mkdir(parents=True, exist_ok=True)
    print(
        f"real producers under {root}: servers, workload, land --kafka, dbt build (a few minutes)", flush=True
    )
    run = run_pipeline(root)
    print(f"{len(run.records)} Kafka records landed; seconds per phase: {run.seconds}")
    unequal = 0
    for table_id, lines in sorted(current_differences(run).items()):
        rows = sum(1 for r in run.current if r["table_id"] == table_id)
        verdict = "DIFFERS from" if lines else "equals"
        print(f"  {table_id}: gold.cdc_current {verdict} the database ({rows} rows)")
        for line in lines:
            print(f"    {line}")
        unequal += bool(lines)
    print(f"quarantined: {len(run.quarantine)} message(s)")
    print(
        f"query it: CDC_LAKEHOUSE_DIR={root / 'lakehouse'} python -m python_ingest lakehouse start "
        "(docs/lakehouse.md, 'Query with SQL'); the servers have been stopped"
    )
    return 1 if unequal else 0


if __name__ == "__main__":
    raise SystemExit(main())
