"""Realistic Alibaba Canal flat-message traffic, with the expected outcome.

Simulates three tables of one MySQL database and what canal-server sends for them
(cdc_tools/generators/canal_messages.py builds each message):
- `orders` (primary key `id`; decimal, tinyint(1), datetime, TEXT and VARBINARY columns):
  multi-row INSERT / UPDATE / DELETE messages, updates that change the key (a delete of the
  old key and an insert of the new one), partial images (the server runs with
  binlog_row_image=NOBLOB for a while: an UPDATE leaves unchanged TEXT / BLOB columns out of
  `data` and `old`), an `ALTER TABLE ... ADD COLUMN` midway (later messages carry the column),
  and a TRUNCATE followed by new rows, one reusing a truncated key;
- `order_lines` (two-column key `order_id`, `line_no`): multi-row messages whose `old`
  entries are aligned with `data` by index;
- `audit_log` (no primary key: `pkNames` null): a few INSERTs, which the pipeline quarantines
  (its rows cannot be told apart) and `expected_current` leaves out.
Plus a CREATE and a RENAME of a scratch table that never gets rows.

Binlog event times (`es`) are whole seconds, shared by the messages of one transaction;
`ts` is when Canal handled a message, `id` its batch (several messages share one), `gtid`
the transaction's GTID. Messages go to the partition their table hashes to (canal's
`canal.mq.partitionHash` by table), so one table's messages stay in order while the
tables' partitions interleave however they are landed (out of order across tables). Some
messages are delivered again a few messages later in the same partition, in another batch
and handled again later (new `id` and `ts`, same contents): the pipeline applies them once.

Alongside, `expected_current` holds the live rows in the contract's text forms, as gold
shows them (a column a message left out keeps its previous value), and `expected_ddl` the
DDL messages.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators import canal_messages as cm
from cdc_tools.generators.files import write_expected, write_partitions
from cdc_tools.generators.sorted_keys import SortedKeyDict

START = datetime(2025, 3, 14, 9, 0, 0)  # naive UTC
EPOCH = datetime(1970, 1, 1)
SERVER_UUID = "6c27ed8a-1d3b-11ef-9f54-0242ac120002"
NAMES = ("Li Wei", "Wang Fang", "Zhang Min", "Chen Jing", "Ana Souza", "Ravi Kumar", "Olga Ivanova")
ODD_TEXTS = ("", "张伟", "Zoë Müller", 'O\'Brien, "Jr."', "line one\nline two", "back\\slash", "emoji 🎉")
SKUS = ("TEA-01", "TEA-02", "CUP-11", "POT-03", "BAG-20")


def default_tables(database: str = "shop") -> tuple[cm.Table, ...]:
    """The captured tables as they start (orders, order_lines, audit_log) in `database`."""
    orders = (
        ("id", "int(11)"),
        ("customer", "varchar(64)"),
        ("amount", "decimal(10,2)"),
        ("paid", "tinyint(1)"),
        ("created_at", "datetime"),
        ("note", "text"),
        ("tag", "varbinary(16)"),
    )
    lines = (
        ("order_id", "int(11)"),
        ("line_no", "int(11)"),
        ("sku", "varchar(32)"),
        ("qty", "int(11)"),
        ("price", "decimal(8,2)"),
    )
    audit = (("event", "varchar(64)"), ("detail", "varchar(255)"), ("logged_at", "datetime"))
    return (
        cm.Table(database, "orders", orders, ("id",)),
        cm.Table(database, "order_lines", lines, ("order_id", "line_no")),
        cm.Table(database, "audit_log", audit),
    )


@dataclass
class Traffic:
    """Generated messages per partition, the expected live rows and the expected DDL log."""

    partitions: list[list[dict[str, Any]]]
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    expected_ddl: list[tuple[str, str, str]] = field(default_factory=list)  # (table_id, type, sql)
    changes: int = 0  # row changes (one per row of a message) and truncates
    multi_row_messages: int = 0
    key_changes: int = 0
    partial_updates: int = 0
    keyless_messages: int = 0
    redeliveries: int = 0
    tables: tuple[cm.Table, ...] = field(default_factory=tuple)  # as they end

    @property
    def messages(self) -> int:
        return sum(len(p) for p in self.partitions)

    def write(self, directory: Path) -> list[Path]:
        """Write `partition-<n>.jsonl` (one compact JSON message a line) and `_expected_current.json`;
        return the message files."""
        paths = write_partitions(directory, self.partitions, cm.dumps)
        write_expected(directory, self.expected_current)
        return paths


def _ms(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(milliseconds=1)


class _Simulation:
    """The source database: live rows, the binlog clock, Canal's batches, and the messages produced."""

    def __init__(self, rng: random.Random, database: str) -> None:
        self.rng = rng
        orders, lines, audit = default_tables(database)
        self.tables = {"orders": orders, "lines": lines, "audit": audit}
        self.live: dict[str, SortedKeyDict] = {"orders": SortedKeyDict(), "lines": SortedKeyDict()}
        self.shown: dict[str, dict[str, dict[str, str | None]]] = {"orders": {}, "lines": {}}  # as gold shows
        self.produced: list[tuple[dict[str, Any], str]] = []  # (message, table name: its partition)
        self.ddl_log: list[tuple[str, str, str]] = []
        self.clock_ms = self.handled_ms = _ms(START)
        self.batch_id, self.transaction_number, self.gtid = 1, 3_000, None
        self.next_id = 0
        self.noblob = False  # binlog_row_image=NOBLOB while true
        self.truncated: list[str] = []
        self.changes = self.multi_row = self.key_changes = self.partial = self.keyless = 0

    # -- values -------------------------------------------------------------------
    def _value(self, column: str, mysql_type: str) -> str | None:
        rng = self.rng
        base = cm.base_type(mysql_type)
        if column not in ("customer", "sku", "qty", "price", "event") and rng.random() < 0.1:
            return None
        if base == "decimal":
            return f"{rng.randint(0, 99_999) / 100:.2f}"
        if base == "tinyint":
            return str(rng.randint(0, 1))
        if base == "int":
            return str(rng.randint(1, 9))
        if base == "datetime":
            moment = START + timedelta(milliseconds=self.clock_ms - _ms(START) - rng.randrange(86_400) * 1000)
            return moment.strftime("%Y-%m-%d %H:%M:%S")
        if base == "varbinary":
            return cm.bytes_value(rng.randbytes(rng.randint(0, 12)))
        if base == "text":
            return rng.choice(ODD_TEXTS) if rng.random() < 0.4 else f"note {rng.randint(1, 999)}"
        if column == "sku":
            return rng.choice(SKUS)
        if column == "customer":
            return rng.choice(ODD_TEXTS[1:]) if rng.random() < 0.15 else rng.choice(NAMES)
        return f"{column}-{rng.randint(1, 999)}"

    def _new_order(self, fixed: dict[str, str] | None = None) -> dict[str, str | None]:
        row = {c: self._value(c, t) for c, t in self.tables["orders"].columns}
        if fixed:
            row.update(fixed)
        else:
            self.next_id += 1
            row["id"] = str(self.next_id)
        return row

    # -- stamps and delivery ----------------------------------------------------------
    def _stamp(self) -> cm.Stamp:
        """The next message's times, batch and GTID; a new Canal batch now and then."""
        self.handled_ms = max(
            self.handled_ms + self.rng.randint(1, 30), self.clock_ms + self.rng.randint(80, 900)
        )
        if self.rng.random() < 0.4:
            self.batch_id += 1
        return cm.Stamp(self.clock_ms, self.handled_ms, self.batch_id, self.gtid)

    def _emit(self, table: cm.Table, message: dict[str, Any]) -> None:
        self.produced.append((message, table.name))

    def _show(self, name: str, key: str, sent: dict[str, str | None], base: dict | None = None) -> None:
        """What gold shows for a key after a change that sent `sent`: `base` (or the key's previous
        row) with the sent columns laid over it."""
        table = self.tables[name]
        previous = base if base is not None else self.shown[name].get(key, {})
        self.shown[name][key] = {**previous, **cm.row_text(table, sent)}

    # -- orders -------------------------------------------------------------------------
    def insert_orders(self, count: int, fixed: list[dict[str, str]] | None = None) -> None:
        table = self.tables["orders"]
        rows = [self._new_order(fixed[i] if fixed else None) for i in range(count)]
        for row in rows:
            key = cm.key_text(table, row)
            self.live["orders"][key] = row
            self.shown["orders"].pop(key, None)
            self._show("orders", key, row)
        self._emit(table, cm.rows_message(table, "INSERT", rows, self._stamp()))
        self._count(len(rows))

    def update_orders(self, keys: list[str], change_key: bool = False) -> None:
        """One UPDATE of the rows of `keys` (a new id for each with `change_key`). With NOBLOB on, a
        TEXT / BLOB column that does not change is left out of `data` and `old`."""
        table, live = self.tables["orders"], self.live["orders"]
        data, old = [], []
        changeable = [c for c, _ in table.columns if c != "id"]
        for key in keys:
            before = live.pop(key)
            after = dict(before)
            for column in self.rng.sample(changeable, self.rng.randint(1, 3)):
                after[column] = self._value(column, table.types[column])
            if after == before:  # MySQL logs no row event for an update that changes nothing
                after["amount"] = f"{float(before['amount'] or 0) + 1:.2f}"
            if change_key:
                self.next_id += 1
                after["id"] = str(self.next_id)
            sent = dict(after)
            if self.noblob:
                for column, mysql_type in table.columns:
                    if cm.is_blob_like(mysql_type) and after.get(column) == before.get(column):
                        sent.pop(column, None)
            data.append(sent)
            old.append({c: before.get(c) for c in sent if sent[c] != before.get(c)})
            new_key = cm.key_text(table, after)
            live[new_key] = after
            base = self.shown["orders"].pop(key) if change_key else None
            self._show("orders", new_key, sent, base)
        if self.noblob:
            self.partial += 1
        self.key_changes += len(keys) if change_key else 0
        self._emit(table, cm.rows_message(table, "UPDATE", data, self._stamp(), old))
        self._count(len(keys))

    def delete_orders(self, keys: list[str]) -> None:
        table = self.tables["orders"]
        rows = []
        for key in keys:
            rows.append(self.live["orders"].pop(key))
            self.shown["orders"].pop(key)
        self._emit(table, cm.rows_message(table, "DELETE", rows, self._stamp()))
        self._count(len(rows))

    # -- order lines ----------------------------------------------------------------------
    def lines_change(self) -> None:
        table, live = self.tables["lines"], self.live["lines"]
        keys, roll = live.sorted_keys_except(set()), self.rng.random()
        if not keys or roll < 0.45:
            order_id = str(self.rng.randint(1, 40))
            taken = {k for k in keys if k.startswith(f"order_id={order_id},")}
            rows = []
            for line_no in range(1, 6):
                key = f"order_id={order_id},line_no={line_no}"
                if key in taken or len(rows) == 3:
                    continue
                rows.append({
                    "order_id": order_id, "line_no": str(line_no), "sku": self._value("sku", "varchar(32)"),
                    "qty": str(self.rng.randint(1, 9)), "price": self._value("price", "decimal(8,2)"),
                })  # fmt: skip
            if not rows:
                return
            for row in rows:
                key = cm.key_text(table, row)
                live[key] = row
                self._show("lines", key, row)
            self._emit(table, cm.rows_message(table, "INSERT", rows, self._stamp()))
            self._count(len(rows))
        elif roll < 0.8:
            chosen = self.rng.sample(keys, min(len(keys), self.rng.randint(1, 3)))
            data, old = [], []
            for key in chosen:
                before = live[key]
                after = {**before, "qty": str(int(before["qty"]) + self.rng.randint(1, 5))}
                if self.rng.random() < 0.5:
                    after["price"] = self._value("price", "decimal(8,2)")
                live[key] = after
                data.append(after)
                old.append({c: before[c] for c in after if after[c] != before[c]})
                self._show("lines", key, after)
            self._emit(table, cm.rows_message(table, "UPDATE", data, self._stamp(), old))
            self._count(len(chosen))
        else:
            chosen = self.rng.sample(keys, min(len(keys), self.rng.randint(1, 2)))
            rows = [live.pop(key) for key in chosen]
            for key in chosen:
                self.shown["lines"].pop(key)
            self._emit(table, cm.rows_message(table, "DELETE", rows, self._stamp()))
            self._count(len(rows))

    # -- the table without a key, DDL -----------------------------------------------------------
    def audit(self) -> None:
        table = self.tables["audit"]
        rows = [
            {
                "event": "login",
                "detail": self._value("detail", "varchar"),
                "logged_at": self._value("t", "datetime"),
            }
            for _ in range(self.rng.randint(1, 2))
        ]
        self._emit(table, cm.rows_message(table, "INSERT", rows, self._stamp()))
        self.keyless += 1

    def ddl(self, table: cm.Table, kind: str, sql: str) -> None:
        self._emit(table, cm.ddl_message(table, kind, sql, self._stamp()))
        self.ddl_log.append((table.table_id, kind, sql))

    def alter(self) -> None:
        """ALTER TABLE orders ADD COLUMN: later orders messages carry `discount`."""
        self.tables["orders"] = self.tables["orders"].add_column("discount", "decimal(5,2)")
        self.ddl(
            self.tables["orders"], "ALTER", "ALTER TABLE `orders` ADD COLUMN `discount` decimal(5,2) NULL"
        )
        for row in self.live["orders"].values():
            row["discount"] = None  # the source's existing rows; gold shows it once a message sends it

    def truncate(self) -> None:
        if not self.live["orders"]:
            self.insert_orders(1)
        self.truncated = list(self.live["orders"])
        self.live["orders"].clear()
        self.shown["orders"].clear()
        self.ddl(self.tables["orders"], "TRUNCATE", "TRUNCATE TABLE `orders`")
        self.changes += 1

    def refill(self) -> None:
        """New orders after the truncate, the first one with an id the truncate removed."""
        reused = self.truncated[0].split("=", 1)[1] if self.truncated else None
        if reused is not None:
            self.insert_orders(1, [{"id": reused}])
        self.insert_orders(2)

    def scratch(self, kind: str) -> None:
        database = self.tables["orders"].database
        table = cm.Table(database, "import_tmp", (("id", "bigint(20)"), ("payload", "varchar(255)")), ("id",))
        if kind == "CREATE":
            sql = (
                "CREATE TABLE `import_tmp` (`id` bigint(20) NOT NULL, `payload` varchar(255), "
                "PRIMARY KEY (`id`))"
            )
        else:
            sql = "RENAME TABLE `import_tmp` TO `import_2025`"
        self.ddl(table, kind, sql)

    # -- transactions ----------------------------------------------------------------------
    def _count(self, rows: int) -> None:
        self.changes += rows
        self.multi_row += rows > 1

    def random_orders_change(self) -> None:
        keys, roll = self.live["orders"].sorted_keys_except(set()), self.rng.random()
        if not keys or roll < 0.4:
            self.insert_orders(self.rng.randint(1, 3))
        elif roll < 0.8:
            self.update_orders(self.rng.sample(keys, min(len(keys), self.rng.randint(1, 3))))
        elif roll < 0.85:
            self.update_orders([self.rng.choice(keys)], change_key=True)
        else:
            self.delete_orders(self.rng.sample(keys, min(len(keys), self.rng.randint(1, 2))))

    def transaction(self, action: Callable[[], None] | None) -> None:
        """One source transaction: `action`, or one to three random changes. Its messages share
        the binlog event time (whole seconds) and the GTID."""
        self.clock_ms += self.rng.randint(1, 20) * 1000
        self.transaction_number += 1
        self.gtid = f"{SERVER_UUID}:{self.transaction_number}"
        if action is not None:
            action()
            return
        for _ in range(self.rng.randint(1, 3)):
            if self.rng.random() < 0.6:
                self.random_orders_change()
            else:
                self.lines_change()


