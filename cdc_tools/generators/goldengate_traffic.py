"""Realistic Oracle GoldenGate traffic (Big Data Kafka handler, JSON formatter, operation
modelled), with the expected outcome.

Simulates three captured Oracle tables and what the handler writes for them:
- `<PDB>.SALES.CUSTOMERS` (a three-part name: catalog, schema, table; key CUSTOMER_ID): numbers,
  decimals sent as JSON numbers with their scale (some beyond a double's digits), strings with
  odd characters, NULLs, timestamps as text; midway an `ALTER TABLE ADD` (LOYALTY_TIER), after
  which the operations that touch a row carry the new column; one customer deleted and inserted
  again with the same id.
- `<SCHEMA>.ORDER_LINES` (key ORDER_ID, LINE_NO): updates that renumber a line change the key
  (a primary-key update: before and after carry different key values).
- `<SCHEMA>.EVENT_LOG` (no primary key: `primary_keys` absent, every image whole): truncated
  midway (op_type T), then a truncated row is inserted again.

Updates of keyed tables are mostly compressed (the images carry the key columns and the changed
ones only; a column set to NULL is there as null); deletes often carry only the key. Operations of
one source transaction share `op_ts`; `pos` is the trail file's sequence number and the offset in
it, and the trail rolls over to a new file now and then. Messages go to the partition their table
and key hash to (an update under the row's old key, also when it changes the key), so one row's
operations stay in order while a table's do not; some are delivered
again a few messages later with a new `current_ts` (a restarted handler), at least one of them an
update. The schema topic (`schema-topic.jsonl`) holds a JSON schema document per table when it is
first seen and again after the ALTER.

`expected_current` holds the live rows as gold must show them: every column an operation carried
(a column added by the ALTER appears in a row once an operation carries it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators import goldengate_messages as gg
from cdc_tools.generators.debezium_messages import kafka_partition
from cdc_tools.generators.files import write_expected, write_partitions
from cdc_tools.generators.sorted_keys import SortedKeyDict

START = datetime(2025, 3, 14, 9, 0, 0)  # naive UTC
TRAIL_OPERATIONS = 150  # operations per trail file before the next one
NAMES = ("Ann Lee", "Bob Stone", "Chen Jing", "Dana Ruiz", "Emeka Obi", "Farah Khan", "Gus Berg")
ODD_TEXTS = ("", "Zoë Müller", 'O\'Brien, "Jr."', "line one\nline two", "back\\slash", "张伟", "emoji 🎉")
PRODUCTS = ("CAR", "BIKE", "BOAT", "KITE", "SLED")
KINDS = ("LOGIN", "LOGOUT", "EXPORT", "ALERT")
SCHEMA_FILE = "schema-topic.jsonl"


def default_tables(pdb: str = "ORCLPDB1", schema: str = "SALES") -> dict[str, gg.Table]:
    """The captured tables as they start, in the given pluggable database and schema."""
    return {
        "customers": gg.Table(
            f"{pdb}.{schema}.CUSTOMERS",
            ("CUSTOMER_ID", "NAME", "EMAIL", "CREDIT_LIMIT", "CREATED_AT"),
            ("CUSTOMER_ID",),
        ),
        "lines": gg.Table(
            f"{schema}.ORDER_LINES",
            ("ORDER_ID", "LINE_NO", "PRODUCT", "QTY", "PRICE"),
            ("ORDER_ID", "LINE_NO"),
        ),
        "events": gg.Table(f"{schema}.EVENT_LOG", ("EVENT_TS", "KIND", "DETAIL")),
    }


@dataclass
class Traffic:
    """Generated messages per partition, the schema topic, and the expected live rows."""

    partitions: list[list[dict[str, Any]]]
    schemas: list[dict[str, Any]]
    expected_current: dict[str, dict[str, dict[str, str | None]]]  # table_id -> key text -> row
    tables: dict[str, gg.Table] = field(default_factory=dict)  # as they end
    changes: int = 0
    key_updates: int = 0
    compressed_updates: int = 0
    truncates: int = 0
    redeliveries: int = 0

    @property
    def messages(self) -> int:
        return sum(len(p) for p in self.partitions) + len(self.schemas)

    def write(self, directory: Path) -> list[Path]:
        """Write `partition-<n>.jsonl`, the schema topic's `schema-topic.jsonl` and
        `_expected_current.json`; return the message files (the schema topic first, then the
        partitions in order)."""
        paths = write_partitions(directory, self.partitions, gg.dumps)
        schema_path = directory / SCHEMA_FILE
        schema_path.write_text("".join(gg.dumps(s) + "\n" for s in self.schemas), encoding="utf-8")
        write_expected(directory, self.expected_current)
        return [schema_path, *paths]


class _LiveLines(SortedKeyDict):
    """The live order lines, with the line numbers each order has now (`numbers`): a key
    update of a line reads them, and a scan of every line for each one made the generator
    quadratic (a 10M-message run's 1.6M changes took longer than a quarter of an hour)."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[Any, dict[Any, int]] = {}  # ORDER_ID -> LINE_NO -> live lines with it

    def _count(self, row: dict[str, Any], step: int) -> None:
        numbers = self.numbers.setdefault(row["ORDER_ID"], {})
        numbers[row["LINE_NO"]] = numbers.get(row["LINE_NO"], 0) + step
        if not numbers[row["LINE_NO"]]:
            del numbers[row["LINE_NO"]]
            if not numbers:
                del self.numbers[row["ORDER_ID"]]

    def __setitem__(self, key: Any, row: dict[str, Any]) -> None:
        if key in self:
            self._count(self[key], -1)
        super().__setitem__(key, row)
        self._count(row, 1)

    def __delitem__(self, key: Any) -> None:
        self._count(self[key], -1)
        super().__delitem__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self._count(self[key], -1)
        return super().pop(key, *default)

    def clear(self) -> None:
        super().clear()
        self.numbers.clear()


class _Simulation:
    """The source database: rows, the rows as the messages conveyed them, clocks and positions."""

    def __init__(self, rng: random.Random, pdb: str, schema: str) -> None:
        self.rng = rng
        self.tables = default_tables(pdb, schema)
        self.source: dict[str, SortedKeyDict] = {
            name: _LiveLines() if name == "lines" else SortedKeyDict() for name in self.tables
        }
        self.conveyed: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in self.tables}
        self.produced: list[tuple[dict[str, Any], str]] = []  # (message, partition route)
        self.schemas: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.clock = START
        self.lag = timedelta(milliseconds=300)
        self.trail, self.offset, self.in_trail = 0, 0, 0
        self.next_customer = self.next_order = self.next_event = 0
        self.changes = self.key_updates = self.compressed = self.truncates = 0
        self.truncated_events: list[dict[str, Any]] = []
        self.deleted_customer: dict[str, Any] | None = None

    # -- values -------------------------------------------------------------------
    def _time_text(self, back_days: int) -> str:
        moment = self.clock - timedelta(seconds=self.rng.randrange(back_days * 86_400 + 1))
        return moment.replace(microsecond=self.rng.randrange(0, 1_000_000, 1000)).strftime(
            "%Y-%m-%d %H:%M:%S.%f"
        )

    def _value(self, column: str) -> Any:
        rng = self.rng
        if column in ("EMAIL", "LOYALTY_TIER", "DETAIL") and rng.random() < 0.15:
            return None
        if column == "NAME":
            return rng.choice(ODD_TEXTS) if rng.random() < 0.15 else rng.choice(NAMES)
        if column == "EMAIL":
            return f"user{rng.randint(1, 999)}@example.com"
        if column in ("CREDIT_LIMIT", "PRICE"):
            # NUMBER(38,2), sent as a JSON number with its two decimals (17520.00); now and then
            # more digits than a double holds
            cents = rng.randint(10_000, 40_000_000) if rng.random() < 0.9 else rng.randint(10**18, 10**24)
            return Decimal(cents).scaleb(-2)
        if column == "QTY":
            return rng.randint(1, 20)
        if column == "PRODUCT":
            return rng.choice(PRODUCTS)
        if column == "KIND":
            return rng.choice(KINDS)
        if column in ("CREATED_AT", "EVENT_TS"):
            return self._time_text(30)
        if column == "LOYALTY_TIER":
            return rng.choice(("GOLD", "SILVER", "BRONZE"))
        return f"{column.lower()}-{rng.randint(1, 999)}"

    def _new_row(self, name: str, fixed: dict[str, Any] | None = None) -> dict[str, Any]:
        table, row = self.tables[name], dict(fixed or {})
        for column in table.columns:
            if column in row:
                continue
            if column == "CUSTOMER_ID":
                self.next_customer += 1
                row[column] = 1000 + self.next_customer
            elif column == "ORDER_ID":
                self.next_order += 1
                row[column] = 50_000 + self.next_order // 3
            elif column == "LINE_NO":
                row[column] = 1 + self.next_order % 3
            elif column == "DETAIL":
                self.next_event += 1  # keeps every row of the keyless table distinct
                row[column] = f"event {self.next_event}" if self.rng.random() < 0.9 else None
            else:
                row[column] = self._value(column)
        if name == "events" and row["DETAIL"] is None:
            row["DETAIL"] = f"event {self.next_event} (no detail)"
        return row

    # -- positions and delivery -------------------------------------------------------
    def _position(self) -> gg.Position:
        self.in_trail += 1
        if self.in_trail > TRAIL_OPERATIONS:  # the extract moved on to the next trail file
            self.trail, self.offset, self.in_trail = self.trail + 1, 1_400, 1
        self.offset += self.rng.randint(180, 900)
        self.lag += timedelta(milliseconds=self.rng.randint(0, 40))
        return gg.Position(self.trail, self.offset, self.clock, self.clock + self.lag)

    def _emit(self, name: str, message: dict[str, Any], row: dict[str, Any] | None) -> None:
        table = self.tables[name]
        if name not in self.seen:  # the schema topic hears of a table when it is first seen
            self.seen.add(name)
            self.schemas.append(gg.schema_document(table))
        route = table.name if row is None else f"{table.name}|{gg.key_text(table, row)}"
        self.produced.append((message, route))

    def _tokens(self) -> dict[str, str] | None:
        if self.rng.random() < 0.5:
            return None
        return {"R": "AAAR3s" + "".join(self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(12))}

    # -- changes ----------------------------------------------------------------------
    def insert(self, name: str, fixed: dict[str, Any] | None = None) -> str:
        table, row = self.tables[name], self._new_row(name, fixed)
        key = gg.key_text(table, row)
        self.source[name][key] = row
        self.conveyed[name][key] = dict(row)
        self._emit(name, gg.insert(table, row, self._position(), self._tokens()), row)
        self.changes += 1
        return key

    def update(self, name: str, key: str, renumber: bool = False) -> None:
        table = self.tables[name]
        before = dict(self.source[name][key])
        after = dict(before)
        changeable = [c for c in table.columns if c not in table.key]
        for column in self.rng.sample(changeable, self.rng.randint(1, 2)):
            after[column] = self._value(column)
        if name == "events":  # a keyless row changes its identity: keep it distinct
            self.next_event += 1
            after["DETAIL"] = f"event {self.next_event} (edited)"
        if renumber:  # a primary-key update: the line gets a number no other line of its order has
            taken = self.source[name].numbers[before["ORDER_ID"]]
            after["LINE_NO"] = max(taken) + 10  # inserts number lines 1 to 3
            self.key_updates += 1
        compressed = bool(table.key) and self.rng.random() < 0.7
        message = gg.update(table, before, after, self._position(), compressed, self._tokens())
        self.compressed += compressed
        new_key = gg.key_text(table, after)
        old_conveyed = self.conveyed[name].pop(key)
        del self.source[name][key]
        self.source[name][new_key] = after
        self.conveyed[name][new_key] = {**old_conveyed, **message["after"]}
        self._emit(name, message, before)  # under the row's old key, also when the key changes
        self.changes += 1

    def delete(self, name: str, key: str) -> dict[str, Any]:
        table = self.tables[name]
        row = self.source[name].pop(key)
        self.conveyed[name].pop(key)
        self._emit(name, gg.delete(table, row, self._position(), key_only=self.rng.random() < 0.5), row)
        self.changes += 1
        return row

    def random_change(self, name: str) -> None:
        keys, roll = self.source[name].sorted_keys(), self.rng.random()
        if not keys or roll < 0.45:
            self.insert(name)
        elif roll < 0.82:
            self.update(name, self.rng.choice(keys), renumber=name == "lines" and self.rng.random() < 0.2)
        else:
            self.delete(name, self.rng.choice(keys))

    def touch(self, name: str, renumber: bool = False) -> None:
        keys = self.source[name].sorted_keys()
        self.update(name, self.rng.choice(keys) if keys else self.insert(name), renumber)

    def alter(self) -> None:
        """ALTER TABLE CUSTOMERS ADD (LOYALTY_TIER): GoldenGate sends no DDL; the schema topic gets
        the new definition, and the operations that touch a row carry the column."""
        self.tables["customers"] = self.tables["customers"].add_column("LOYALTY_TIER")
        for row in self.source["customers"].values():
            row["LOYALTY_TIER"] = None
        self.schemas.append(gg.schema_document(self.tables["customers"]))
        self.insert("customers", {"LOYALTY_TIER": "GOLD"})

    def truncate(self) -> None:
        if not self.source["events"]:
            self.insert("events")
        self.truncated_events = list(self.source["events"].values())
        self.source["events"].clear()
        self.conveyed["events"].clear()
        self._emit("events", gg.truncate(self.tables["events"], self._position()), None)
        self.truncates += 1
        self.changes += 1

    def refill(self) -> None:
        """After the truncate, one of the truncated rows comes back as it was."""
        if self.truncated_events:
            self.insert("events", dict(self.truncated_events[0]))
        self.insert("events")

    def delete_customer(self) -> None:
        keys = self.source["customers"].sorted_keys()
        self.deleted_customer = self.delete("customers", keys[0]) if keys else None

    def reinsert_customer(self) -> None:
        if self.deleted_customer is not None:
            self.insert("customers", {"CUSTOMER_ID": self.deleted_customer["CUSTOMER_ID"]})

    def transaction(self, action: Any) -> None:
        """One source transaction: `action`, or one to three random changes; its operations share
        one commit time."""
        self.clock += timedelta(seconds=self.rng.randint(1, 20), microseconds=self.rng.randrange(1_000_000))
        if action is not None:
            action()
        else:
            for _ in range(self.rng.randint(1, 3)):
                self.random_change(self.rng.choice(("customers", "customers", "lines", "lines", "events")))


