"""Realistic Qlik Replicate traffic (Event Hubs / Kafka target, JSON), with the expected outcome.

One Replicate task (`replicate01` / `sales_to_eventhubs`) captures three tables:
- `SALES.ORDERS` (key ORDER_ID): text, NUMERIC(12,2) sometimes sent without its
  trailing zeros, DATETIME with microseconds, BOOLEAN as 1 / 0, and a CLOB (NOTES);
  messages in the atMSG envelope naming their table. Midway an `ALTER TABLE ADD
  CHANNEL` makes table version 2 (a new metadata message, a new schemaId); later
  messages carry the new column.
- `SALES.ORDER_LINES` (key ORDER_ID, LINE_NO): envelope, found by messageSchemaId only,
  before images on (`beforeData`), and now and then an update of LINE_NO (a key change).
- `HR.DOCUMENTS` (key DOC_ID, INT8): data messages without the envelope
  (`headers.externalSchemaId`), a BLOB and BYTES (hex), REAL8, DATE.

Each table starts with its metadata message and a full load (REFRESH rows, no CDC
headers); then transactions of one to three INSERT / UPDATE / DELETE changes follow
(`changeSequence`: 35 digits, one counter across the task; `transactionEventCounter`,
`transactionLastEvent`; `streamPosition` an LSN). `changeMask` marks the changed columns
(never a LOB; DELETE: the key), `columnMask` the columns sent: some updates leave an
unchanged LOB out (bit clear, value null), so gold must keep its previous value. Some
deleted keys are inserted again.

Delivery: round-robin over the partitions, the first message (ORDERS' metadata) to the
last partition, so landing the other partitions first gives data before its metadata;
a few messages are delivered again a little later (at least once), in any partition.

Messages are produced one at a time and handed to a sink: `generate` keeps them in
lists (tests), `write` streams them to `partition-<n>.jsonl` files (any size, little
memory). Both give the same messages for a seed. `expected_current` holds the live rows
in the contract's text forms, so a test can compare gold.cdc_current with them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators import qlik_messages as qm
from cdc_tools.generators.files import write_expected, write_partitions
from cdc_tools.generators.qlik_messages import Column, TableVersion

SERVER, TASK = "replicate01", "sales_to_eventhubs"
START = datetime(2025, 3, 14, 9, 0, 0)  # naive UTC
NAMES = ("Anna Doe", "John Roe", "Mia Poe", "Li Wei", "Ravi Kumar", "Olga Ivanova", "Ana Souza")
ODD_TEXTS = ("", "Zoë Müller", "東京 warehouse", 'O\'Brien, "Jr."', "line one\nline two", "back\\slash")
SKUS = ("TEA-001", "TEA-002", "MUG-010", "POT-100", "CUP-004")
CHANNELS = ("web", "store", "phone", None)


def default_tables(
    start: datetime = START, sales_schema: str = "SALES", hr_schema: str = "HR"
) -> dict[str, TableVersion]:
    """The captured tables as they start (version 1); the schema names are parameters."""

    def table(schema: str, name: str, *columns: Column) -> TableVersion:
        return TableVersion(SERVER, TASK, schema, name, 1, columns, start)

    return {
        "orders": table(
            sales_schema,
            "ORDERS",
            Column("ORDER_ID", "INT4", key_position=1),
            Column("CUSTOMER", "STRING", 100),
            Column("AMOUNT", "NUMERIC", precision=12, scale=2),
            Column("ORDERED_AT", "DATETIME", scale=6),
            Column("PAID", "BOOLEAN"),
            Column("NOTES", "CLOB", 2_147_483_647),
        ),
        "lines": table(
            sales_schema,
            "ORDER_LINES",
            Column("ORDER_ID", "INT4", key_position=1),
            Column("LINE_NO", "INT2", key_position=2),
            Column("SKU", "STRING", 20),
            Column("QTY", "INT4"),
            Column("UNIT_PRICE", "NUMERIC", precision=10, scale=3),
            Column("SHIP_DATE", "DATE"),
        ),
        "documents": table(
            hr_schema,
            "DOCUMENTS",
            Column("DOC_ID", "INT8", key_position=1),
            Column("TITLE", "STRING", 200),
            Column("BODY", "BLOB", 2_147_483_647),
            Column("THUMB", "BYTES", 64),
            Column("SIZE_MB", "REAL8"),
            Column("UPDATED_AT", "DATETIME", scale=6),
        ),
    }


NEW_COLUMN = Column("CHANNEL", "STRING", 20)  # ALTER TABLE SALES.ORDERS ADD CHANNEL VARCHAR(20)
ENVELOPE = {"orders": True, "lines": True, "documents": False}
NAMES_TABLE = {"orders": True, "lines": False, "documents": True}
BEFORE_IMAGE = {"orders": False, "lines": True, "documents": False}


@dataclass
class Traffic:
    """Generated messages per partition (None when streamed to files), the expected live rows and counts."""

    partitions: list[list[dict[str, Any]]] | None
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    tables: dict[str, TableVersion]  # as they end
    changes: int = 0  # CDC row changes
    refresh_rows: int = 0
    metadata_messages: int = 0
    redeliveries: int = 0
    lob_left_out: int = 0  # updates whose columnMask leaves the unchanged LOB out
    key_changes: int = 0
    messages: int = 0

    def write(self, directory: Path) -> list[Path]:
        """Write the kept messages as `partition-<n>.jsonl` and `_expected_current.json`."""
        if self.partitions is None:
            raise ValueError("these messages were streamed to files already")
        paths = write_partitions(directory, self.partitions, qm.dumps)
        write_expected(directory, self.expected_current)
        return paths


class _Delivery:
    """Round-robin over the partitions (the first message to the last one); a redelivered copy goes
    to a random partition a few messages later. Hands each delivered message to `sink`."""

    def __init__(
        self, rng: random.Random, partitions: int, rate: float, sink: Callable[[int, dict], None]
    ) -> None:
        self.rng, self.partitions, self.rate, self.sink = rng, partitions, rate, sink
        self.turn = partitions - 1
        self.held: list[tuple[int, int, dict[str, Any]]] = []  # (due after message n, partition, message)
        self.count = self.redeliveries = 0

    def __call__(self, message: dict[str, Any]) -> None:
        self.sink(self.turn, message)
        self.turn, self.count = (self.turn + 1) % self.partitions, self.count + 1
        if self.rng.random() < self.rate:
            self.held.append(
                (self.count + self.rng.randint(0, 9), self.rng.randrange(self.partitions), message)
            )
            self.redeliveries += 1
        due = [h for h in self.held if h[0] <= self.count]
        if due:
            self.held = [h for h in self.held if h[0] > self.count]
            for _, partition, copy in due:
                self.sink(partition, copy)

    def flush(self) -> None:
        for _, partition, copy in self.held:
            self.sink(partition, copy)
        self.held = []


class _Simulation:
    """The source tables, Replicate's positions and the messages it produces."""

    def __init__(
        self, rng: random.Random, emit: Callable[[dict[str, Any]], None], schemas: tuple[str, str]
    ) -> None:
        self.rng, self.emit = rng, emit
        self.tables = default_tables(START, *schemas)
        self.live: dict[str, dict[str, dict[str, str | None]]] = {name: {} for name in self.tables}
        self.keys: dict[str, list[str]] = {name: [] for name in self.tables}  # live keys, for random picks
        self.index: dict[str, dict[str, int]] = {name: {} for name in self.tables}
        self.deleted: dict[str, list[dict[str, str | None]]] = {name: [] for name in self.tables}
        self.clock = START
        self.sequence = 0  # the task's change counter (changeSequence)
        self.lsn = 0x2C_0000_0300_0000
        self.tx = 0xA1B0
        self.next_id = {"orders": 0, "lines": 0, "documents": 10**12}
        self.changes = self.refresh_rows = self.metadata = self.lob_left_out = self.key_changes = 0
        self.position: list[qm.Position] = []  # the current transaction's changes, filled in at commit

    # -- live rows ------------------------------------------------------------------
    def _add(self, name: str, key: str, row: dict[str, str | None]) -> None:
        if key not in self.index[name]:
            self.index[name][key] = len(self.keys[name])
            self.keys[name].append(key)
        self.live[name][key] = row

    def _remove(self, name: str, key: str) -> dict[str, str | None]:
        at, keys = self.index[name].pop(key), self.keys[name]
        last = keys.pop()
        if last != key:
            keys[at], self.index[name][last] = last, at
        return self.live[name].pop(key)

    # -- values -------------------------------------------------------------------
    def _text(self, column: Column) -> str:
        rng = self.rng
        if rng.random() < 0.1:
            return rng.choice(ODD_TEXTS)
        if column.name == "CUSTOMER":
            return rng.choice(NAMES)
        if column.name == "SKU":
            return rng.choice(SKUS)
        return f"{column.name.lower()}-{rng.randint(1, 9999)}"

    def _value(self, column: Column) -> str | None:
        """A random value of a non-key column, as Qlik sends it (text; binary as hex)."""
        rng, kind = self.rng, column.type
        if rng.random() < 0.07:
            return None
        if kind in ("INT2", "INT4", "INT8"):
            return str(rng.randint(1, 500))
        if kind == "NUMERIC":
            units = rng.randint(-(10**4), 10 ** (column.precision - column.scale) - 1)
            fraction = rng.randrange(10**column.scale)
            text = f"{units}.{fraction:0{column.scale}d}"
            if rng.random() < 0.25:  # sent without trailing zeros (e.g. 12.5, 7)
                text = text.rstrip("0").rstrip(".")
            return text
        if kind == "REAL8":
            return repr(rng.randint(1, 100_000) / 8)
        if kind == "BOOLEAN":
            return rng.choice(("1", "0"))
        if kind == "DATE":
            return (datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 700))).strftime("%Y-%m-%d")
        if kind == "DATETIME":
            moment = self.clock - timedelta(seconds=rng.randint(0, 86_400 * 30))
            if rng.random() > 0.2:
                moment += timedelta(microseconds=rng.randrange(1_000_000))
            return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
        if kind == "BYTES":
            return rng.randbytes(rng.randint(1, 24)).hex().upper()
        if kind == "BLOB":
            return rng.randbytes(rng.randint(16, 600)).hex().upper()
        if kind == "CLOB":
            words = ("lorem", "ipsum", "dolor", "sit", "amet", "qlik", "replicate", "näive", "日本")
            return " ".join(rng.choice(words) for _ in range(rng.randint(10, 250)))
        if column.name == "CHANNEL":
            return rng.choice(CHANNELS)
        return self._text(column)

    def _new_row(self, name: str, fixed: dict[str, str] | None = None) -> dict[str, str | None]:
        version, row = self.tables[name], dict(fixed or {})
        if "ORDER_ID" in version.key and "ORDER_ID" not in row:
            if name == "orders":
                self.next_id["orders"] += 1
                row["ORDER_ID"] = str(self.next_id["orders"])
            else:  # a line of some order (not necessarily live: no foreign keys)
                row["ORDER_ID"] = str(self.rng.randint(1, max(1, self.next_id["orders"])))
        if "LINE_NO" in version.key and "LINE_NO" not in row:
            self.next_id["lines"] += 1
            row["LINE_NO"] = str(self.next_id["lines"] % 30_000 + 1)
        if "DOC_ID" in version.key and "DOC_ID" not in row:
            self.next_id["documents"] += 1
            row["DOC_ID"] = str(self.next_id["documents"])
        return {c.name: row[c.name] if c.name in row else self._value(c) for c in version.columns}

    # -- messages -------------------------------------------------------------------
    def _message(
        self,
        name: str,
        operation: str,
        row: dict[str, str | None],
        before: dict[str, str | None] | None,
        changed: list[str],
        sent: list[str],
    ) -> None:
        version = self.tables[name]
        position = self._next_position() if operation != "REFRESH" else None
        change_mask = qm.mask(version, (c for c in changed if not version.column(c).is_lob))
        image = {c: (row[c] if c in sent else None) for c in version.names}
        before_image = None
        if before is not None and BEFORE_IMAGE[name]:
            before_image = {c: (before.get(c) if c in sent else None) for c in version.names}
        message = qm.data(
            version,
            operation,
            image,
            before_image,
            position,
            change_mask,
            qm.mask(version, sent),
            envelope=ENVELOPE[name],
            name_table=NAMES_TABLE[name],
        )
        self.pending.append(message)

    def _next_position(self) -> qm.Position:
        self.sequence += 1
        self.lsn += self.rng.randint(1, 0x200)
        lsn = f"{self.lsn >> 32:08X}:{(self.lsn >> 16) & 0xFFFF:08X}:{self.lsn & 0xFFFF:04X}"
        return qm.Position(
            f"{self.clock:%Y%m%d%H%M%S}{self.sequence:021d}",
            self.clock.strftime("%Y-%m-%d %H:%M:%S.%f"),
            lsn,
            f"{self.tx:032X}",
            0,  # filled in at commit
            False,
        )

    def publish_metadata(self, name: str) -> None:
        self.emit(qm.metadata(self.tables[name]))
        self.metadata += 1

    def full_load(self, name: str, rows: int) -> None:
        """The table's metadata, then its full load: REFRESH rows."""
        self.publish_metadata(name)
        self.pending: list[dict[str, Any]] = []
        for _ in range(rows):
            row = self._new_row(name)
            while qm.key_text(self.tables[name], row) in self.live[name]:
                row = self._new_row(name)
            self._add(name, qm.key_text(self.tables[name], row), row)
            names = list(self.tables[name].names)
            self._message(name, "REFRESH", row, None, names, names)
            self.refresh_rows += 1
        self._flush()

    def _flush(self) -> None:
        for message in self.pending:
            self.emit(message)
        self.pending = []

    def insert(self, name: str) -> None:
        fixed = None
        if self.deleted[name] and self.rng.random() < 0.1:  # a deleted key comes back
            old = self.deleted[name].pop(self.rng.randrange(len(self.deleted[name])))
            fixed = {c: old[c] for c in self.tables[name].key}
            if qm.key_text(self.tables[name], old) in self.live[name]:
                fixed = None
        row = self._new_row(name, fixed)
        while qm.key_text(self.tables[name], row) in self.live[name]:  # an order line's key is taken
            row = self._new_row(name)
        self._add(name, qm.key_text(self.tables[name], row), row)
        names = list(self.tables[name].names)
        self._message(name, "INSERT", row, None, names, names)

    def update(self, name: str, key: str) -> None:
        """One to three non-key columns change; an unchanged LOB is sometimes not sent. Order lines
        now and then get a new LINE_NO (a key change, seen through the before image)."""
        version = self.tables[name]
        before = dict(self.live[name][key])
        row = {c: before.get(c) for c in version.names}  # a column added since: null
        others = [c for c in version.columns if not c.key_position]
        changed = [c.name for c in self.rng.sample(others, self.rng.randint(1, min(3, len(others))))]
        for column in changed:
            row[column] = self._value(version.column(column))
        if name == "lines" and self.rng.random() < 0.08:
            self.next_id["lines"] += 1
            row["LINE_NO"] = str(self.next_id["lines"] % 30_000 + 1)
            if qm.key_text(version, row) not in self.live[name]:
                changed.append("LINE_NO")
                self.key_changes += 1
            else:
                row["LINE_NO"] = before["LINE_NO"]
        sent = list(version.names)
        lobs = [c.name for c in version.columns if c.is_lob and c.name not in changed]
        if lobs and self.rng.random() < 0.5:  # Oracle without full supplemental logging: LOB not sent
            sent = [c for c in sent if c not in lobs]
            self.lob_left_out += 1
        new_key = qm.key_text(version, row)
        kept = {c: (row[c] if c in sent else before.get(c)) for c in version.names}
        for column in version.names:  # a column the source did not send keeps its old value (or stays absent)
            if column not in sent and column not in before:
                kept.pop(column)
        if new_key != key:
            self._remove(name, key)
        self._add(name, new_key, kept)
        self._message(name, "UPDATE", row, before, changed, sent)

    def delete(self, name: str, key: str) -> None:
        version = self.tables[name]
        old = self._remove(name, key)
        row = {c: old.get(c) for c in version.names}
        self.deleted[name].append(row)
        if len(self.deleted[name]) > 50:
            self.deleted[name].pop(0)
        names = list(version.names)
        self._message(name, "DELETE", row, None, list(version.key), names)

    def random_change(self, name: str) -> None:
        keys, roll = self.keys[name], self.rng.random()
        if not keys or roll < 0.42:
            self.insert(name)
        elif roll < 0.85:
            self.update(name, self.rng.choice(keys))
        else:
            self.delete(name, self.rng.choice(keys))
        self.changes += 1

    def alter(self) -> None:
        """ALTER TABLE SALES.ORDERS ADD CHANNEL: table version 2, a new metadata message. One order from
        before is never changed again, so the end state has rows with and without the column."""
        if self.keys["orders"]:
            keep = self.keys["orders"][0]
            row = self._remove("orders", keep)
            self.live["orders"][keep] = row  # live, but no longer picked for changes
        self.tables["orders"] = self.tables["orders"].add_column(NEW_COLUMN, self.clock)
        self.publish_metadata("orders")

    def transaction(self, action: Callable[[], None] | None = None) -> None:
        """One committed source transaction: `action`, or one to three random changes."""
        self.clock += timedelta(seconds=self.rng.randint(0, 4), microseconds=self.rng.randrange(1_000_000))
        self.tx += self.rng.randint(1, 3)
        self.pending = []
        if action is not None:
            action()
        else:
            for _ in range(self.rng.randint(1, 3)):
                self.random_change(self.rng.choice(("orders", "orders", "lines", "lines", "documents")))
        data_messages = self.pending
        for number, message in enumerate(data_messages, start=1):
            head = message["message"]["headers"] if "message" in message else message["headers"]
            head["transactionEventCounter"] = number
            head["transactionLastEvent"] = number == len(data_messages)
        self._flush()


