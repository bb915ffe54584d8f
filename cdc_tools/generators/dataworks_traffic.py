"""Realistic Alibaba Cloud DataWorks traffic ("sync whole database to Kafka"), with the expected outcome.

Simulates three captured tables and what the sync task writes for them:
- `shop.customers` (MySQL, primary key `id`): every type (LONG, STRING, BOOLEAN,
  DOUBLE, DATE, BYTES), NULLs; truncated midway (a TRUNCATE DDL record), then new
  rows, one reusing a truncated key.
- `shop.page_visits` (MySQL, no primary key): `primaryKey` null, rows identified by
  the `#alibaba_rds_row_id#` LONG column.
- `orcl.hr.employees` (Oracle, no primary key): rows identified by `rowid`, every
  record carries an `scn`; midway an `ALTER TABLE ... ADD` (an ALTER DDL record),
  after which its records carry the new column EMAIL.
Plus a CREATE and a RENAME of a scratch table that never gets rows.

Updates come in both documented modes: an UPDATE_BEFOR + UPDATE_AFTER pair sharing
one sequenceId, or one UPDATE_AFTER with both images. Some transactions are framed by
TRANSACTION_BEGIN / TRANSACTION_END; an MHEARTBEAT goes out every 30 s of source time.
Records go to the partition their key hashes to (Kafka's default partitioner), so one
row's records stay in order while a table's do not; control records are spread
round-robin. Some records are delivered again later in the same partition (at least
once, including at least one half of an update pair).

Alongside, `expected_current` holds the live rows in the contract's text forms, so a
test can compare gold.cdc_current with them exactly, and `expected_ddl` the DDL records.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators import dataworks_messages as dw
from cdc_tools.generators.debezium_messages import kafka_partition
from cdc_tools.generators.files import write_expected, write_partitions
from cdc_tools.generators.sorted_keys import SortedKeyDict

START = datetime(2025, 3, 14, 9, 0, 0)  # naive UTC
TASK_START_MS = dw.date_ms(START) - 4_683  # when the sync task started: the sequenceIds' prefix
HEARTBEAT_EVERY_MS = 30_000
ROWID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
NAMES = ("Li Wei", "Wang Fang", "Zhang Min", "Chen Jing", "Ana Souza", "Ravi Kumar", "Olga Ivanova")
ODD_TEXTS = ("", "张伟", "Zoë Müller", 'O\'Brien, "Jr."', "line one\nline two", "back\\slash", "emoji 🎉")
URLS = ("/", "/cart", "/checkout", "/search?q=tea&page=2", "/item/42#reviews", "/帮助")
NOT_NULL = {dw.MYSQL_ROW_ID, dw.ORACLE_ROW_ID, "id", "url", "NAME"}


def _columns(spec: str) -> tuple[tuple[str, str], ...]:
    """`"id:LONG name:STRING"` -> (("id", "LONG"), ("name", "STRING"))."""
    return tuple((name, kind) for name, kind in (c.rsplit(":", 1) for c in spec.split()))


def default_tables(mysql_db: str = "shop", oracle_db: str = "ORCL") -> tuple[dw.Table, ...]:
    """The captured tables as they start (customers, page_visits, employees), in the given source
    databases."""
    mysql = ("MySQL", "8.0.36", mysql_db, None)
    customers = "id:LONG name:STRING vip:BOOLEAN score:DOUBLE birthday:DATE avatar:BYTES updated_at:DATE"
    visits = f"url:STRING visitor:STRING duration:DOUBLE visited_at:DATE {dw.MYSQL_ROW_ID}:LONG"
    employees = f"NAME:STRING DEPT_ID:LONG SALARY:DOUBLE HIRE_DATE:DATE {dw.ORACLE_ROW_ID}:STRING"
    return (
        dw.Table(*mysql, "customers", _columns(customers), ("id",)),
        dw.Table(*mysql, "page_visits", _columns(visits)),
        dw.Table("Oracle", "19.0.0.0.0", oracle_db, "HR", "EMPLOYEES", _columns(employees)),
    )


@dataclass
class Traffic:
    """Generated messages per partition, the expected live rows and the expected DDL log."""

    partitions: list[list[dict[str, Any]]]
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    expected_ddl: list[tuple[str, str, str]] = field(default_factory=list)  # (table_id, op, text)
    changes: int = 0  # row changes (an update pair counts once) and truncates
    heartbeats: int = 0
    transaction_markers: int = 0
    redeliveries: int = 0
    tables: tuple[dw.Table, ...] = field(default_factory=tuple)  # as they end

    @property
    def messages(self) -> int:
        return sum(len(p) for p in self.partitions)

    def write(self, directory: Path) -> list[Path]:
        """Write `partition-<n>.jsonl` (one compact JSON message a line) and `_expected_current.json`;
        return the message files."""
        paths = write_partitions(directory, self.partitions, dw.dumps)
        write_expected(directory, self.expected_current)
        return paths


class _Simulation:
    """The source databases: live rows, clocks and positions, and the records the task produced."""

    def __init__(self, rng: random.Random, mysql_db: str, oracle_db: str) -> None:
        self.rng = rng
        customers, visits, employees = default_tables(mysql_db, oracle_db)
        self.tables = {"customers": customers, "visits": visits, "employees": employees}
        self.live: dict[str, SortedKeyDict] = {name: SortedKeyDict() for name in self.tables}
        self.truncated: list[dict[str, Any]] = []
        self.kept: set[str] = set()  # keys never changed again: rows that keep their pre-ALTER image
        self.produced: list[tuple[dict[str, Any], str | None]] = []  # (message, partition key or None)
        self.ddl_log: list[tuple[str, str, str]] = []
        self.clock_ms = self.system_ms = dw.date_ms(START)
        self.number, self.scn = 0, 2_476_539
        self.next_id = self.next_row_id = self.next_rowid = 0  # customers.id, MySQL row ids, Oracle rowids
        self.changes = self.updates = self.heartbeats = self.markers = 0
        self.last_heartbeat = -HEARTBEAT_EVERY_MS

    # -- values -------------------------------------------------------------------
    def _rowid(self) -> str:
        """An Oracle extended ROWID: object, file, block and row number in base64 digits."""
        self.next_rowid += 1
        block, row = 0x1A4 + self.next_rowid // 40, self.next_rowid % 40

        def digits(n: int, width: int) -> str:
            return "".join(ROWID_ALPHABET[(n >> 6 * i) & 63] for i in reversed(range(width)))

        return "AAAR3s" + "AAE" + digits(block, 6) + digits(row, 3)

    def _value(self, column: str, column_type: str) -> Any:
        """A random value of a non-key column, as DataWorks sends it."""
        rng = self.rng
        if column not in NOT_NULL and rng.random() < 0.08:
            return None
        if column_type == "BOOLEAN":
            return rng.random() < 0.5
        if column_type == "LONG":
            return rng.randint(10, 90)
        if column_type == "DOUBLE":  # values with a short repr, e.g. 12.5 (and the same in Java)
            scale = {"score": 4, "SALARY": 2}.get(column, 10)
            return rng.randint(1000 if column == "SALARY" else 0, 20000 * scale) / scale
        if column_type == "BYTES":
            return dw.bytes_value(rng.randbytes(rng.randint(0, 24)))
        if column_type == "DATE":
            if column == "birthday":  # a MySQL DATE: midnight, before 1970 a negative number
                return dw.date_ms(datetime(1950, 1, 1) + timedelta(days=rng.randint(0, 20_000)))
            if column == "HIRE_DATE":  # an Oracle DATE: whole seconds
                return dw.date_ms(datetime(2000, 1, 1) + timedelta(seconds=rng.randrange(25 * 365 * 86_400)))
            millis = 0 if rng.random() < 0.2 else rng.randrange(1000)  # DATETIME(3)
            return self.clock_ms - rng.randrange(3 * 86_400) * 1000 + millis
        if column == "url":
            return rng.choice(URLS)
        if column in ("NAME", "name", "visitor"):
            return rng.choice(ODD_TEXTS) if rng.random() < 0.15 else rng.choice(NAMES)
        return f"{column.lower()}-{rng.randint(1, 999)}"

    def _new_row(self, table: dw.Table, fixed: dict[str, Any]) -> dict[str, Any]:
        row = {}
        for column, column_type in table.columns:
            if column in fixed:
                row[column] = fixed[column]
            elif column == "id":
                self.next_id += 1
                row[column] = self.next_id
            elif column == dw.MYSQL_ROW_ID:
                self.next_row_id += 1
                row[column] = self.next_row_id
            elif column == dw.ORACLE_ROW_ID:
                row[column] = self._rowid()
            else:
                row[column] = self._value(column, column_type)
        return row

    # -- positions and delivery -----------------------------------------------------
    def _position(self, table: dw.Table) -> dw.Position:
        """The next record's sequenceId and times (and scn for Oracle)."""
        self.number += 1
        self.system_ms = max(
            self.system_ms + self.rng.randint(1, 40), self.clock_ms + self.rng.randint(150, 900)
        )
        scn = None
        if table.db_type == "Oracle":
            self.scn += self.rng.randint(1, 60)
            scn = str(self.scn)
        return dw.Position(dw.sequence_id(TASK_START_MS, self.number), self.clock_ms, self.system_ms, scn)

    def _emit(self, message: dict[str, Any], route: str | None) -> None:
        self.produced.append((message, route))

    def _route(self, table: dw.Table, row: dict[str, Any]) -> str:
        return f"{table.table_id}|{dw.key_text(table, row)}"

    # -- changes ----------------------------------------------------------------------
    def insert(self, name: str, fixed: dict[str, Any] | None = None) -> str:
        """A new row (`fixed` values, random ones for the other columns); returns its key text."""
        table = self.tables[name]
        row = self._new_row(table, fixed or {})
        key = dw.key_text(table, row)
        self.live[name][key] = row
        self._emit(dw.insert(table, row, self._position(table)), self._route(table, row))
        self.changes += 1
        return key

    def update(self, name: str, key: str) -> None:
        """Change one to three non-key columns. The first update is a pair, the second one record with
        both images, later ones either, at random."""
        table, live = self.tables[name], self.live[name]
        before = {c: live[key].get(c) for c, _ in table.columns}  # columns added since: NULL
        after = dict(before)
        changeable = [(c, t) for c, t in table.columns if c not in table.key and c != "id"]
        for column, column_type in self.rng.sample(changeable, self.rng.randint(1, 3)):
            after[column] = self._value(column, column_type)
        if "updated_at" in after:
            after["updated_at"] = self.clock_ms + self.rng.randrange(1000)
        live[key] = after
        position, route = self._position(table), self._route(table, after)
        paired = self.updates == 0 or (self.updates > 1 and self.rng.random() < 0.5)
        if paired:
            for message in dw.update_pair(table, before, after, position):
                self._emit(message, route)
        else:
            self._emit(dw.update_single(table, before, after, position), route)
        self.updates += 1
        self.changes += 1

    def delete(self, name: str, key: str) -> None:
        table = self.tables[name]
        row = self.live[name].pop(key)
        before = {c: row.get(c) for c, _ in table.columns}
        self._emit(dw.delete(table, before, self._position(table)), self._route(table, before))
        self.changes += 1

    def random_change(self, name: str) -> None:
        keys, roll = self.live[name].sorted_keys_except(self.kept), self.rng.random()
        if not keys or roll < 0.45:
            self.insert(name)
        elif roll < 0.82:
            self.update(name, self.rng.choice(keys))
        else:
            self.delete(name, self.rng.choice(keys))

    def touch(self, name: str) -> None:
        """Update some row of the table (a new one if it has none)."""
        keys = self.live[name].sorted_keys_except(self.kept)
        self.update(name, self.rng.choice(keys) if keys else self.insert(name))

    def ddl(self, table: dw.Table, op: str, text: str) -> None:
        """A DDL record, routed by table; logged in `expected_ddl`."""
        self._emit(dw.ddl(table, op, text, self._position(table)), table.table_id)
        self.ddl_log.append((table.table_id, op, text))

    def alter(self) -> None:
        """Oracle: ALTER TABLE ADD, then a row with the new column; records after it carry the column.
        Both that row and one inserted before the ALTER are never changed again, so the end state has
        rows with and without the column."""
        if not self.live["employees"]:
            self.insert("employees")
        self.kept.add(min(self.live["employees"]))
        self.tables["employees"] = self.tables["employees"].add_column("EMAIL", "STRING")
        text = 'ALTER TABLE "HR"."EMPLOYEES" ADD ("EMAIL" VARCHAR2(200))'
        self.ddl(self.tables["employees"], "ALTER", text)
        self.kept.add(self.insert("employees", {"EMAIL": "new.hire@example.com"}))

    def truncate(self) -> None:
        """MySQL: TRUNCATE customers (given a row first if it has none); the table is empty afterwards."""
        if not self.live["customers"]:
            self.insert("customers")
        self.truncated = list(self.live["customers"].values())
        self.live["customers"].clear()
        self.ddl(self.tables["customers"], "TRUNCATE", "TRUNCATE TABLE `customers`")
        self.changes += 1

    def refill(self) -> None:
        """New customers after the truncate, the first one with an id the truncate removed."""
        if self.truncated:
            self.insert("customers", {"id": self.truncated[0]["id"]})
        for _ in range(2):
            self.insert("customers")

    def scratch(self, op: str) -> None:
        """CREATE, then RENAME, of a table that never gets rows (only DDL records)."""
        columns, key = (("id", "LONG"), ("payload", "STRING")), ("id",)
        mysql = self.tables["customers"]
        table = dw.Table(mysql.db_type, mysql.db_version, mysql.db_name, None, "import_tmp", columns, key)
        if op == "CREATE":
            text = (
                "CREATE TABLE `import_tmp` (`id` bigint NOT NULL, `payload` varchar(255), PRIMARY KEY (`id`))"
            )
            self.ddl(table, op, text)
        else:
            self.ddl(table, op, "RENAME TABLE `import_tmp` TO `import_2025`")

    # -- transactions -------------------------------------------------------------------
    def heartbeat_due(self) -> None:
        if self.clock_ms - self.last_heartbeat >= HEARTBEAT_EVERY_MS:
            self.last_heartbeat = self.clock_ms
            self._emit(dw.heartbeat(self.clock_ms), None)
            self.heartbeats += 1

    def transaction(self, database: str, action: Callable[[], None] | None, framed: bool) -> None:
        """One source transaction on `database` ("mysql" or "oracle"): `action`, or one to three
        random changes; framed by TRANSACTION_BEGIN / TRANSACTION_END when `framed`."""
        self.clock_ms += self.rng.randint(1, 20) * 1000  # binlog / redo times are whole seconds
        self.heartbeat_due()
        names = ("customers", "visits") if database == "mysql" else ("employees",)
        marker_table = self.tables[names[0]]
        if framed:
            self._emit(
                dw.transaction_marker(marker_table, "TRANSACTION_BEGIN", self._position(marker_table)), None
            )
        if action is not None:
            action()
        else:
            for _ in range(self.rng.randint(1, 3)):
                self.random_change(self.rng.choice(names))
        if framed:
            self._emit(
                dw.transaction_marker(marker_table, "TRANSACTION_END", self._position(marker_table)), None
            )
            self.markers += 2