def _deliver(
    produced: list[tuple[dict[str, Any], str]], partitions: int, rng: random.Random, rate: float
) -> tuple[list[list[dict[str, Any]]], int]:
    """Partition by table and key hash, then deliver some messages again a few messages later in
    the same partition with a new current_ts; at least one of them an update."""
    logs: list[list[dict[str, Any]]] = [[] for _ in range(partitions)]
    for message, route in produced:
        logs[kafka_partition(route.encode("utf-8"), partitions)].append(message)
    chosen = [[i for i in range(len(log)) if rng.random() < rate] for log in logs]
    if rate > 0 and not any(logs[p][i]["op_type"] == "U" for p, picks in enumerate(chosen) for i in picks):
        update = next(
            ((p, i) for p, log in enumerate(logs) for i, m in enumerate(log) if m["op_type"] == "U"), None
        )
        if update is not None:
            chosen[update[0]] = sorted({*chosen[update[0]], update[1]})
    delivered: list[list[dict[str, Any]]] = []
    for log, picks in zip(logs, chosen, strict=True):
        out = list(log)
        for index in reversed(picks):
            again = dict(log[index])
            written = datetime.strptime(again["current_ts"], "%Y-%m-%dT%H:%M:%S.%f") + timedelta(minutes=3)
            again["current_ts"] = gg.current_ts_text(written)
            out.insert(min(len(out), index + 1 + rng.randint(0, 12)), again)
        delivered.append(out)
    return delivered, sum(len(picks) for picks in chosen)


