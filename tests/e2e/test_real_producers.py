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
step fails. The pipeline itself is tests/helpers/real_pipeline.py (also the demo,
scripts/real_producers_demo.sh). Skips when PostgreSQL and MariaDB are not installed or the
servers' jars are not resolved, unless $CDC_REQUIRE_REAL_SERVERS=1 (as under .ci/run).
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers.real_pipeline import Run, current_differences, run_pipeline
from tests.helpers.real_servers import require_real_servers
from tests.helpers.real_workload import Key, Version, key_of

pytestmark = pytest.mark.services


@pytest.fixture(scope="module", autouse=True)
def servers_available() -> None:
    require_real_servers()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_pipeline(tmp_path_factory.mktemp("real-producers"))


def test_gold_current_equals_every_database_table(run: Run) -> None:
    found = current_differences(run)
    wrong = {table_id: lines for table_id, lines in found.items() if lines}
    assert not wrong, "\n".join(f"{t}:\n" + "\n".join(lines) for t, lines in wrong.items())
    tables = {t for w in run.workloads.values() for t in w.final}
    assert {r["table_id"] for r in run.current} == tables == set(found)
    compared = sum(len(rows) for w in run.workloads.values() for rows in w.final.values())
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
