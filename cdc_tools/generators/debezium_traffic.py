"""Realistic Debezium traffic from SQL Server, PostgreSQL, MySQL and MariaDB
connectors, with the expected outcome.

Simulates six tables: an initial snapshot (`op` r), then small transactions of
inserts, updates and deletes, primary-key changes, a PostgreSQL and a MariaDB
truncate followed by new inserts (one reusing a truncated key), logical decoding
messages, REPLICA IDENTITY DEFAULT partial images and unchanged TOASTed values.
The MariaDB table's connector sends what real MariaDB connectors send besides
row changes: schema change events (the snapshot's DROP / CREATE TABLE, and an
ALTER TABLE adding a column mid-stream, after which row images carry it) and
transaction markers (provide.transaction.metadata: a BEGIN for every streamed
transaction, an END for those that changed rows); its GTIDs identify the
transactions, several of which share a second of its binlog clock, so only the
binlog position orders them. Every record of a connector's task carries the
`__debezium.context.*` headers, whose run id changes when the connector restarts.
Every topic has several partitions and each record goes where Kafka's default
partitioner puts its key, so one key's changes stay in order while a table's
do not. A connector restart re-sends its last transaction (same content, new
offsets).

Delivered two ways:
- `kcat/`: `kcat -C -J` dumps, keys and values with schemas, a tombstone after
  every delete; one file per topic partition, `<topic>-<partition>.kcat.jsonl`,
  and for some partitions a second dump of an offset range,
  `<topic>-<partition>.redump.kcat.jsonl` (the same records again).
- `jsonl/`: Kafka Connect S3 sink files,
  `topics/<topic>/partition=<p>/<topic>+<p>+<start offset>.json`: value
  payloads only (no schema, no key, no tombstones).

Alongside, `expected_current` holds the live rows in the contract's text forms,
so a test can compare gold.cdc_current with them exactly. With `record_history`,
`expected_history` holds every key's versions as well, and what in the traffic
could make a consumer get that key wrong (`CAUSES`), for a per-key history diff
(benchmarks/peer_compare.py).
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators.debezium_messages import (
    UNAVAILABLE,
    Column,
    Connector,
    Record,
    SentRecord,
    Table,
    change_value,
    columns,
    context_headers,
    contract_text,
    dumps,
    encode,
    kafka_partition,
    kcat_record,
    key_change_records,
    key_message,
    key_only_image,
    message_record,
    micro_timestamp,
    mysql_source,
    nano_time,
    nano_timestamp,
    postgresql_source,
    schema_change_record,
    sqlserver_lsn,
    sqlserver_source,
    transaction_block,
    transaction_marker,
)
from cdc_tools.generators.files import key_text, write_expected
from cdc_tools.generators.sorted_keys import SortedKeyDict

SNAPSHOT_ROWS = 4  # per table
# What in the traffic can make a consumer's history of a key differ from the source's: the
# classes of a per-key diff (benchmarks/peer_compare.py), in the order a difference is
# attributed to them when a key has several.
CAUSES = (
    "truncates",  # the key's row was removed by a TRUNCATE (one event with a null key)
    "primary-key changes",  # the key was the old or the new key of an UPDATE of the key
    "partial images",  # an unchanged TOASTed value sent as the placeholder; a key-only delete image
    "deletes and re-inserts",  # the key came back after a delete or a truncate
    "schema changes",  # a version written after an ALTER TABLE added a column
    "redelivery",  # a record of the key sent again (connector restart, a second dump)
    "out-of-order delivery",  # the key's records read out of their log order
    "transactions",  # changed in a transaction with other changes
)
HISTORY_FILE = "_expected_history.json"
FLUSH_SIZE = 20  # S3 sink records per file
TOAST_THRESHOLD = 2000  # PostgreSQL moves values larger than about 2 kB out of line
INT64_KEY_BASE = 2**53  # int64 keys beyond a double's exact range
REGIONS = ("EU", "US", "APAC")
ODD_TEXTS = ("", "Zoë Müller", "東京 warehouse", 'O\'Brien, "Jr."', "line one\nline two", "back\\slash")


@dataclass(frozen=True)
class Feed:
    """A captured table and how its changes are delivered."""

    table: Table
    schemaless: bool = False  # through the S3 sink: value payloads only, in jsonl/
    full_identity: bool = True  # False: PostgreSQL REPLICA IDENTITY DEFAULT (partial before images)
    toast_column: str | None = None  # large unchanged values arrive as the placeholder in updates
    added_column: Column | None = None  # added by an ALTER TABLE mid-stream (nullable, no default)


def default_feeds(
    db: str, schemaless_dbs: tuple[str, str] = ("inventory", "shop"), server_prefix: str = ""
) -> tuple[Feed, ...]:
    """The simulated tables (source types in comments) and how each is delivered. `db` names the
    database of the SQL Server and PostgreSQL tables sent with schemas; `schemaless_dbs` those of
    the PostgreSQL and MySQL tables sent without (declared in seeds/cdc_declared_columns.csv).
    `server_prefix` goes before each connector's server name, so before its topics: a message's
    id is its topic, partition and offset, so two traffics landed into one lakehouse need
    prefixes of their own, or the second one's messages are taken for copies of the first's."""
    sqlserver = Connector("sqlserver", f"{server_prefix}gensql", db)
    postgres = Connector("postgresql", f"{server_prefix}genpg", db)
    inventory = Connector("postgresql", f"{server_prefix}invpg", schemaless_dbs[0])
    mysql = Connector("mysql", f"{server_prefix}genmysql", schemaless_dbs[1])
    mariadb = Connector("mariadb", f"{server_prefix}genmaria", db)
    # nvarchar, int, nvarchar, decimal(12,2), bit, date, datetime2(7), datetimeoffset, time(3), varbinary
    accounts = columns(
        "region:string! account_no:int32! owner:string balance:decimal(12,2) active:boolean opened_on:date "
        "updated_at:nano_timestamp last_login:zoned_timestamp cutoff:time photo:bytes"
    )
    # bigint, decimal(19,4), datetime, time(7), smallint, nvarchar
    transfers = columns(
        "transfer_id:int64! amount:decimal(19,4) booked_at:timestamp value_time:nano_time "
        "channel:int16 memo:string"
    )
    # integer, text, numeric(12,3), date, timestamp, text, boolean, numeric, timestamptz, time
    items = columns(
        "item_id:int32! sku:string price:decimal(12,3) listed_on:date updated_at:micro_timestamp "
        "description:string in_stock:boolean weight:variable_decimal restock_at:zoned_timestamp "
        "pick_time:micro_time"
    )
    # integer, date, numeric(10,3), timestamp, text: declared in seeds/cdc_declared_columns.csv
    shipments = columns(
        "shipment_id:int32! shipped_on:date weight:decimal(10,3) shipped_at:micro_timestamp note:string"
    )
    # int, varchar, int, boolean, varchar
    orders = columns("order_id:int32! customer:string quantity:int32 paid:boolean status:string")
    # int, varchar, decimal(10,2), BOOLEAN (TINYINT(1)), uuid, datetime(6), timestamp(6); then note varchar
    products = columns(
        "product_id:int32! name:string price:decimal(10,2) active:tinyint1 uid:uuid "
        "added_at:micro_timestamp updated_at:zoned_timestamp"
    )
    return (
        Feed(Table(sqlserver, "dbo", "accounts", accounts, ("region", "account_no"))),
        Feed(Table(sqlserver, "dbo", "transfers", transfers, ("transfer_id",))),
        Feed(
            Table(postgres, "public", "items", items, ("item_id",)),
            full_identity=False,
            toast_column="description",
        ),
        Feed(Table(inventory, "public", "shipments", shipments, ("shipment_id",)), schemaless=True),
        Feed(Table(mysql, None, "orders", orders, ("order_id",)), schemaless=True),
        Feed(
            Table(mariadb, None, "products", products, ("product_id",)), added_column=Column("note", "string")
        ),
    )


@dataclass
class Traffic:
    """Generated kcat dumps and S3 sink files, and the expected live rows."""

    kcat: dict[str, list[dict[str, Any]]]  # file name under kcat/ -> kcat -J records
    jsonl: dict[str, list[dict[str, Any]]]  # path under jsonl/ -> value payloads
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    changes: int = 0  # streamed row changes (a key change or a truncate counts once)
    snapshot_rows: int = 0
    redeliveries: int = 0
    feeds: tuple[Feed, ...] = field(default_factory=tuple)
    # With record_history: table_id -> key text -> {"versions": [[op, row text, row as sent]],
    # "causes": [...]}: every version of the key in commit order (op r, c, u, d or t; the row is
    # null after a d or t), and the CAUSES that touched it, in CAUSES order.
    expected_history: dict[str, dict[str, dict[str, Any]]] | None = None

    @property
    def messages(self) -> int:
        return sum(len(lines) for files in (self.kcat, self.jsonl) for lines in files.values())

    def write(self, directory: Path) -> list[Path]:
        """Write `kcat/…`, `jsonl/…` and `_expected_current.json`; return the message files."""
        paths = []
        for folder, files in (("kcat", self.kcat), ("jsonl", self.jsonl)):
            for name, lines in files.items():
                path = directory / folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("w", encoding="utf-8") as handle:  # line by line: any size
                    for line in lines:
                        handle.write(dumps(line) + "\n")
                paths.append(path)
        write_expected(directory, self.expected_current)
        if self.expected_history is not None:
            with (directory / HISTORY_FILE).open("w", encoding="utf-8") as handle:
                json.dump(self.expected_history, handle, ensure_ascii=False, default=str)
        return paths


class _History:
    """Every key's versions and the causes that touched it, as the simulation changes rows."""

    def __init__(self) -> None:
        self.keys: dict[str, dict[str, dict[str, Any]]] = {}
        self.of_record: dict[tuple[str, str], tuple[str, str]] = {}  # (topic, key JSON) -> key
        self.altered: set[str] = set()  # tables an ALTER TABLE changed
        self.in_transaction: list[tuple[str, str]] = []  # keys the current transaction changed

    def _entry(self, table_id: str, key: str) -> dict[str, Any]:
        return self.keys.setdefault(table_id, {}).setdefault(key, {"versions": [], "causes": set()})

    def version(self, table_id: str, key: str, op: str, sent: Any, text: Any, *causes: str) -> None:
        entry = self._entry(table_id, key)
        versions = entry["versions"]
        if op in ("r", "c") and versions and versions[-1][0] in ("d", "t"):
            entry["causes"].add("deletes and re-inserts")
        versions.append([op, None if text is None else dict(text), None if sent is None else dict(sent)])
        entry["causes"].update(causes)
        if table_id in self.altered:
            entry["causes"].add("schema changes")
        self.in_transaction.append((table_id, key))

    def cause(self, table_id: str, key: str, cause: str) -> None:
        self._entry(table_id, key)["causes"].add(cause)

    def record(self, record: Record, table_id: str, key: str) -> None:
        if record.key is not None:
            self.of_record[(record.topic, dumps(record.key))] = (table_id, key)

    def redelivered(self, topic: str, record_key: str | None) -> None:
        found = None if record_key is None else self.of_record.get((topic, record_key))
        if found:
            self.cause(*found, "redelivery")

    def commit(self, redelivered: bool) -> None:
        touched = dict.fromkeys(self.in_transaction)
        for table_id, key in touched:
            if redelivered:
                self.cause(table_id, key, "redelivery")
            if len(touched) > 1:
                self.cause(table_id, key, "transactions")
        self.in_transaction = []

    def result(self) -> dict[str, dict[str, dict[str, Any]]]:
        order = {cause: n for n, cause in enumerate(CAUSES)}
        return {
            table_id: {
                key: {"versions": e["versions"], "causes": sorted(e["causes"], key=order.__getitem__)}
                for key, e in keys.items()
            }
            for table_id, keys in self.keys.items()
        }


