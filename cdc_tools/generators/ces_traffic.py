"""Realistic SQL Server CES traffic, with the expected outcome.

Simulates changes to several tables (single and composite keys, NULLs, a
decimal, a datetime2(7), a date, a bit and binary columns), commits them in
small transactions, and writes the CES messages the way a topic with several
partitions delivers them: round-robin over partition files (so one table's
events arrive out of order), values over 256 KB split into segments (either
spelling, numbered from 0 or 1), and some messages redelivered. Alongside, it
keeps the expected live rows in the contract's text forms, so a test can
compare gold.cdc_current with them exactly.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators.ces_messages import ces_event, line, split_event
from cdc_tools.generators.files import key_text, write_expected, write_partitions
from cdc_tools.generators.sorted_keys import SortedKeyDict

MAX_MESSAGE_BYTES = 256 * 1024  # CES's default maximum message size
BIG_TEXT = ("lorem ipsum " * 25_000)[:300_000]  # one shared string: live rows hold it many times


@dataclass(frozen=True)
class Table:
    db: str
    schema: str
    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...]

    @property
    def table_id(self) -> str:
        return f"{self.db}.{self.schema}.{self.name}".lower()


def default_tables(db: str) -> tuple[Table, ...]:
    return (
        Table(
            db,
            "dbo",
            "Orders",
            (
                ("order_id", "int"),
                ("customer", "nvarchar(100)"),
                ("amount", "decimal(10,2)"),
                ("placed_at", "datetime2(7)"),
                ("note", "nvarchar(max)"),
            ),
            ("order_id",),
        ),
        Table(
            db,
            "dbo",
            "OrderLines",
            (
                ("order_id", "int"),
                ("line_no", "int"),
                ("sku", "varchar(20)"),
                ("qty", "int"),
                ("shipped", "bit"),
            ),
            ("order_id", "line_no"),
        ),
        Table(
            db,
            "sales",
            "Customers",
            (
                ("customer_id", "bigint"),
                ("name", "nvarchar(200)"),
                ("birth_date", "date"),
                ("photo", "varbinary(max)"),
            ),
            ("customer_id",),
        ),
    )


@dataclass
class Traffic:
    """Generated messages per partition, and the expected live rows."""

    partitions: list[list[dict[str, Any] | str]]
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    changes: int = 0
    split_events: int = 0
    redeliveries: int = 0
    tables: tuple[Table, ...] = field(default_factory=tuple)

    def write(self, directory: Path) -> list[Path]:
        paths = write_partitions(directory, self.partitions, line)
        write_expected(directory, self.expected_current)
        return paths


class _Simulation:
    def __init__(self, tables: Sequence[Table], rng: random.Random, big_every: int) -> None:
        self.tables = tables
        self.rng = rng
        self.big_every = big_every
        self.live: dict[str, SortedKeyDict] = {t.table_id: SortedKeyDict() for t in tables}
        self.sent: dict[str, dict[str, dict[str, str | None]]] = {t.table_id: {} for t in tables}
        self.sent: dict[str, dict[str, dict[str, str | None]]] = {t.table_id: {} for t in tables}
        self.next_id = 1
        self.clock = datetime(2025, 3, 14, 9, 0, 0)
        self.lsn = 0x2C00000400
        self.count = 0

    def _value(
        self, table: Table, column: str, sql_type: str, key_value: str | None
    ) -> tuple[str | None, str | None]:
        """(value as CES sends it, value in contract text form)."""
        if key_value is not None:
            return key_value, key_value
        if column not in table.key and self.rng.random() < 0.1:
            return None, None
        big = self.big_every and self.count % self.big_every == 0
        base = sql_type.split("(")[0]
        if base in ("int", "bigint"):
            v = str(self.rng.randint(1, 10_000))
            return v, v
        if base == "decimal":
            v = f"{self.rng.randint(-99_999, 999_999) / 100:.2f}"
            return v, v
        if base == "datetime2":
            moment = self.clock - timedelta(microseconds=self.rng.randint(0, 10**9))
            sent = moment.strftime("%Y-%m-%d %H:%M:%S.%f") + str(self.rng.randint(0, 9))
            text = moment.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")
            return sent, text
        if base == "date":
            v = (datetime(1950, 1, 1) + timedelta(days=self.rng.randint(0, 25_000))).strftime("%Y-%m-%d")
            return v, v
        if base == "bit":
            bit = self.rng.random() < 0.5
            return ("1" if bit else "0"), ("true" if bit else "false")
        if base == "varbinary":
            raw = self.rng.randbytes(200_000 if big else 16)
            return "0x" + raw.hex().upper(), base64.b64encode(raw).decode()
        text = BIG_TEXT if big and sql_type.endswith("(max)") else f"{column}-{self.rng.randint(1, 999)}"
        return text, text

    def _row(
        self, table: Table, key: dict[str, str] | None
    ) -> tuple[dict[str, str | None], dict[str, str | None]]:
        sent: dict[str, str | None] = {}
        text: dict[str, str | None] = {}
        for column, sql_type in table.columns:
            key_value = None
            if column in table.key:
                key_value = (
                    key[column]
                    if key
                    else str(self.next_id if column == table.key[0] else self.rng.randint(1, 3))
                )
            sent[column], text[column] = self._value(table, column, sql_type, key_value)
        if key is None:
            self.next_id += 1
        return sent, text

    def new_id(self) -> str:
        """A CloudEvents id drawn from the seeded generator (same seed, same ids)."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def change(
        self, table: Table, commit_lsn: str, sequence_number: int, commit_time: str
    ) -> dict[str, Any] | None:
        """One change of `table` as a CES event, applied to the expected state."""
        self.count += 1
        live, sent_rows = self.live[table.table_id], self.sent[table.table_id]
        choice = self.rng.random()
        name, columns = (table.db, table.schema, table.name), list(table.columns)
        if not live or choice < 0.45:
            sent, text = self._row(table, None)
            key = key_text(table, text)
            if key in live:
                return None
            live[key], sent_rows[key] = text, sent
            key_values = {c: sent[c] for c in table.key}
            return ces_event(
                name,
                "INS",
                columns,
                key_values,
                None,
                sent,
                commit_lsn,
                sequence_number,
                commit_time,
                self.new_id(),
            )
        key = self.rng.choice(live.sorted_keys())
        old = sent_rows[key]
        key_values = {c: live[key][c] for c in table.key}
        if choice < 0.85:
            sent, text = self._row(table, key_values)
            live[key], sent_rows[key] = text, sent
            return ces_event(
                name,
                "UPD",
                columns,
                key_values,
                old,
                sent,
                commit_lsn,
                sequence_number,
                commit_time,
                self.new_id(),
            )
        del live[key], sent_rows[key]
        return ces_event(
            name,
            "DEL",
            columns,
            key_values,
            old,
            None,
            commit_lsn,
            sequence_number,
            commit_time,
            self.new_id(),
        )


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    db: str = "gendb",
    big_every: int = 25,
    redelivery_rate: float = 0.05,
) -> Traffic:
    """Simulate `changes` row changes and deliver them as CES messages."""
    rng = random.Random(seed)
    tables = default_tables(db)
    simulation = _Simulation(tables, rng, big_every)
    events: list[dict[str, Any]] = []
    while simulation.count < changes:
        simulation.lsn += rng.randint(1, 50)
        simulation.clock += timedelta(seconds=rng.randint(1, 30))
        lsn = (
            f"0x{simulation.lsn >> 32:08X}:{(simulation.lsn >> 8) & 0xFFFFFF:08X}:{simulation.lsn & 0xFF:04X}"
        )
        commit_time = simulation.clock.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        for sequence_number in range(1, rng.randint(1, 3) + 1):
            event = simulation.change(rng.choice(tables), lsn, sequence_number, commit_time)
            if event is not None:
                events.append(event)
    traffic = Traffic([[] for _ in range(partitions)], simulation.live, changes=len(events), tables=tables)
    messages: list[dict[str, Any]] = []
    for event in events:
        if len(json.dumps(event)) > MAX_MESSAGE_BYTES:
            parts = -(-len(json.dumps(event)) // MAX_MESSAGE_BYTES) + 1
            messages.extend(
                split_event(
                    event, parts, rng.choice((0, 1)), rng.choice(("segment", "split")), simulation.new_id
                )
            )
            traffic.split_events += 1
        else:
            messages.append(event)
    for number, message in enumerate(messages):  # round-robin, as CES's default partitioning
        traffic.partitions[number % partitions].append(message)
        if rng.random() < redelivery_rate:  # at-least-once: the same message again, later
            traffic.partitions[rng.randrange(partitions)].append(message)
            traffic.redeliveries += 1
    return traffic


LANDINGS = (("jsonl", ""),)  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format ces` (cdc_tools/generators/__init__.py)."""
    traffic = generate(
        options.changes, options.seed, options.partitions, options.database, big_every=options.large_every
    )
    paths = traffic.write(out)
    messages = sum(len(p) for p in traffic.partitions)
    return (
        f"wrote {messages} ces message(s) for {traffic.changes} change(s) ({traffic.split_events} split "
        f"event(s), {traffic.redeliveries} redelivery(ies)) to {len(paths)} file(s) in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "segmentindex", "splitindex", "splittotalcnt", "finalsegment", "logicalid", "commitlsn",
    "sequencenumber", "committime", "time", "cols", "pkkey", "name", "columnname", "index", "type",
    "tbl", "db", "schema", "old", "current", "operation", "id", "source", "value", "data",
})  # fmt: skip
MASK_FIELDS: frozenset[str] = frozenset()


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the database `<namespace>db` (no CES table is declared in the seeds)."""
    return generate(changes, seed, partitions, db=f"{namespace}db")


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A CES message carries its fields in the envelope itself (the event in `data`)."""
    return value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """A new event id, and no longer a segment of a split event."""
    body["id"] = f"mutant-{n}"
    body.pop("logicalid", None)
