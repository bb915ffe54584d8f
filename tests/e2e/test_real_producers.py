"""Real producers end to end: a real PostgreSQL (pgoutput) and a real MariaDB (row binlog), the
Debezium connectors in Kafka Connect and a Kafka broker, all on 127.0.0.1 under the test's
directory (tests/helpers/real_servers.py); the scripted workload of
tests/helpers/real_workload.py (tables with rows before the connectors start, so their initial
snapshot sends them; then inserts, updates, a primary-key change, deletes, a truncate, a
TOASTed value left unchanged, a multi-row transaction, a column added mid-stream, and the
types of both databases); `land --kafka` in one process; `dbt build` in one process. Then:

- gold.cdc_current equals each database table, key by key, every column, in the contract's
  spellings (the workload's readers render the database side);
- gold.cdc_history holds each key's sequence of committed states (the tables read after each
  step of the workload), with the operation that started each version;
- no message is quarantined, and every bronze message has one outcome: the change records
  are changes (tombstones control), and what the connectors write to their other topics
  (transaction markers, MariaDB's schema change events and schema history) is control;
- the changes of the multi-row transaction share one transaction id; MariaDB's ALTER is in
  silver.cdc_schema_changes.

The connectors keep Debezium's defaults except `skipped.operations=none` (by default Debezium
does not send truncates at all) and, on MariaDB, `provide.transaction.metadata=true` (so that
transaction markers reach the lakehouse too). Two of MariaDB's table topics are created with
three partitions before the connector starts: a truncate (no key) and the rows after it land
in different partitions, so only the binlog position orders them.

Every server stops when the module's fixture ends (the lakehouse's services too), also when a
step fails. Skips when PostgreSQL and MariaDB are not installed or the servers' jars are not
resolved (see tests/e2e/test_real_servers.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.lakehouse_query import ROOT, queries
from tests.helpers.real_servers import DebeziumConnect, KafkaBroker, MariaDB, Postgres, servers_installed
from tests.helpers.real_workload import (
    SENTINEL_TABLE,
    Key,
    Version,
    Workload,
    key_of,
    mariadb_workload,
    postgres_workload,
)
from tests.helpers.services import stop_services

pytestmark = pytest.mark.services

CONNECTOR_OPTIONS = {
    "pg": {"skipped.operations": "none"},
    "maria": {"skipped.operations": "none", "provide.transaction.metadata": "true"},
}
TOPIC_PATTERN = r"pg\..*|maria|maria\..*"  # every topic the two connectors write
PARTITIONED_MARIADB_TOPICS = ("customers", "events")  # created with 3 partitions


@pytest.fixture(scope="module", autouse=True)
def servers_available() -> None:
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError, service_classpath

    missing = servers_installed()
    if missing:
        pytest.skip(missing)
    try:
        service_classpath("kafka-broker")
        service_classpath("kafka-connect-debezium")
    except JarsNotResolvedError as exc:
        pytest.skip(str(exc))


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
    env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 0, f"{' '.join(command)} exited {process.returncode}:\n{output[-6000:]}"
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


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("real-producers")
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


def test_gold_current_equals_every_database_table(run: Run) -> None:
    compared = 0
    for workload in run.workloads.values():
        for table_id, rows in workload.final.items():
            expected = {key: workload.comparable(table_id, row) for key, row in rows.items()}
            found = {
                key_of(r["primary_key"]): workload.comparable(table_id, r["row_data"])
                for r in run.current
                if r["table_id"] == table_id
            }
            assert not differences(expected, found), f"{table_id}:\n" + "\n".join(
                differences(expected, found)
            )
            compared += len(rows)
    tables = {t for w in run.workloads.values() for t in w.final}
    assert {r["table_id"] for r in run.current} == tables
    assert compared == len(run.current) and compared > 20


def test_gold_history_holds_each_keys_committed_states_in_order(run: Run) -> None:
    found: dict[str, dict[Key, list[Version]]] = {}
    for r in run.history:  # in version order
        versions = found.setdefault(r["table_id"], {}).setdefault(key_of(r["primary_key"]), [])
        assert r["version_number"] == len(versions) + 1
        versions.append((r["operation"], r["is_deleted"], r["row_data"]))
    for workload in run.workloads.values():
        for table_id, expected in workload.histories().items():
            gold = {
                key: [(op, deleted, workload.comparable(table_id, row)) for op, deleted, row in versions]
                for key, versions in found.get(table_id, {}).items()
            }
            wrong = [
                f"{dict(key)}:\n  database: {expected.get(key)}\n  gold:     {gold.get(key)}"
                for key in sorted(set(expected) | set(gold), key=str)
                if expected.get(key) != gold.get(key)
            ]
            assert not wrong, f"{table_id}:\n" + "\n".join(wrong)
    operations = Counter(op for versions in found.values() for v in versions.values() for op, _, _ in v)
    assert {"snapshot", "insert", "update", "delete", "truncate"} <= set(operations)


def test_every_message_has_an_outcome_and_none_is_quarantined(run: Run) -> None:
    assert run.quarantine == []
    outcomes: dict[str, Counter[str]] = {}
    for r in run.outcomes:
        outcomes.setdefault(r["source_uri"].removeprefix("kafka:"), Counter())[r["outcome"]] += r["messages"]
    assert sum(sum(c.values()) for c in outcomes.values()) == len(run.records)
    by_topic = Counter(r["topic"] for r in run.records)
    assert {t: sum(c.values()) for t, c in outcomes.items()} == dict(by_topic)
    tombstones = Counter(r["topic"] for r in run.records if r["payload"] is None)
    for topic, counts in outcomes.items():
        if topic.count(".") == 2:  # a table's topic: change records and the tombstones after deletes
            changes = by_topic[topic] - tombstones[topic]
            assert counts == +Counter(change=changes, control=tombstones[topic]), topic
        else:  # schema changes, schema history, transaction markers
            assert counts == Counter(control=by_topic[topic]), topic
    assert {"maria", "maria.schema-history", "maria.transaction"} <= set(outcomes)


def test_a_multi_row_transaction_is_one_source_transaction(run: Run) -> None:
    def transaction(connector: str, table: str, operation: str, key: str) -> str:
        [found] = [
            c["transaction_id"]
            for c in run.changes
            if c["source_connector"] == connector
            and c["table_id"].endswith(f".{table}")
            and c["operation"] == operation
            and c["primary_key"] == {"id": key}
        ]
        return found

    for connector in ("postgresql", "mariadb"):
        together = {
            transaction(connector, "customers", "insert", "5"),
            transaction(connector, "customers", "update", "10"),
            transaction(connector, "events", "delete", "3"),
            transaction(connector, "typed", "insert", "3"),
        }
        assert len(together) == 1 and None not in together, (connector, together)
        assert transaction(connector, "customers", "insert", "4") not in together
    # MariaDB's GTIDs (domain-server-sequence) and its transaction markers: a BEGIN for each
    # transaction, an END for each that changed rows (Debezium 3.5 sends none after DDL: the
    # TRUNCATE, the ALTER).
    maria = [c for c in run.changes if c["source_connector"] == "mariadb" and c["transaction_id"]]
    gtids = {c["transaction_id"] for c in maria}
    assert gtids and all(g.count("-") == 2 for g in gtids)
    begins = {e["transaction_id"] for e in run.control_events if e["control_type"] == "transaction_begin"}
    ends = {e["transaction_id"] for e in run.control_events if e["control_type"] == "transaction_end"}
    assert gtids <= begins and ends <= begins
    assert {c["transaction_id"] for c in maria if c["operation"] != "truncate"} <= ends


def test_mariadb_changes_are_in_binlog_order_and_its_ddl_is_a_schema_change(run: Run) -> None:
    maria = [c for c in run.changes if c["source_connector"] == "mariadb"]
    assert maria and all(c["sequence"].startswith("mariadb-bin.") for c in maria)
    assert any(
        s["table_id"] == "shop.customers"
        and s["ddl_operation"] == "ALTER"
        and "add column note" in s["ddl_text"]
        for s in run.schema_changes
    ), run.schema_changes