class _Simulation:
    """The source databases: live rows, log positions and clocks, and the records produced."""

    def __init__(
        self, feeds: Sequence[Feed], rng: random.Random, redelivery_rate: float, record_history: bool = False
    ) -> None:
        self.feeds, self.rng, self.redelivery_rate = feeds, rng, redelivery_rate
        self.history = _History() if record_history else None
        self.live: dict[str, dict[str, tuple[dict[str, Any], dict[str, str | None]]]] = {
            f.table.table_id: SortedKeyDict() for f in feeds
        }
        self.next_id: Counter[str] = Counter()
        self.truncated: dict[str, list[dict[str, Any]]] = {}  # table_id -> rows a truncate removed
        self.produced: list[SentRecord] = []  # serialized, with their Kafka timestamps, in production order
        self.changes = self.snapshot_rows = self.redeliveries = 0
        self.clock = self.commit = datetime(2025, 3, 14, 9, 0, 0)  # naive UTC
        self.processed = 0  # ns: the connectors' processing clock (payload ts_*)
        self.sql_lsn, self.sql_commit, self.sql_change = (0x2B << 48) | (0xF98 << 16), 0, 0
        self.pg_lsn, self.pg_tx, self.pg_last_commit = 24_023_128, 555, None
        self.binlog, self.binlog_pos, self.mysql_event, self.mysql_row = 3, 157, ("", ""), 0
        self.gtid_sequence, self.gtid = 10, ""  # MariaDB: domain 0, server 1, the sequence
        self.connector = feeds[0].table.connector  # of the current transaction
        self.tx_records: list[tuple[Record, bool]] = []  # what a restart re-sends (record, with context)
        self.total_order, self.table_order = 0, Counter[str]()  # transaction metadata (SQL Server, MariaDB)
        self.tx_rows: Counter[str] = Counter()  # MariaDB: row events per table of the current transaction
        self.structure = {f.table.table_id: f.table for f in feeds}  # each table's columns now
        self.restarts: Counter[str] = Counter()  # per connector: its run id changes at each restart

    def _table(self, feed: Feed) -> Table:
        """The feed's table with the columns it has now (an ALTER may have added one)."""
        return self.structure[feed.table.table_id]

    def _run_id(self, connector: Connector) -> str:
        """The id of the connector's current run (`__debezium.context.runId`): a UUID."""
        digest = hashlib.sha256(f"{connector.name}:{self.restarts[connector.name]}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16]))

    # -- values -------------------------------------------------------------------
    def _large_text(self) -> str:
        """Text PostgreSQL TOASTs: beyond TOAST_THRESHOLD even after compression."""
        return " ".join(f"{self.rng.getrandbits(32):08x}" for _ in range(self.rng.randint(500, 800)))

    def _text(self, feed: Feed, column: Column) -> str:
        if column.name == feed.toast_column and self.rng.random() < 0.35:
            return self._large_text()
        if self.rng.random() < 0.12:
            return self.rng.choice(ODD_TEXTS)
        return f"{column.name}-{self.rng.randint(1, 999)}"

    def _natural(self, feed: Feed, column: Column) -> Any:
        """A random natural Python value for a non-key column."""
        rng, kind = self.rng, column.kind
        if column.optional and rng.random() < 0.08:
            return None
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "tinyint1":  # MySQL / MariaDB BOOLEAN: 0 or 1
            return rng.randint(0, 1)
        if kind == "uuid":
            return str(uuid.UUID(int=rng.getrandbits(128)))
        if kind == "int16":
            return rng.randint(-32768, 32767)
        if kind in ("int32", "int64"):
            return rng.randint(0, 100_000)
        if kind == "string":
            return self._text(feed, column)
        if kind == "bytes":
            return rng.randbytes(rng.randint(0, 24))
        if kind in ("decimal", "variable_decimal"):
            digits = rng.randint(1, column.precision or 12)
            scale = column.scale if kind == "decimal" else rng.randint(0, 6)
            return Decimal(rng.randint(1 - 10**digits, 10**digits - 1)).scaleb(-scale)
        if kind == "date":
            return date(1950, 1, 1) + timedelta(days=rng.randint(0, 30_000))
        micros = rng.randrange(86_400_000_000)
        if kind in ("time", "micro_time", "nano_time"):
            micros -= micros % 1000 if kind == "time" else 0
            return (datetime.min + timedelta(microseconds=micros)).time()
        moment = self.commit - timedelta(days=rng.randint(0, 900), microseconds=micros)
        if kind == "timestamp":
            moment -= timedelta(microseconds=moment.microsecond % 1000)
        elif rng.random() < 0.2:
            moment = moment.replace(microsecond=0)
        if kind == "zoned_timestamp":  # UTC but SQL Server's datetimeoffset, which keeps its offset
            minutes = 0 if feed.table.connector.kind != "sqlserver" else rng.choice((-180, 0, 330, 540))
            return moment.replace(tzinfo=UTC).astimezone(timezone(timedelta(minutes=minutes)))
        return moment

    def _cell(self, column: Column, value: Any) -> tuple[Any, str | None]:
        """(value as Debezium sends it, value in the contract's text form)."""
        if value is not None and column.kind in ("nano_time", "nano_timestamp"):  # 100 ns ticks
            encoder = nano_time if column.kind == "nano_time" else nano_timestamp
            return encoder(value, self.rng.randrange(0, 1000, 100)), contract_text(value)
        return encode(column, value), contract_text(value)

    def _new_key(self, table: Table) -> dict[str, Any]:
        self.next_id[table.table_id] += 1
        number, key = self.next_id[table.table_id], {}
        for name in table.key:
            kind = table.column(name).kind
            if kind == "string":
                key[name] = self.rng.choice(REGIONS)
            else:
                key[name] = number + (INT64_KEY_BASE if kind == "int64" else 0)
        return key

    def _row(self, feed: Feed, fixed: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str | None]]:
        """A new row (as sent, as text): `fixed` natural values, random ones for the other columns."""
        sent: dict[str, Any] = {}
        text: dict[str, str | None] = {}
        for column in self._table(feed).columns:
            value = fixed[column.name] if column.name in fixed else self._natural(feed, column)
            sent[column.name], text[column.name] = self._cell(column, value)
        return sent, text

    def _full(self, feed: Feed, sent: Mapping[str, Any], text: Mapping[str, str | None] | None = None) -> Any:
        """A row image with every column the table has now: a column added since the row was
        written is NULL (a binlog row image is always whole). With `text`, both forms."""
        names = [c.name for c in self._table(feed).columns]
        full_sent = {**dict.fromkeys(names), **sent}
        return full_sent if text is None else (full_sent, {**dict.fromkeys(names), **text})

    # -- transactions and positions -------------------------------------------------
    def _begin(self, connector: Connector, streaming: bool = True) -> None:
        self.connector, self.tx_records = connector, []
        # MariaDB's transactions come in quick succession: several in one second of its binlog clock,
        # so only the binlog position orders them.
        seconds = 0 if connector.kind == "mariadb" else self.rng.randint(1, 20)
        self.clock += timedelta(seconds=seconds, microseconds=self.rng.randrange(1_000_000))
        self.commit, self.total_order, self.table_order = self.clock, 0, Counter()
        self.sql_change, self.sql_commit = self.sql_lsn, self.sql_lsn + 0x10000
        self.mysql_event, self.tx_rows = ("", ""), Counter()
        if connector.kind == "mariadb" and streaming:  # a GTID per transaction, and its BEGIN marker
            self.gtid_sequence += 1
            self.gtid = f"0-1-{self.gtid_sequence}"
            self._publish(transaction_marker(connector, "BEGIN", self.gtid, self._binlog_ms()), context=False)

    def _binlog_ms(self) -> int:
        """The commit time as MySQL and MariaDB report it: whole seconds, in milliseconds."""
        return micro_timestamp(self.commit) // 1_000_000 * 1000

    def _commit(self) -> None:
        kind = self.connector.kind
        if kind == "mariadb" and self.tx_rows:  # END only after row events (none after DDL, TRUNCATE)
            collections = {f"{self.connector.db}.{t}": n for t, n in self.tx_rows.items()}
            end = transaction_marker(self.connector, "END", self.gtid, self._binlog_ms(), collections)
            self._publish(end, context=False)
        if kind == "sqlserver":
            self.sql_lsn = self.sql_commit + self.rng.randint(0x10, 0x100)
        elif kind == "postgresql":
            self.pg_lsn += self.rng.randint(40, 120)
            self.pg_last_commit, self.pg_tx = self.pg_lsn, self.pg_tx + 1
        else:
            self.binlog_pos += 31  # the XID event
            if self.binlog_pos > 30_000:  # binlog rotation
                self.binlog, self.binlog_pos = self.binlog + 1, 157
        restart = bool(self.tx_records) and self.rng.random() < self.redelivery_rate
        if self.history is not None:
            self.history.commit(redelivered=restart)
        if restart:  # a connector restart: the last transaction again
            self.processed += 5 * 10**9
            self.restarts[self.connector.name] += 1  # a new run: a new run id in the headers
            for record, context in list(self.tx_records):
                self._publish(record, context)
            self.redeliveries += len(self.tx_records)

    def _source(self, table: Table, op: str, snapshot: str = "false", same_change: bool = False) -> dict:
        """The `source` block of the next event of the current transaction (or snapshot)."""
        kind, rng, streaming = table.connector.kind, self.rng, snapshot == "false"
        commit_us = micro_timestamp(self.commit)
        if kind == "sqlserver":
            if not streaming:
                return sqlserver_source(
                    table, commit_us // 1000, sqlserver_lsn(self.sql_lsn), None, None, snapshot
                )
            self.sql_change += 0 if same_change else rng.randint(0x10, 0x400)
            lsn, commit_lsn = sqlserver_lsn(self.sql_change), sqlserver_lsn(self.sql_commit)
            return sqlserver_source(table, commit_us // 1000, commit_lsn, lsn, 2 if same_change else 1)
        if kind == "postgresql":
            self.pg_lsn += 0 if same_change or not streaming else rng.randint(40, 400)
            last = self.pg_last_commit if streaming else None
            return postgresql_source(
                table.connector, commit_us, self.pg_tx, self.pg_lsn, last, snapshot, table
            )
        if streaming and same_change:  # the other half of a key change: the same row of one event
            pass
        elif streaming and self.mysql_event == (table.name, op):  # another row of a multi-row event
            self.mysql_row += 1
        elif streaming:
            self.binlog_pos += rng.randint(180, 900)
            self.mysql_event, self.mysql_row = (table.name, op), 0
        if kind == "mariadb":  # server id 1 and the GTID when streaming; 0 and none in the snapshot
            file = f"mariadb-bin.{self.binlog:06d}"
            row, server, gtid = (self.mysql_row, 1, self.gtid) if streaming else (0, 0, None)
            return mysql_source(
                table, self._binlog_ms(), file, self.binlog_pos, row, snapshot, None, server, gtid
            )
        row, thread = (self.mysql_row, 7) if streaming else (0, None)
        file = f"mysql-bin.{self.binlog:06d}"
        return mysql_source(
            table, commit_us // 1_000_000 * 1000, file, self.binlog_pos, row, snapshot, thread
        )

    def _tick(self) -> int:
        """The connector's processing time (ns) for the next event: after the commit, increasing."""
        lag = self.rng.randint(5, 400) * 10**6
        self.processed = max(self.processed, micro_timestamp(self.commit) * 1000 + lag)
        self.processed += self.rng.randint(10_000, 2_000_000)
        return self.processed

    def _value(self, feed: Feed, op: str, before: Any, after: Any, source: dict) -> dict[str, Any]:
        processed, transaction, kind = self._tick(), None, feed.table.connector.kind
        if kind in ("sqlserver", "mariadb") and op != "r":  # provide.transaction.metadata=true
            self.total_order += 1
            self.table_order[feed.table.name] += 1
            order = (self.total_order, self.table_order[feed.table.name])
            transaction = transaction_block(
                source["commit_lsn"] if kind == "sqlserver" else self.gtid, *order
            )
            if op != "t":
                self.tx_rows[feed.table.name] += 1
        return change_value(
            self._table(feed), op, before, after, source, processed, transaction, not feed.schemaless
        )

    def _publish(self, record: Record, context: bool = True) -> None:
        """Produce `record` now; `context`: with the `__debezium.context.*` headers of the
        current connector's run (every record of a connector's task but transaction markers)."""
        sent = record
        if context:
            headers = record.headers + context_headers(self.connector, self._run_id(self.connector))
            sent = Record(record.topic, record.key, record.value, headers)
        self.produced.append(SentRecord.of(sent, self.processed // 1_000_000 + self.rng.randint(1, 15)))
        self.tx_records.append((record, context))

    def _event(
        self,
        feed: Feed,
        op: str,
        before: Any,
        after: Any,
        key_row: Mapping,
        snapshot: str = "false",
        row_key: str | None = None,  # the key's text, for the expected history
    ) -> None:
        value = self._value(feed, op, before, after, self._source(feed.table, op, snapshot))
        key = key_message(feed.table, key_row, not feed.schemaless)
        if self.history is not None and row_key is not None:
            self.history.record(Record(feed.table.topic, key, None), feed.table.table_id, row_key)
        self._publish(Record(feed.table.topic, key, value))
        if op == "d" and not feed.schemaless:
            self._publish(Record(feed.table.topic, key, None))  # tombstone
        if op == "r":
            self.snapshot_rows += 1
        else:
            self.changes += 1

    def _before(self, feed: Feed, sent: Mapping[str, Any]) -> dict[str, Any]:
        """A delete's before image: whole, or only the key (REPLICA IDENTITY DEFAULT)."""
        return (
            self._full(feed, sent)
            if feed.full_identity
            else key_only_image(feed.table, self._full(feed, sent))
        )

    def _version(self, feed: Feed, key: str, op: str, sent: Any, text: Any, *causes: str) -> None:
        """Record a version of `key` in the expected history (when recording one)."""
        if self.history is not None:
            self.history.version(feed.table.table_id, key, op, sent, text, *causes)

    # -- operations -----------------------------------------------------------------
    def snapshot(self) -> None:
        """Each connector's initial snapshot: rows read with `op` r, marked as Debezium 3 marks
        them (`first`, each table's `first_in_data_collection` and `last_in_data_collection`,
        `true` between, `last`). MySQL and MariaDB connectors first report each table's DDL."""
        for connector in dict.fromkeys(f.table.connector for f in self.feeds):
            self._begin(connector, streaming=False)
            feeds = [f for f in self.feeds if f.table.connector == connector]
            if connector.kind == "mariadb":
                for feed in feeds:
                    table, name = feed.table, f"`{connector.db}`.`{feed.table.name}`"
                    for change, ddl in (
                        ("DROP", f"DROP TABLE IF EXISTS {name}"),
                        ("CREATE", f"CREATE TABLE {name}"),
                    ):
                        source = self._source(table, "ddl", "true")
                        self._publish(schema_change_record(table, change, ddl, source, self._tick()))
            rows = [f for f in feeds for _ in range(SNAPSHOT_ROWS)]
            for number, feed in enumerate(rows, start=1):
                sent, text = self._row(feed, self._new_key(feed.table))
                key = key_text(feed.table, text)
                self.live[feed.table.table_id][key] = (sent, text)
                self._version(feed, key, "r", sent, text)
                first_of_table, last_of_table = number % SNAPSHOT_ROWS == 1, number % SNAPSHOT_ROWS == 0
                marker = (
                    "first"
                    if number == 1
                    else "last"
                    if number == len(rows)
                    else "first_in_data_collection"
                    if first_of_table
                    else "last_in_data_collection"
                    if last_of_table
                    else "true"
                )
                self._event(feed, "r", None, sent, sent, marker, key)
            if self.history is not None:  # a snapshot is no transaction of the source's
                self.history.in_transaction = []
            self._commit()

    def insert(self, feed: Feed, fixed: Mapping[str, Any] | None = None) -> str:
        """A new row (`fixed` natural values override random ones, the key's too); its key text."""
        sent, text = self._row(feed, {**self._new_key(feed.table), **(fixed or {})})
        key = key_text(feed.table, text)
        self.live[feed.table.table_id][key] = (sent, text)
        self._version(feed, key, "c", sent, text)
        self._event(feed, "c", None, sent, sent, row_key=key)
        return key

    def update(self, feed: Feed, key: str, keep: str | None = None) -> None:
        """Some non-key columns change (never `keep`); an unchanged large TOASTed value is not sent."""
        table, (old, old_text) = self._table(feed), self.live[feed.table.table_id][key]
        old = self._full(feed, old)  # the before image has every column the table has now
        sent, text = self._full(feed, old, old_text)
        others = [c for c in table.columns if c.name not in (*table.key, keep)]
        changed = [c for c in others if self.rng.random() < 0.4] or [self.rng.choice(others)]
        for column in changed:
            sent[column.name], text[column.name] = self._cell(column, self._natural(feed, column))
        self.live[table.table_id][key] = (sent, text)
        after, toast = dict(sent), feed.toast_column
        partial = ()
        if toast and all(c.name != toast for c in changed) and len(text[toast] or "") > TOAST_THRESHOLD:
            after[toast], partial = UNAVAILABLE, ("partial images",)
        self._version(feed, key, "u", sent, text, *partial)
        self._event(feed, "u", old if feed.full_identity else None, after, sent, row_key=key)

    def add_column(self, feed: Feed) -> None:
        """ALTER TABLE ... ADD COLUMN (nullable, no default): later row images carry the column;
        rows not changed since do not (gold has no value for it there). MySQL and MariaDB
        connectors report the DDL as a schema change event."""
        table, column = self._table(feed), feed.added_column
        if column is None or any(c.name == column.name for c in table.columns):
            return
        altered = replace(table, columns=(*table.columns, column))
        self.structure[table.table_id] = altered
        if self.history is not None:
            self.history.altered.add(table.table_id)
        if table.connector.kind in ("mysql", "mariadb"):
            ddl = f"alter table {table.name} add column {column.name} varchar(100)"
            source = self._source(altered, "ddl")
            self._publish(schema_change_record(altered, "ALTER", ddl, source, self._tick()))

    def delete(self, feed: Feed, key: str) -> None:
        old, _ = self.live[feed.table.table_id].pop(key)
        self._version(feed, key, "d", None, None, *(() if feed.full_identity else ("partial images",)))
        self._event(feed, "d", self._before(feed, old), None, old, row_key=key)

    def change_key(self, feed: Feed) -> None:
        """UPDATE of the primary key: delete + tombstone + create, same log position."""
        table, live = feed.table, self.live[feed.table.table_id]
        if not live:
            self.insert(feed)
            return
        old_key = self.rng.choice(live.sorted_keys())
        old, old_text = live.pop(old_key)
        sent, text = self._full(feed, old, old_text)
        for name, value in self._new_key(table).items():
            sent[name], text[name] = self._cell(table.column(name), value)
        new_key = key_text(table, text)
        live[new_key] = (sent, text)
        self._version(feed, old_key, "d", None, None, "primary-key changes")
        self._version(feed, new_key, "c", sent, text, "primary-key changes")
        deleted = self._value(feed, "d", self._before(feed, old), None, self._source(table, "d"))
        created = self._value(feed, "c", None, sent, self._source(table, "c", same_change=True))
        for record in key_change_records(table, old, sent, deleted, created):
            if self.history is not None and record.key is not None:
                self.history.record(
                    record,
                    table.table_id,
                    old_key
                    if record.value is None or (record.value.get("payload", record.value).get("op") == "d")
                    else new_key,
                )
            self._publish(record)
        self.changes += 1

    def truncate(self, feed: Feed) -> None:
        """TRUNCATE: one event with a null key; the table is empty afterwards."""
        rows = self.live[feed.table.table_id]
        self.truncated[feed.table.table_id] = [sent for sent, _ in rows.values()]
        for key in list(rows):
            self._version(feed, key, "t", None, None, "truncates")
        rows.clear()
        value = self._value(feed, "t", None, None, self._source(feed.table, "t"))
        self._publish(Record(feed.table.topic, None, value))
        self.changes += 1

    def toast_update(self, feed: Feed) -> None:
        """A row with a large TOASTed value, then an update that leaves that value unchanged."""
        toast = feed.toast_column
        self.update(feed, self.insert(feed, {toast: self._large_text()}), keep=toast)

    def refill(self, feed: Feed) -> None:
        """New rows after a truncate, the first one with a key the truncate removed."""
        removed = self.truncated.get(feed.table.table_id)
        if removed:
            self.insert(feed, {c: removed[0][c] for c in feed.table.key})
        for _ in range(2):
            self.insert(feed)

    def message(self, connector: Connector, transactional: bool) -> None:
        """pg_logical_emit_message: within the transaction, or on its own (no txId)."""
        self.pg_lsn += self.rng.randint(40, 200)
        commit_us, tx = micro_timestamp(self.commit), self.pg_tx if transactional else None
        source = postgresql_source(connector, commit_us, tx, self.pg_lsn, self.pg_last_commit)
        content = self.rng.choice((b'{"event":"checkpoint"}', "audit ✓".encode(), bytes(range(0, 256, 37))))
        self._publish(message_record(connector, "audit", content, source, self._tick()))

    def random_change(self, feed: Feed) -> None:
        live, roll = self.live[feed.table.table_id], self.rng.random()
        if not live or roll < 0.45:
            self.insert(feed)
        elif roll < 0.82:
            self.update(feed, self.rng.choice(live.sorted_keys()))
        elif roll < 0.96 or feed.schemaless:
            self.delete(feed, self.rng.choice(live.sorted_keys()))
        else:
            self.change_key(feed)

    def transaction(self, connector: Connector, action: Callable[[], None] | None = None) -> None:
        """One committed transaction: `action`, or one to three random changes."""
        self._begin(connector)
        if action is not None:
            action()
        else:
            feeds = [f for f in self.feeds if f.table.connector == connector]
            for _ in range(self.rng.randint(1, 3)):
                self.random_change(self.rng.choice(feeds))
            if connector.kind == "postgresql" and not feeds[0].schemaless and self.rng.random() < 0.1:
                self.message(connector, transactional=True)
        self._commit()


def _deliver(
    produced: Sequence[SentRecord],
    feeds: Sequence[Feed],
    partitions: int,
    rng: random.Random,
    history: _History | None = None,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]], int]:
    """Partition the records as Kafka does and write them as kcat dumps or S3 sink files."""
    logs: dict[tuple[str, int], list[SentRecord]] = {}
    for record in produced:
        key = None if record.key is None else record.key.encode("utf-8")
        partition = rng.randrange(partitions) if key is None else kafka_partition(key, partitions)
        logs.setdefault((record.topic, partition), []).append(record)
    schemaless = {f.table.topic for f in feeds if f.schemaless}
    kcat: dict[str, list[dict[str, Any]]] = {}
    jsonl: dict[str, list[dict[str, Any]]] = {}
    redumped = 0
    for (topic, partition), log in sorted(logs.items()):
        if topic in schemaless:
            for start in range(0, len(log), FLUSH_SIZE):
                name = f"topics/{topic}/partition={partition}/{topic}+{partition}+{start:010d}.json"
                flushed = log[start : start + FLUSH_SIZE]
                jsonl[name] = [None if r.value is None else json.loads(r.value) for r in flushed]
            continue
        records = [kcat_record(r, partition, offset) for offset, r in enumerate(log)]
        kcat[f"{topic}-{partition}.kcat.jsonl"] = records
        if rng.random() < 0.5:  # a second dump of an offset range: the same records again
            start = rng.randrange(len(records))
            again = records[start : start + rng.randint(1, max(1, len(records) // 10))]
            kcat[f"{topic}-{partition}.redump.kcat.jsonl"] = again
            redumped += len(again)
            for record in again if history is not None else ():
                history.redelivered(record["topic"], record["key"])
    return kcat, jsonl, redumped


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    db: str = "gendb",
    redelivery_rate: float = 0.05,
    schemaless_dbs: tuple[str, str] = ("inventory", "shop"),
    server_prefix: str = "",
    record_history: bool = False,
) -> Traffic:
    """Simulate each connector's snapshot and then about `changes` row changes, and deliver them as
    Debezium messages. With a few dozen changes or more, the traffic has at least one logical
    decoding message outside a transaction, a key change on a SQL Server and on a PostgreSQL
    table, a truncate of gendb.public.items followed by new rows, and an update of an items row
    that leaves its large description TOASTed (the placeholder is sent). `db` and `schemaless_dbs`
    name the source databases, `server_prefix` prefixes the connectors' names (see default_feeds).
    `record_history` also records every key's versions and causes (Traffic.expected_history)."""
    rng = random.Random(seed)
    feeds = default_feeds(db, schemaless_dbs, server_prefix)
    by_name = {f.table.name: f for f in feeds}
    accounts, items = by_name["accounts"], by_name["items"]
    products = by_name["products"]
    pg, maria = items.table.connector, products.table.connector
    simulation = _Simulation(feeds, rng, redelivery_rate, record_history)
    simulation.snapshot()
    schedule: list[tuple[float, Connector, Callable[[], None]]] = [
        (0.2, pg, lambda: simulation.message(pg, transactional=False)),
        (0.25, maria, lambda: simulation.change_key(products)),
        (0.3, accounts.table.connector, lambda: simulation.change_key(accounts)),
        (0.4, pg, lambda: simulation.truncate(items)),
        (0.4, pg, lambda: simulation.refill(items)),
        (0.45, maria, lambda: simulation.truncate(products)),
        (0.45, maria, lambda: simulation.refill(products)),
        (0.6, pg, lambda: simulation.change_key(items)),
        (0.7, pg, lambda: simulation.toast_update(items)),
        (0.85, maria, lambda: simulation.add_column(products)),  # late: some rows stay unchanged since
    ]
    connectors = list(dict.fromkeys(f.table.connector for f in feeds))
    while simulation.changes < changes:
        if schedule and simulation.changes >= schedule[0][0] * changes:
            _, connector, action = schedule.pop(0)
            simulation.transaction(connector, action)
        else:
            simulation.transaction(rng.choice(connectors))
    kcat, jsonl, redumped = _deliver(simulation.produced, feeds, partitions, rng, simulation.history)
    expected = {tid: {k: text for k, (_, text) in rows.items()} for tid, rows in simulation.live.items()}
    return Traffic(
        kcat,
        jsonl,
        expected,
        changes=simulation.changes,
        snapshot_rows=simulation.snapshot_rows,
        redeliveries=simulation.redeliveries + redumped,
        feeds=feeds,
        expected_history=None if simulation.history is None else simulation.history.result(),
    )


LANDINGS = (("kcat", "kcat"), ("jsonl", "jsonl"))  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format debezium` (cdc_tools/generators/__init__.py)."""
    traffic = generate(options.changes, options.seed, options.partitions, options.database)
    paths = traffic.write(out)
    return (
        f"wrote {traffic.messages} debezium message(s) for {traffic.changes} change(s) after a snapshot of "
        f"{traffic.snapshot_rows} row(s) ({traffic.redeliveries} redelivery(ies)) to {len(paths)} file(s) "
        f"in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "lsn", "commit_lsn", "change_lsn", "event_serial_no", "sequence", "pos", "file", "row", "ts_ms",
    "ts_us", "ts_ns", "scale", "value", "fields", "field", "name", "parameters", "op", "before",
    "after", "source", "snapshot", "connector", "table", "db", "schema", "txId", "type", "id",
})  # fmt: skip
MASK_FIELDS: frozenset[str] = frozenset()


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the database `<namespace>db`; the tables sent without schemas are in
    `<namespace>inv` and `<namespace>mysql`, or, with `keep_declared`, in the databases the
    seeds declare their columns for (seeds/cdc_declared_columns.csv)."""
    if keep_declared:
        return generate(changes, seed, partitions, f"{namespace}db")
    schemaless = (f"{namespace}inv", f"{namespace}mysql")
    return generate(changes, seed, partitions, f"{namespace}db", schemaless_dbs=schemaless)


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A Debezium value carries its fields in `payload` when sent with its schema."""
    payload = value.get("payload")
    return payload if isinstance(payload, dict) and "op" in payload else value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """Log positions in `source` beyond every real one."""
    source = body.get("source")
    if not isinstance(source, dict):
        return
    for field_name, number in (("lsn", 9 * 10**12 + n), ("event_serial_no", 10**6 + n), ("row", 10**6 + n)):
        if field_name in source:
            source[field_name] = number