def generate(
    changes: int = 200,
    seed: int = 7,
    partitions: int = 3,
    redelivery_rate: float = 0.05,
    pdb: str = "ORCLPDB1",
    schema: str = "SALES",
) -> Traffic:
    """Simulate about `changes` operations and deliver them as GoldenGate messages. With a few dozen
    changes or more the traffic has compressed and whole updates, key-only deletes, primary-key
    updates, the ALTER of CUSTOMERS, a customer deleted and inserted again, the truncate of
    EVENT_LOG followed by a truncated row inserted again, trail rollovers and redeliveries."""
    rng = random.Random(seed)
    simulation = _Simulation(rng, pdb, schema)
    schedule = [
        (0.05, lambda: simulation.touch("lines", renumber=True)),
        (0.1, lambda: simulation.touch("customers")),
        (0.2, simulation.delete_customer),
        (0.3, simulation.alter),
        (0.4, simulation.reinsert_customer),
        (0.5, simulation.truncate),
        (0.5, simulation.refill),
    ]
    while simulation.changes < changes:
        if schedule and simulation.changes >= schedule[0][0] * changes:
            simulation.transaction(schedule.pop(0)[1])
        else:
            simulation.transaction(None)
    while schedule:  # tiny runs: the scheduled operations still happen
        simulation.transaction(schedule.pop(0)[1])
    delivered, redeliveries = _deliver(simulation.produced, partitions, rng, redelivery_rate)
    expected = {
        table.table_id: {key: gg.row_text(row) for key, row in simulation.conveyed[name].items()}
        for name, table in simulation.tables.items()
    }
    return Traffic(
        delivered,
        simulation.schemas,
        expected,
        tables=simulation.tables,
        changes=simulation.changes,
        key_updates=simulation.key_updates,
        compressed_updates=simulation.compressed,
        truncates=simulation.truncates,
        redeliveries=redeliveries,
    )