def _simulate(
    changes: int,
    seed: int,
    partitions: int,
    redelivery_rate: float,
    sink: Callable[[int, dict], None],
    schemas: tuple[str, str] = ("SALES", "HR"),
) -> Traffic:
    rng = random.Random(seed)
    delivery = _Delivery(rng, partitions, redelivery_rate, sink)
    simulation = _Simulation(rng, delivery, schemas)
    for name in simulation.tables:
        simulation.full_load(name, max(3, changes // 30))
    altered = False
    while simulation.changes < changes:
        if not altered and simulation.changes >= 0.4 * changes:
            simulation.transaction(simulation.alter)
            altered = True
        simulation.transaction()
    if not altered:
        simulation.transaction(simulation.alter)
        simulation.transaction(lambda: simulation.random_change("orders"))
    delivery.flush()
    expected = {
        simulation.tables[name].table_id: dict(
            sorted((key, qm.row_text(simulation.tables[name], row)) for key, row in live.items())
        )
        for name, live in simulation.live.items()
    }
    return Traffic(
        None,
        expected,
        dict(simulation.tables),
        changes=simulation.changes,
        refresh_rows=simulation.refresh_rows,
        metadata_messages=simulation.metadata,
        redeliveries=delivery.redeliveries,
        lob_left_out=simulation.lob_left_out,
        key_changes=simulation.key_changes,
        messages=delivery.count + delivery.redeliveries,
    )


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    redelivery_rate: float = 0.04,
    schemas: tuple[str, str] = ("SALES", "HR"),
) -> Traffic:
    """Simulate the full loads and then about `changes` CDC row changes, keeping the messages in memory.
    With a few dozen changes or more the traffic has REFRESH rows, inserts, updates (some leaving the
    LOB out, some changing an order line's key), deletes, a deleted key inserted again, the table
    version change of SALES.ORDERS, bare data messages and redeliveries. `schemas` names the source
    schemas of the SALES and HR tables."""
    logs: list[list[dict[str, Any]]] = [[] for _ in range(partitions)]
    traffic = _simulate(changes, seed, partitions, redelivery_rate, lambda p, m: logs[p].append(m), schemas)
    traffic.partitions = logs
    return traffic


def write(
    directory: Path, changes: int = 200, seed: int = 7, partitions: int = 3, redelivery_rate: float = 0.04
) -> tuple[Traffic, list[Path]]:
    """The same traffic as `generate`, streamed to `partition-<n>.jsonl` (and `_expected_current.json`)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"partition-{n}.jsonl" for n in range(partitions)]
    handles: list[TextIO] = [p.open("w", encoding="utf-8") for p in paths]
    try:
        traffic = _simulate(
            changes, seed, partitions, redelivery_rate, lambda p, m: handles[p].write(qm.dumps(m) + "\n")
        )
    finally:
        for handle in handles:
            handle.close()
    write_expected(directory, traffic.expected_current)
    return traffic, paths


LANDINGS = (("jsonl", ""),)  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format qlik` (cdc_tools/generators/__init__.py)."""
    traffic, paths = write(out, options.changes, options.seed, options.partitions)
    return (
        f"wrote {traffic.messages} qlik message(s) for {traffic.changes} change(s) after a full load of "
        f"{traffic.refresh_rows} row(s) ({traffic.metadata_messages} metadata message(s), "
        f"{traffic.redeliveries} redelivery(ies)) to {len(paths)} file(s) in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "changeMask", "columnMask", "changeSequence", "timestamp", "streamPosition", "transactionId",
    "ordinal", "scale", "precision", "primaryKeyPosition", "tableVersion", "schemaId",
    "messageSchemaId", "externalSchemaId", "operation", "type", "table", "schema", "tableColumns",
    "data", "beforeData", "magic",
})  # fmt: skip
MASK_FIELDS = frozenset({"changeMask", "columnMask"})


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the schemas `<NAMESPACE>SALES` and `<NAMESPACE>HR` (no Qlik table is declared
    in the seeds)."""
    schemas = (f"{namespace.upper()}SALES", f"{namespace.upper()}HR")
    return generate(changes, seed, partitions, schemas=schemas)


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A message in the atMSG envelope carries its fields in `message`; a bare one at the top."""
    message = value.get("message")
    return message if value.get("magic") == "atMSG" and isinstance(message, dict) else value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """A `changeSequence` beyond every real one (REFRESH rows have none and keep none)."""
    headers = body.get("headers")
    if isinstance(headers, dict) and headers.get("changeSequence"):
        headers["changeSequence"] = f"{9 * 10**34 + n:035d}"