def table_partition(table: str, partitions: int) -> int:
    """The partition Canal sends a table's messages to with `canal.mq.partitionHash` by table: the
    Java hashCode of the table's name, its absolute value modulo the partition count."""
    code = 0
    for unit in table.encode("utf-16-be").hex(" ", 2).split():
        code = (31 * code + int(unit, 16)) & 0xFFFFFFFF
    return abs(code - (1 << 32) if code >= 1 << 31 else code) % partitions


def _deliver(
    produced: list[tuple[dict[str, Any], str]], partitions: int, rng: random.Random, rate: float
) -> tuple[list[list[dict[str, Any]]], int]:
    """Partition by table, then deliver some messages again a few messages later in the same
    partition, in a later batch handled later (new `id` and `ts`, same contents)."""
    logs: list[list[dict[str, Any]]] = [[] for _ in range(partitions)]
    for message, route in produced:
        logs[table_partition(route, partitions)].append(message)
    redeliveries = 0
    delivered: list[list[dict[str, Any]]] = []
    for log in logs:
        picks = [i for i in range(len(log)) if rng.random() < rate]
        if rate > 0 and not redeliveries and not picks and log:
            picks = [len(log) // 2]
        out = list(log)
        for index in reversed(picks):
            again = {**log[index], "id": log[index]["id"] + 1_000, "ts": log[index]["ts"] + 60_000}
            out.insert(min(len(out), index + 1 + rng.randint(0, 8)), again)
        redeliveries += len(picks)
        delivered.append(out)
    return delivered, redeliveries


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    redelivery_rate: float = 0.05,
    database: str = "shop",
) -> Traffic:
    """Simulate about `changes` row changes and deliver them as Canal flat messages. With a few
    dozen changes or more, the traffic has multi-row messages, key changes, partial (NOBLOB)
    images, the ALTER and the TRUNCATE of orders (followed by new rows), the CREATE and RENAME of
    import_tmp, the table without a key, and redeliveries."""
    rng = random.Random(seed)
    simulation = _Simulation(rng, database)

    def noblob(on: bool) -> Callable[[], None]:
        def switch() -> None:
            simulation.noblob = on
            keys = simulation.live["orders"].sorted_keys_except(set())
            if on and keys:
                simulation.update_orders(rng.sample(keys, min(len(keys), 2)))

        return switch

    schedule: list[tuple[float, Callable[[], None]]] = [
        (0.1, lambda: simulation.scratch("CREATE")),
        (0.15, simulation.audit),
        (0.2, noblob(True)),
        (0.35, noblob(False)),
        (0.4, simulation.alter),
        (0.45, simulation.audit),
        (0.5, simulation.truncate),
        (0.5, simulation.refill),
        (0.6, lambda: simulation.scratch("RENAME")),
    ]
    while simulation.changes < changes:
        if schedule and simulation.changes >= schedule[0][0] * changes:
            simulation.transaction(schedule.pop(0)[1])
        else:
            simulation.transaction(None)
    while schedule:  # tiny runs: the scheduled steps still happen
        simulation.transaction(schedule.pop(0)[1])
    delivered, redeliveries = _deliver(simulation.produced, partitions, rng, redelivery_rate)
    expected = {
        simulation.tables[name].table_id: dict(simulation.shown[name]) for name in ("orders", "lines")
    }
    return Traffic(
        delivered,
        expected,
        expected_ddl=simulation.ddl_log,
        changes=simulation.changes,
        multi_row_messages=simulation.multi_row,
        key_changes=simulation.key_changes,
        partial_updates=simulation.partial,
        keyless_messages=simulation.keyless,
        redeliveries=redeliveries,
        tables=tuple(simulation.tables.values()),
    )


LANDINGS = (("jsonl", ""),)  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format canal` (cdc_tools/generators/__init__.py)."""
    traffic = generate(options.changes, options.seed, options.partitions, database=options.database)
    paths = traffic.write(out)
    return (
        f"wrote {traffic.messages} canal message(s) for {traffic.changes} change(s) "
        f"({traffic.multi_row_messages} multi-row, {len(traffic.expected_ddl)} DDL, "
        f"{traffic.redeliveries} redelivery(ies)) to {len(paths)} file(s) in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "data", "old", "database", "table", "pkNames", "mysqlType", "isDdl", "sql", "type", "es", "gtid",
})  # fmt: skip
MASK_FIELDS: frozenset[str] = frozenset()


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the database `<namespace>shop`; no Canal table is declared in the seeds."""
    return generate(changes, seed, partitions, database=f"{namespace}shop")


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A Canal message has no envelope: its fields are the message's own."""
    return value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """A GTID no real transaction has: the copy is no redelivery of the message it came from."""
    body["gtid"] = f"{SERVER_UUID}:{10**12 + n}"