def _is_update_half(message: dict[str, Any]) -> bool:
    payload = message["payload"]
    return payload["op"] == "UPDATE_BEFOR" or (payload["op"] == "UPDATE_AFTER" and payload["before"] is None)


def _deliver(
    produced: list[tuple[dict[str, Any], str | None]], partitions: int, rng: random.Random, rate: float
) -> tuple[list[list[dict[str, Any]]], int]:
    """Partition by key hash (control records round-robin), then redeliver some records a little
    later in the same partition; at least one redelivered record is half of an update pair."""
    logs: list[list[dict[str, Any]]] = [[] for _ in range(partitions)]
    spread = 0
    for message, route in produced:
        if route is None:
            number, spread = spread % partitions, spread + 1
        else:
            number = kafka_partition(route.encode("utf-8"), partitions)
        logs[number].append(message)
    chosen = [[i for i in range(len(log)) if rng.random() < rate] for log in logs]
    if rate > 0 and not any(_is_update_half(logs[p][i]) for p, picks in enumerate(chosen) for i in picks):
        half = next(
            ((p, i) for p, log in enumerate(logs) for i, m in enumerate(log) if _is_update_half(m)), None
        )
        if half is not None:
            chosen[half[0]] = sorted({*chosen[half[0]], half[1]})
    delivered: list[list[dict[str, Any]]] = []
    for log, picks in zip(logs, chosen, strict=True):
        out = list(log)
        for index in reversed(picks):  # the same content again, a few records later
            out.insert(min(len(out), index + 1 + rng.randint(0, 12)), log[index])
        delivered.append(out)
    return delivered, sum(len(picks) for picks in chosen)


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    redelivery_rate: float = 0.05,
    mysql_db: str = "shop",
    oracle_db: str = "ORCL",
) -> Traffic:
    """Simulate about `changes` row changes and deliver them as DataWorks messages. With a few dozen
    changes or more, the traffic has both update modes, transaction markers, heartbeats, the ALTER of
    orcl.hr.employees, the TRUNCATE of shop.customers followed by new rows, the CREATE and RENAME of
    shop.import_tmp, and redeliveries including one half of an update pair. `mysql_db` and
    `oracle_db` name the source databases (`shop`, `ORCL`)."""
    rng = random.Random(seed)
    simulation = _Simulation(rng, mysql_db, oracle_db)
    simulation.heartbeat_due()  # the task starts: a heartbeat before any data
    schedule: list[tuple[float, str, Callable[[], None]]] = [
        (0.1, "mysql", lambda: simulation.touch("visits")),  # the first update: a pair
        (0.2, "oracle", lambda: simulation.touch("employees")),  # the second: one record
        (0.25, "oracle", simulation.alter),
        (0.35, "mysql", lambda: simulation.scratch("CREATE")),
        (0.5, "mysql", simulation.truncate),
        (0.5, "mysql", simulation.refill),
        (0.6, "mysql", lambda: simulation.scratch("RENAME")),
    ]
    first = True
    while simulation.changes < changes:
        if schedule and simulation.changes >= schedule[0][0] * changes:
            _, database, action = schedule.pop(0)
            simulation.transaction(database, action, framed=action == simulation.refill)
        else:
            database = rng.choice(("mysql", "mysql", "oracle"))
            simulation.transaction(database, None, framed=first or rng.random() < 0.3)
        first = False
    while schedule:  # tiny runs: the scheduled DDL still happens
        _, database, action = schedule.pop(0)
        simulation.transaction(database, action, framed=False)
    delivered, redeliveries = _deliver(simulation.produced, partitions, rng, redelivery_rate)
    tables = tuple(simulation.tables.values())
    expected = {
        table.table_id: {key: dw.row_text(table, row) for key, row in simulation.live[name].items()}
        for name, table in simulation.tables.items()
    }
    return Traffic(
        delivered,
        expected,
        expected_ddl=simulation.ddl_log,
        changes=simulation.changes,
        heartbeats=simulation.heartbeats,
        transaction_markers=simulation.markers,
        redeliveries=redeliveries,
        tables=tables,
    )


