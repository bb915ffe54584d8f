"""Real producers (tests/helpers/real_servers.py, docs/real_producers.md): a real PostgreSQL
(pgoutput) and a real MariaDB (row binlog) → the Debezium connectors in Kafka Connect → a real
Kafka broker, all on 127.0.0.1 under the test's directory.

- the broker alone: topics, produce (keys, headers, partitions, a tombstone), consume as
  ``kcat -C -J`` lines;
- the chain: a table with three rows in each database before Connect starts (snapshot, op
  ``r``), then an insert, an update and a delete (ops ``c``, ``u``, ``d`` and the tombstone
  after the delete) reach the broker as Debezium change records with their JsonConverter
  schema, in commit order.

Start times are printed (``pytest -s``). Skips when PostgreSQL and MariaDB are not installed
(scripts/install_test_servers.sh) or the servers' jars are not resolved
(``resolve_jars --services``); scripts/test.sh does both.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.real_servers import (
    DebeziumConnect,
    KafkaBroker,
    MariaDB,
    Postgres,
    Record,
    require_real_servers,
)

pytestmark = pytest.mark.services


@pytest.fixture(scope="module", autouse=True)
def servers_available() -> None:
    require_real_servers()


def value(record: dict[str, Any]) -> dict[str, Any] | None:
    """The Debezium envelope (``payload``) of a record's value; None for a tombstone."""
    return None if record["payload"] is None else json.loads(record["payload"])["payload"]


def loopback_only(port: int) -> bool:
    """Whether `port` answers on 127.0.0.1 but on no other address of this machine."""
    addresses = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    for address in addresses - {"127.0.0.1"}:
        with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
            return False
    return True


def test_kafka_broker_topics_produce_consume(tmp_path: Path) -> None:
    with KafkaBroker(tmp_path) as broker:
        print(f"\nkafka broker started in {broker.started_in:.1f} s")
        assert broker.bootstrap.startswith("127.0.0.1:")
        assert loopback_only(broker.port)
        broker.create_topic("orders", partitions=2)
        broker.produce(
            "orders",
            [
                ("k1", '{"a": 1}', [("source", "test"), ("n", "1")], 0),
                Record(key=None, value="plain text", partition=1),
                ("k1", None, None, 0),  # a tombstone
            ],
        )
        records = sorted(broker.consume("orders"), key=lambda r: (r["partition"], r["offset"]))
        assert [(r["partition"], r["offset"], r["key"], r["payload"]) for r in records] == [
            (0, 0, "k1", '{"a": 1}'),
            (0, 1, "k1", None),
            (1, 0, None, "plain text"),
        ]
        assert records[0]["headers"] == ["source", "test", "n", "1"]
        assert "headers" not in records[1] and records[0]["tstype"] == "create"
        assert broker.end_offsets("orders") == {0: 2, 1: 1}
        broker.produce("created-on-first-use", [("k", "v")])
        assert broker.consume("created-on-first-use", min_records=1, timeout=30)[0]["payload"] == "v"
        broker.delete_topic("orders")
        assert "orders" not in broker.topics()


PG_TABLE = """
create table customers (
  id int primary key, name text, balance numeric(10, 2), active boolean, born date,
  updated_at timestamptz default '2025-03-14 12:00:00+00'
);
alter table customers replica identity full;  -- before images of every column
insert into customers (id, name, balance, active, born) values
  (1, 'Ann', 12.50, true, '1990-01-31'), (2, 'Bob', -3.00, false, null), (3, 'Cy', 0.10, true, '2001-12-01');
"""
MARIA_TABLE = """
create table customers (
  id int primary key, name varchar(100), balance decimal(10, 2), active boolean, born date,
  updated_at datetime(6) default '2025-03-14 12:00:00'
);
insert into customers (id, name, balance, active, born) values
  (1, 'Ann', 12.50, true, '1990-01-31'), (2, 'Bob', -3.00, false, null), (3, 'Cy', 0.10, true, '2001-12-01');
"""
CHANGES = """
insert into customers (id, name, balance, active, born) values (4, 'Dee', 99.99, true, '1985-06-15');
update customers set name = 'Bobby', balance = 7.25 where id = 2;
delete from customers where id = 3;
"""


def test_debezium_change_records_reach_the_broker(tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        broker = stack.enter_context(KafkaBroker(tmp_path))
        postgres = stack.enter_context(Postgres(tmp_path))
        mariadb = stack.enter_context(MariaDB(tmp_path))
        postgres.sql(PG_TABLE)
        mariadb.sql(MARIA_TABLE)
        connect = stack.enter_context(DebeziumConnect(tmp_path, broker, postgres, mariadb))
        servers = (broker, postgres, mariadb, connect)
        print("\n" + ", ".join(f"{s.name} started in {s.started_in:.1f} s" for s in servers))
        assert connect.status() == {
            "pg": {"connector": "RUNNING", "tasks": ["RUNNING"]},
            "maria": {"connector": "RUNNING", "tasks": ["RUNNING"]},
        }
        for port in (broker.port, postgres.port, mariadb.port, connect.rest_port):
            assert loopback_only(port)

        postgres.sql(CHANGES)
        mariadb.sql(CHANGES)
        # Three snapshot rows, an insert, an update, a delete and its tombstone, per database.
        pg_records = connect.wait_for(connect.pg_topic("customers"), 7)
        maria_records = connect.wait_for(connect.maria_topic("customers"), 7)

        for connector, records in (("postgresql", pg_records), ("mariadb", maria_records)):
            assert len(records) == 7
            envelopes = [value(r) for r in records]
            assert [e and e["op"] for e in envelopes] == ["r", "r", "r", "c", "u", "d", None]
            keys = [json.loads(r["key"])["payload"]["id"] for r in records]
            assert keys == [1, 2, 3, 4, 2, 3, 3]
            assert all(e["source"]["connector"] == connector for e in envelopes if e)
            snapshot, insert, update, delete = envelopes[0], envelopes[3], envelopes[4], envelopes[5]
            assert snapshot["source"]["snapshot"] in ("first", "true", "last", "last_in_data_collection")
            assert insert["before"] is None and insert["after"]["name"] == "Dee"
            assert update["before"]["name"] == "Bob" and update["after"]["name"] == "Bobby"
            assert delete["before"]["name"] == "Cy" and delete["after"] is None
            # JsonConverter with schemas: the value's schema names Debezium's envelope and
            # the Connect types (decimal as base64 bytes with its scale, dates as days).
            schema = json.loads(records[3]["payload"])["schema"]
            after = next(f for f in schema["fields"] if f["field"] == "after")
            types = {f["field"]: (f["type"], f.get("name")) for f in after["fields"]}
            assert types["balance"] == ("bytes", "org.apache.kafka.connect.data.Decimal")
            assert types["born"] == ("int32", "io.debezium.time.Date")
            assert insert["after"]["born"] == 5644  # 1985-06-15, days since 1970-01-01

        # MariaDB's DDL reaches its schema change topic; the schema history its own topic.
        topics = broker.topics()
        assert {"pg.public.customers", "maria.shop.customers", "maria", "maria.schema-history"} <= set(topics)
        ddl = [(value(r) or {}).get("ddl", "") for r in broker.consume("maria")]
        assert any(re.match(r"create table `?customers`?", d, re.IGNORECASE) for d in ddl), ddl
        print("postgres change record:", pg_records[4]["payload"])
        print("mariadb change record:", maria_records[4]["payload"])