LANDINGS = (("jsonl", ""),)  # (container, sub-directory)


def write_traffic(out: Path, options: GenerateOptions) -> str:
    """`python -m python_ingest generate --format goldengate` (cdc_tools/generators/__init__.py)."""
    traffic = generate(options.changes, options.seed, options.partitions)
    paths = traffic.write(out)
    return (
        f"wrote {traffic.messages} goldengate message(s) for {traffic.changes} change(s) "
        f"({traffic.compressed_updates} compressed update(s), {traffic.key_updates} key update(s), "
        f"{traffic.truncates} truncate(s), {len(traffic.schemas)} schema document(s), "
        f"{traffic.redeliveries} redelivery(ies)) to {len(paths)} file(s) in {out}"
    )


# -- hostile input (tests/helpers/hostile_run.py; cdc_tools/generators/__init__.py) -------
# What the models parse, order by or look things up with: where the mutants aim.
PARSED_FIELDS = frozenset({
    "table", "op_type", "op_ts", "current_ts", "pos", "primary_keys", "tokens", "before", "after",
    "$schema", "title", "definitions", "row", "properties",
})  # fmt: skip
MASK_FIELDS: frozenset[str] = frozenset()


def generate_named(
    changes: int, seed: int, partitions: int, namespace: str, keep_declared: bool = False
) -> Traffic:
    """Traffic of the pluggable database `<NAMESPACE>PDB` and the schema `<NAMESPACE>SALES`; no
    GoldenGate table is declared in the seeds."""
    upper = namespace.upper()
    return generate(changes, seed, partitions, pdb=f"{upper}PDB", schema=f"{upper}SALES")


def message_body(value: dict[str, Any]) -> dict[str, Any]:
    """A GoldenGate message has no envelope: its fields are the message's own."""
    return value


def fresh_identity(body: dict[str, Any], n: int) -> None:
    """A `pos` beyond every real one (20 digits)."""
    body["pos"] = str(9 * 10**19 + n)