LANDINGS = (("jsonl", ""),)  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format dataworks` (cdc_tools/generators/__init__.py)."""
    traffic = generate(options.changes, options.seed, options.partitions)
    paths = traffic.write(out)
    return (
        f"wrote {traffic.messages} dataworks message(s) for {traffic.changes} change(s) "
        f"({traffic.heartbeats} heartbeat(s), {len(traffic.expected_ddl)} DDL, {traffic.redeliveries} "
        f"redelivery(ies)) to "
        f"{len(paths)} file(s) in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "sequenceId", "scn", "eventTime", "dataColumn", "name", "type", "primaryKey", "op", "tableName",
    "dbName", "schemaName", "before", "after", "timestamp", "text",
})  # fmt: skip
MASK_FIELDS: frozenset[str] = frozenset()


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the databases `<namespace>shop` (MySQL) and `<NAMESPACE>ORA` (Oracle); no
    DataWorks table is declared in the seeds."""
    return generate(
        changes, seed, partitions, mysql_db=f"{namespace}shop", oracle_db=f"{namespace.upper()}ORA"
    )


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A DataWorks message carries its fields in `payload`."""
    return value["payload"] if isinstance(value.get("payload"), dict) else value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """A `sequenceId` beyond every real one."""
    body["sequenceId"] = str(9 * 10**18 + n)
