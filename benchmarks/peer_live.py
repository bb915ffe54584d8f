"""The per-key diff of benchmarks/peer_compare.py for producers whose generator knows only the
live rows (`_expected_current.json`), not each key's history: Oracle GoldenGate, Alibaba
Canal, SQL Server CES and Alibaba DataWorks (issue 42).

Their generators (cdc_tools/generators/goldengate_traffic.py, canal_traffic.py, ...) record no
causes either, so the causes are read from the traffic itself, in the vocabulary of
cdc_tools/generators/debezium_traffic.py's CAUSES: each message is turned into row events
(`goldengate_events`, `canal_events`, `ces_events`, `dataworks_events`), and `causes` replays
them in source order (GoldenGate: `pos`; Canal: each table's messages in the order of its
partition, the order Canal sent them; CES: commit LSN and sequence number; DataWorks:
sequenceId) and notes, per key, what could make a consumer get it wrong, with the first message that
showed each cause. Then `diff_live` compares each system's live rows with the expected ones,
key by key, and puts each differing key in the first of its causes that can make that kind of
difference (PRESENCE: a key live in one and not the other; VALUES: the same key with other
values).

Values are compared in the contract's text forms (the forms of `_expected_current.json`). The
project's gold.cdc_current is in those forms; the peer keeps each value as the message sent it,
so its values are put in them first, with the generators' own functions
(`peer_value_text`): that the peer does not decode a value counts as no difference. Pure
functions, no Spark: tests/unit/test_peer_live.py.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from cdc_tools.generators import canal_messages as cm
from cdc_tools.generators import dataworks_messages as dw
from cdc_tools.generators import goldengate_messages as gg
from cdc_tools.generators.debezium_traffic import CAUSES

PRODUCERS = ("goldengate", "canal", "ces", "dataworks")
# Beyond the Debezium generator's CAUSES: a CES event larger than the message size, sent as
# several messages that each hold a piece of its `data` string.
SPLIT = "split events"
# A JSON number with a fraction or an exponent, which Spark's `from_json` reads into a string
# field through a double (`17520.00` becomes `17520.0`; beyond 15-17 digits it is rounded).
THROUGH_A_DOUBLE = "numbers read through a double"
ALL_CAUSES = (*CAUSES[:3], SPLIT, *CAUSES[3:], THROUGH_A_DOUBLE)  # SPLIT after "partial images"
UNEXPLAINED = "unexplained"
NEVER_HAD = "keys the source never had"
# Causes that can make a key live in one system and not in the other, or only its values differ.
PRESENCE = frozenset(
    {
        "truncates",
        "primary-key changes",
        "deletes and re-inserts",
        "redelivery",
        "out-of-order delivery",
        "transactions",
        SPLIT,
    }
)
VALUES = frozenset(
    {
        THROUGH_A_DOUBLE,
        "partial images",
        "primary-key changes",
        "schema changes",
        "redelivery",
        "out-of-order delivery",
        "transactions",
        SPLIT,
    }
)


@dataclass(frozen=True)
class Event:
    """One row change (or a truncate) as a message conveyed it.

    `old_key` / `new_key`: the key text (`_expected_current.json`'s form) before and after the
    change (None where there is none: an insert has no old key, a delete no new one, a truncate
    neither). `order`: where it stands in source order; `copy`: what a redelivered copy shares
    with the first; `commit`: what the changes of one transaction share; `where`: (file, line)
    as delivered; `columns`: the columns the row image carries; `partial`: the image leaves out
    columns the row has."""

    table_id: str
    kind: str  # insert, update, delete, truncate
    old_key: str | None
    new_key: str | None
    order: tuple
    copy: str
    commit: str
    where: tuple[int, int]
    columns: frozenset[str] = frozenset()
    partial: bool = False
    text: str = ""
    notes: tuple[str, ...] = ()  # causes the event itself shows (SPLIT)


@dataclass
class Tables:
    """What a scan learns of each table: key columns (empty: every column identifies a row)
    and, for Canal, each column's MySQL type."""

    keys: dict[str, list[str]] = field(default_factory=dict)
    types: dict[str, dict[str, str]] = field(default_factory=dict)  # Canal: MySQL; CES: SQL Server


# -- reading the traffic ---------------------------------------------------------------------
def message_lines(files: Iterable[Path]) -> Iterable[tuple[int, int, str]]:
    """(file index, line number, line) of every message line of `files`, in order."""
    for number, path in enumerate(files):
        with path.open(encoding="utf-8") as handle:
            for line_number, line in enumerate(handle):
                if line.strip():
                    yield number, line_number, line.rstrip("\n")


def goldengate_key(keys: list[str], row: Mapping[str, Any]) -> str:
    """A GoldenGate row's key text: its key columns' values, or every column's for a table
    without a key (gg.key_text)."""
    return ",".join(f"{c}={gg.value_text(row.get(c))}" for c in (keys or sorted(row)))


def goldengate_events(lines: Iterable[tuple[int, int, str]], tables: Tables) -> list[Event]:
    """Row events of GoldenGate operation messages (schema documents are skipped)."""
    events = []
    for file, number, text in lines:
        changed: list[str] = []  # number texts a double reads otherwise
        message = json.loads(text, parse_float=partial(changed_float, changed=changed))
        if "op_type" not in message:
            continue
        table_id, op = message["table"].lower(), message["op_type"]
        keys = list(message.get("primary_keys") or [])
        tables.keys.setdefault(table_id, keys)
        before, after = message.get("before") or {}, message.get("after") or {}

        old_key = goldengate_key(keys, before) if op in ("U", "D") and before else None
        new_key = None
        if op in ("I", "U"):
            new_key = goldengate_key(keys, {**{c: before.get(c) for c in keys if c in before}, **after})
        kind = {"I": "insert", "U": "update", "D": "delete", "T": "truncate"}[op]
        events.append(
            Event(
                table_id,
                kind,
                old_key,
                new_key,
                order=(message["pos"],),
                copy=f"{table_id}|{message['pos']}|{op}",
                commit=message["op_ts"],
                where=(file, number),
                columns=frozenset(after or before),
                partial=op == "U" and bool(keys),  # completed below, once the columns are known
                text=text,
                notes=(THROUGH_A_DOUBLE,) if changed and op in ("I", "U") else (),
            )
        )
    return events


def java_double_text(value: float) -> str:
    """A double as Java's Double.toString writes it (Jackson's, so Spark's): plain with at
    least one fractional digit from 10^-3 up to 10^7, else `d.dddE<n>`; the shortest digits
    that read back as the same double (Java 19 and later write those; Java 17, which runs Spark
    here, now and then writes one digit more, which this does not reproduce)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[repr(value)]
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, magnitude = ("-" if value < 0 else ""), Decimal(repr(abs(value))).normalize()
    if Decimal("0.001") <= magnitude < Decimal(10_000_000):
        plain = format(magnitude, "f")
        return sign + (plain if "." in plain else plain + ".0")
    digits = "".join(map(str, magnitude.as_tuple().digits))
    exponent = magnitude.adjusted()
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def read_through_double(text: str) -> str:
    """What Spark's `from_json` gives for a JSON number `text` in a string field: an integer's
    digits as sent; a number with a fraction or an exponent as the double nearest to it."""
    if not any(ch in text for ch in ".eE"):
        return text
    return java_double_text(float(text))


def changed_float(text: str, changed: list[str]) -> float:
    """json.loads' parse_float: the float, and `text` kept in `changed` when a double changes it."""
    if read_through_double(text) != text:
        changed.append(text)
    return float(text)


def canal_events(lines: Iterable[tuple[int, int, str]], tables: Tables) -> list[Event]:
    """Row events of Canal flat messages (one per entry of `data`); a TRUNCATE is a truncate
    event; tables without `pkNames` and other DDL are skipped."""
    events = []
    for file, number, text in lines:
        message = json.loads(text)
        table_id = f"{message['database']}.{message['table']}".lower()
        kind = str(message.get("type") or "").upper()
        identity = {k: v for k, v in message.items() if k not in ("id", "ts")}
        copy = json.dumps(identity, sort_keys=True, ensure_ascii=False)
        commit = str(message.get("gtid") or message.get("es"))
        if kind == "TRUNCATE":
            events.append(
                Event(
                    table_id,
                    "truncate",
                    None,
                    None,
                    (message["es"], file, number, 0),
                    copy,
                    commit,
                    (file, number),
                    text=text,
                )
            )
            continue
        if message.get("isDdl") or kind not in ("INSERT", "UPDATE", "DELETE") or not message.get("pkNames"):
            continue
        keys = list(message["pkNames"])
        tables.keys.setdefault(table_id, keys)
        types = tables.types.setdefault(table_id, {})
        types.update(message.get("mysqlType") or {})
        olds = message.get("old") or []
        for index, row in enumerate(message.get("data") or []):
            old = olds[index] if index < len(olds) else {}
            key = ",".join(f"{c}={cm.value_text(types.get(c, ''), row.get(c))}" for c in keys)
            old_row = {**row, **{c: v for c, v in old.items() if c in keys}}
            old_key = ",".join(f"{c}={cm.value_text(types.get(c, ''), old_row.get(c))}" for c in keys)
            events.append(
                Event(
                    table_id,
                    kind.lower(),
                    old_key if kind in ("UPDATE", "DELETE") else None,
                    key if kind != "DELETE" else None,
                    order=(message["es"], file, number, index),
                    copy=f"{copy}|{index}",
                    commit=commit,
                    where=(file, number),
                    columns=frozenset(row),
                    partial=kind == "UPDATE" and bool(set(message.get("mysqlType") or {}) - set(row)),
                    text=text,
                )
            )
    return events


def ces_value_text(sql_type: str, value: str | None) -> str | None:
    """A CES value as sent in the contract's text form (as cdc_tools/generators/ces_traffic.py
    writes its expected rows): datetime2's seventh fractional digit dropped and trailing zeros
    with it, bit as true / false, 0x-hex binary as base64, the rest as sent."""
    if value is None:
        return None
    base = sql_type.split("(")[0].lower()
    if base == "datetime2" and "." in value:
        whole, fraction = value.split(".", 1)
        fraction = fraction[:6].rstrip("0")
        return f"{whole}.{fraction}" if fraction else whole
    if base == "bit":
        return {"1": "true", "0": "false"}.get(value, value)
    if base in ("binary", "varbinary", "image") and value[:2].lower() == "0x":
        return base64.b64encode(bytes.fromhex(value[2:])).decode("ascii")
    return value


def ces_events(lines: Iterable[tuple[int, int, str]], tables: Tables) -> list[Event]:
    """Row events of CES CloudEvents. A split event's segments (each a piece of `data`) are
    joined in segment order, by `logicalid`, into one event noted SPLIT, placed where its
    first segment was delivered."""
    events = []
    segments: dict[str, list[tuple[int, tuple[int, int], str, str]]] = {}
    whole: list[tuple[dict, dict, tuple[int, int], str, tuple[str, ...]]] = []
    for file, number, text in lines:
        message = json.loads(text)
        try:
            data = json.loads(message["data"])
        except ValueError:
            index = message.get("segmentindex", message.get("splitindex", 0))
            segments.setdefault(message["logicalid"], []).append(
                (index, (file, number), message["data"], text)
            )
            continue
        whole.append((message, data, (file, number), text, ()))
    for pieces in segments.values():
        copies: dict[int, tuple[tuple[int, int], str, str]] = {}
        for index, where, piece, text in pieces:
            copies.setdefault(index, (where, piece, text))
        try:
            data = json.loads("".join(copies[i][1] for i in sorted(copies)))
        except ValueError:
            continue  # a segment is missing: the event cannot be known
        first = min(copies.values())
        message = json.loads(first[2])
        whole.append((message, data, first[0], first[2], (SPLIT,)))
        for index, where, _, text in pieces:  # a segment delivered again: a copy of the event
            if where != copies[index][0]:
                whole.append((message, data, where, text, (SPLIT,)))
    for message, data, where, text, notes in whole:
        source = data["eventsource"]
        table_id = f"{source['db']}.{source['schema']}.{source['tbl']}".lower()
        keys = [k["columnname"] for k in source.get("pkkey") or []]
        tables.keys.setdefault(table_id, keys)
        types = tables.types.setdefault(table_id, {})
        types.update({c["name"]: c["type"] for c in source.get("cols") or []})
        operation = message.get("operation")
        if operation not in ("INS", "UPD", "DEL"):
            continue
        current = json.loads(data["eventrow"].get("current") or "{}")
        key = ",".join(
            f"{k['columnname']}={ces_value_text(types.get(k['columnname'], ''), k['value'])}"
            for k in source["pkkey"]
        )
        transaction = source["transaction"]
        events.append(
            Event(
                table_id,
                {"INS": "insert", "UPD": "update", "DEL": "delete"}[operation],
                key if operation != "INS" else None,
                key if operation != "DEL" else None,
                order=(transaction["commitlsn"], transaction["sequencenumber"]),
                copy=message["logicalid"],
                commit=transaction["commitlsn"],
                where=where,
                columns=frozenset(current),
                partial=operation == "UPD" and bool(set(types) - set(current)),
                text=text,
                notes=notes,
            )
        )
    return events


def dataworks_events(lines: Iterable[tuple[int, int, str]], tables: Tables) -> list[Event]:
    """Row events of DataWorks records: INSERT, UPDATE_AFTER (its old image from its own
    `before`, or from the UPDATE_BEFOR of the same table and sequenceId: the two records of an
    update sent as a pair) and DELETE; a TRUNCATE is a truncate event. A table without a
    primary key is keyed by the column DataWorks adds to identify its rows (dw.Table.key)."""
    parsed = [(file, number, text, json.loads(text)) for file, number, text in lines]
    befores: dict[tuple[str, str], dict] = {}
    for _, _, _, message in parsed:
        payload = message.get("payload") or {}
        if payload.get("op") == "UPDATE_BEFOR" and payload.get("before"):
            table = dataworks_table(message)
            befores.setdefault((table.table_id, payload["sequenceId"]), payload["before"]["dataColumn"])
    events = []
    for file, number, text, message in parsed:
        payload = message.get("payload") or {}
        op = payload.get("op")
        if op not in ("INSERT", "UPDATE_AFTER", "DELETE", "TRUNCATE"):
            continue
        table = dataworks_table(message)
        table_id = table.table_id
        order = (int(payload["sequenceId"]), file, number)
        copy = json.dumps(message, sort_keys=True, ensure_ascii=False)
        commit = f"{table.db_name}|{(payload.get('timestamp') or {}).get('eventTime')}"
        if op == "TRUNCATE":
            events.append(
                Event(table_id, "truncate", None, None, order, copy, commit, (file, number), text=text)
            )
            continue
        tables.keys.setdefault(table_id, list(table.key))
        tables.types.setdefault(table_id, {}).update(table.types)
        after = (payload.get("after") or {}).get("dataColumn")
        before = (payload.get("before") or {}).get("dataColumn")
        if op == "UPDATE_AFTER" and before is None:
            before = befores.get((table_id, payload["sequenceId"]))
        row = before if op == "DELETE" else after
        new_key = dw.key_text(table, after) if op != "DELETE" and after is not None else None
        old_key = dw.key_text(table, before) if op != "INSERT" and before is not None else None
        if op == "UPDATE_AFTER" and old_key is None:
            old_key = new_key  # the old image is lost with its UPDATE_BEFOR: the key as sent
        events.append(
            Event(
                table_id,
                {"INSERT": "insert", "UPDATE_AFTER": "update", "DELETE": "delete"}[op],
                old_key,
                new_key,
                order=order,
                copy=copy,
                commit=commit,
                where=(file, number),
                columns=frozenset(row or {}),
                text=text,
            )
        )
    return events


def dataworks_table(message: Mapping[str, Any]) -> dw.Table:
    """The table a DataWorks record names, with its columns and key as the record states them."""
    schema = message.get("schema") or {}
    source = schema.get("source") or {}
    return dw.Table(
        str(source.get("dbType") or ""),
        str(source.get("dbVersion") or ""),
        source.get("dbName") or "",
        source.get("schemaName"),
        source.get("tableName") or "",
        tuple((c["name"], c["type"]) for c in schema.get("dataColumn") or []),
        tuple(schema["primaryKey"]) if schema.get("primaryKey") else None,
    )


EVENTS: dict[str, Callable[[Iterable[tuple[int, int, str]], Tables], list[Event]]] = {
    "goldengate": goldengate_events,
    "canal": canal_events,
    "ces": ces_events,
    "dataworks": dataworks_events,
}


# -- causes -----------------------------------------------------------------------------------
def causes(events: list[Event]) -> dict[str, dict[str, dict[str, str]]]:
    """table_id -> key -> {cause: the first message that showed it}, in ALL_CAUSES order.

    Replays the first copy of each event in source order (`order`): an insert of a key that had
    been deleted or truncated is a re-insert; an update whose old and new keys differ is a key
    change of both; every key live at a truncate is truncated; an image that leaves out some of
    its table's columns so far is partial (GoldenGate: an update carrying fewer columns than the
    table has had; Canal: an UPDATE row without a column of the message's `mysqlType`); a column
    the table's first event did not carry is a schema change. A copy of an earlier event is a
    redelivery; a key whose events were delivered from more than one file, or in another order
    than the source's, was delivered out of order; an event whose commit (GoldenGate `op_ts`,
    Canal `gtid`, else `es`) other events share was in a transaction."""
    found: dict[str, dict[str, dict[str, str]]] = {}

    def note(table_id: str, key: str | None, cause: str, text: str) -> None:
        if key is not None:
            found.setdefault(table_id, {}).setdefault(key, {}).setdefault(cause, text)

    ordered = sorted(events, key=lambda e: e.order)
    first: dict[str, Event] = {}
    per_commit: Counter = Counter()
    for event in ordered:
        if event.copy in first:
            continue
        first[event.copy] = event
        per_commit[event.commit] += 1
    live: dict[str, set[str]] = {}
    gone: dict[str, set[str]] = {}
    columns: dict[str, set[str]] = {}
    initial: dict[str, frozenset[str]] = {}
    delivered: dict[tuple[str, str], list[tuple[tuple, tuple[int, int]]]] = {}
    for event in ordered:
        table, text = event.table_id, event.text
        keys = [k for k in (event.old_key, event.new_key) if k is not None]
        if first[event.copy] is not event:
            for key in keys:
                note(table, key, "redelivery", text)
            continue
        for key in keys:
            delivered.setdefault((table, key), []).append((event.order, event.where))
        if per_commit[event.commit] > 1:
            for key in keys:
                note(table, key, "transactions", text)
        for noted in event.notes:
            for key in keys:
                note(table, key, noted, text)
        table_live, table_gone = live.setdefault(table, set()), gone.setdefault(table, set())
        if event.kind == "truncate":
            for key in sorted(table_live):
                note(table, key, "truncates", text)
            table_gone |= table_live
            table_live.clear()
            continue
        if event.columns:
            initial.setdefault(table, event.columns)
            if event.columns - initial[table]:
                for key in keys:
                    note(table, key, "schema changes", text)
        known = columns.setdefault(table, set())
        if event.partial and (known - event.columns):
            note(table, event.new_key, "partial images", text)
        known |= event.columns
        if event.kind == "update" and event.old_key != event.new_key:
            for key in keys:
                note(table, key, "primary-key changes", text)
        if event.old_key is not None and event.old_key != event.new_key:
            table_live.discard(event.old_key)
            table_gone.add(event.old_key)
        if event.new_key is not None:
            if event.new_key in table_gone and event.new_key not in table_live:
                note(table, event.new_key, "deletes and re-inserts", text)
            table_live.add(event.new_key)
    for (table, key), places in delivered.items():
        files = {where[0] for _, where in places}
        in_order = [where for _, where in sorted(places)]
        if len(files) > 1 or in_order != sorted(in_order):
            note(table, key, "out-of-order delivery", first_text(events, table, key))
    return {
        table: {key: {c: noted[c] for c in ALL_CAUSES if c in noted} for key, noted in keys.items()}
        for table, keys in found.items()
    }


def first_text(events: list[Event], table_id: str, key: str) -> str:
    """The first delivered message of a key."""
    mine = [e for e in events if e.table_id == table_id and key in (e.old_key, e.new_key)]
    return min(mine, key=lambda e: e.where).text if mine else ""


# -- the diff ---------------------------------------------------------------------------------
def same_text(got: Mapping[str, Any] | None, want: Mapping[str, Any] | None) -> bool:
    """Two rows in text forms (a column missing from one is null)."""
    got, want = got or {}, want or {}
    return all(got.get(c) == want.get(c) for c in set(got) | set(want))


def diff_live(
    expected: Mapping[str, Mapping[str, Mapping[str, Any]]],
    got: Mapping[str, Mapping[str, Mapping[str, Any]]],
    key_causes: Mapping[str, Mapping[str, Mapping[str, str]]],
) -> tuple[Counter, dict[str, tuple[str, str]]]:
    """Keys whose live row differs (both in text forms), per class: the first of the key's
    causes (in ALL_CAUSES order) that can make that kind of difference (PRESENCE, VALUES), else
    "unexplained"; a key the traffic never had is NEVER_HAD; a key whose only difference is
    numbers the peer read through a double is THROUGH_A_DOUBLE, whatever else it went through.
    Also the first key of each class."""
    per_class: Counter = Counter()
    first: dict[str, tuple[str, str]] = {}
    for table_id in sorted(set(expected) | set(got)):
        want_rows, got_rows = expected.get(table_id, {}), got.get(table_id, {})
        for key in sorted(set(want_rows) | set(got_rows)):
            want, have = want_rows.get(key), got_rows.get(key)
            if (want is None) != (have is None):
                possible = PRESENCE
            elif same_text(have, want):
                continue
            else:
                possible = VALUES
            noted = key_causes.get(table_id, {}).get(key)
            if noted is None and want is None:
                cause = NEVER_HAD
            elif possible is VALUES and only_through_a_double(have, want):
                cause = THROUGH_A_DOUBLE
            else:
                cause = next((c for c in (noted or {}) if c in possible), UNEXPLAINED)
            per_class[cause] += 1
            first.setdefault(cause, (table_id, key))
    return per_class, first


def only_through_a_double(got: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """Whether every column where `got` differs from `want` holds the expected number as read
    through a double (read_through_double of the expected text)."""
    differing = [c for c in set(got) | set(want) if got.get(c) != want.get(c)]
    for column in differing:
        expected, value = want.get(column), got.get(column)
        try:
            if expected is None or value is None or read_through_double(expected) != value:
                return False
        except ValueError:  # not a number
            return False
    return bool(differing)


# -- each system's live rows -------------------------------------------------------------------
def peer_value_text(producer: str, types: Mapping[str, str], column: str, value: str | None) -> str | None:
    """A value as the peer holds it (the text Spark's `from_json` gives a string field: a JSON
    string's characters; a JSON integer's digits; a JSON number with a fraction or an exponent
    as Spark prints the double it reads, so `17520.00` is `17520.0`) in the contract's text form:
    GoldenGate's as they are (a number the double changed stays a difference: the peer holds
    another value); Canal's bytes are base64 of their one-character-per-byte text
    (cm.value_text); CES's by their SQL Server type (`ces_value_text`); DataWorks' by their
    DataWorks type (`dataworks_value_text`: its DOUBLE is a double at the source)."""
    if producer == "canal":
        return cm.value_text(types.get(column, ""), value)
    if producer == "ces":
        return ces_value_text(types.get(column, ""), value)
    if producer == "dataworks":
        return dataworks_value_text(types.get(column, ""), value)
    return value


def dataworks_value_text(column_type: str, value: str | None) -> str | None:
    """A DataWorks value as `from_json` gives it in a string field, in the contract's text form
    (dw.value_text of the value it stands for): a DATE's epoch milliseconds as a timestamp, a
    DOUBLE as Python writes the double, the rest as sent."""
    if value is None:
        return None
    if column_type == "DATE":
        return dw.value_text(column_type, int(value))
    if column_type == "DOUBLE":
        return dw.value_text(column_type, float(value))
    return value


def peer_live(
    producer: str, rows: Mapping[str, list[dict[str, Any]]], tables: Tables
) -> dict[str, dict[str, dict[str, Any]]]:
    """table_id -> key text -> row (text forms) of the peer's open versions (`__END_AT` null);
    `rows` holds each table's exported history rows (columns starting with `_` are the peer's)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for table_id, history in rows.items():
        types, keys = tables.types.get(table_id, {}), tables.keys.get(table_id, [])
        live = out.setdefault(table_id, {})
        for row in history:
            if row.get("__END_AT") is not None:
                continue
            values = {
                c: peer_value_text(producer, types, c, v) for c, v in row.items() if not c.startswith("_")
            }
            key = ",".join(f"{c}={values.get(c)}" for c in (keys or sorted(values)))
            live[key] = values
    return out


def project_live(lines: Iterable[str], tables: Tables) -> dict[str, dict[str, dict[str, Any]]]:
    """table_id -> key text -> row from JSON lines `[table_id, primary_key, row_data]` of
    gold.cdc_current (the key's columns in the table's key order, else sorted, as the tests
    tests/e2e/test_goldengate_generated.py and test_canal_generated.py read it)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for line in lines:
        table_id, primary_key, row = json.loads(line)
        keys = tables.keys.get(table_id) or sorted(primary_key)
        out.setdefault(table_id, {})[",".join(f"{c}={primary_key.get(c)}" for c in keys)] = row
    return out


def cause_counts(key_causes: Mapping[str, Mapping[str, Mapping[str, str]]]) -> Counter:
    """Keys per cause."""
    return Counter(c for keys in key_causes.values() for noted in keys.values() for c in noted)


def target_name(table_id: str) -> str:
    """The peer's target table of a table (benchmarks/peer/pipeline/<producer>_auto_cdc.py)."""
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in table_id.lower())


def abbreviated(text: str, keep: int = 200) -> str:
    """A message for a report: each string value longer than `keep` characters cut to `keep`
    and the count of the rest (a CES segment's `data` is a piece of some 256 KB). A message
    with none is returned as it is, its numbers spelled as sent."""
    try:
        message = json.loads(text)
    except ValueError:
        return text
    if len(text) <= keep:
        return text

    def cut(value: Any) -> Any:
        if isinstance(value, str) and len(value) > keep:
            return f"{value[:keep]}… ({len(value) - keep:,} more characters)"
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v) for v in value]
        return value

    shortened = cut(message)
    return text if shortened == message else json.dumps(shortened, ensure_ascii=False)
