"""Single Oracle GoldenGate messages (GoldenGate for Big Data, JSON formatter, operation
modelled), in the shape docs/producers/goldengate.md describes.

Every operation is one JSON object: `table` (`SCHEMA.TABLE` or `CATALOG.SCHEMA.TABLE`),
`op_type` (I, U, D, T), `op_ts` (source commit time, UTC, `YYYY-MM-DD HH:MM:SS.ffffff`),
`current_ts` (when the formatter wrote it, `YYYY-MM-DDTHH:MM:SS.ffffff`), `pos` (20 digits:
trail file sequence number and offset), `primary_keys` (absent for a table without a key),
optional `tokens`, and the row images `before` (U, D) and `after` (I, U). With compressed
updates the images hold only the key columns and the changed ones.

The Kafka handler can also publish a JSON schema document per table to a schema topic
(`schema_document`): when a table is first seen and after its definition changed.

Also here: the contract's text form of a value (what gold.cdc_current shows). A decimal
(`Decimal`) is sent as a JSON number with exactly its digits (`17520.00`), as the formatter
writes an Oracle NUMBER, and shown with those digits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

OPERATIONS = ("I", "U", "D", "T")
JSON_SCHEMA = "http://json-schema.org/draft-04/schema#"

Row = Mapping[str, Any]  # column -> JSON value as GoldenGate sends it


@dataclass(frozen=True)
class Table:
    """A captured source table: `columns` in the order of the source, `key` the declared primary
    key (empty: none)."""

    name: str  # fully qualified, as GoldenGate spells it: SCHEMA.TABLE or CATALOG.SCHEMA.TABLE
    columns: tuple[str, ...]
    key: tuple[str, ...] = ()

    @property
    def table_id(self) -> str:
        return self.name.lower()

    def identity(self, row: Row) -> tuple[str, ...]:
        """The columns that tell the table's rows apart: the key, else every column of the row."""
        return self.key or tuple(sorted(row))

    def add_column(self, column: str) -> Table:
        return replace(self, columns=(*self.columns, column))


@dataclass(frozen=True)
class Position:
    """Where an operation stands: its trail position and times."""

    trail: int  # trail file sequence number
    offset: int  # offset in the trail file
    op_ts: datetime  # source commit time (naive UTC)
    current_ts: datetime  # when the formatter wrote the message (naive UTC)

    @property
    def pos(self) -> str:
        return f"{self.trail:010d}{self.offset:010d}"


def op_ts_text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def current_ts_text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")


def operation(
    table: Table,
    op_type: str,
    position: Position,
    before: Row | None = None,
    after: Row | None = None,
    tokens: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One operation message, fields in the formatter's order."""
    if op_type not in OPERATIONS:
        raise ValueError(f"not a GoldenGate op_type: {op_type}")
    message: dict[str, Any] = {
        "table": table.name,
        "op_type": op_type,
        "op_ts": op_ts_text(position.op_ts),
        "current_ts": current_ts_text(position.current_ts),
        "pos": position.pos,
    }
    if table.key:
        message["primary_keys"] = list(table.key)
    if tokens:
        message["tokens"] = dict(tokens)
    if before is not None:
        message["before"] = dict(before)
    if after is not None:
        message["after"] = dict(after)
    return message


def insert(
    table: Table, row: Row, position: Position, tokens: Mapping[str, str] | None = None
) -> dict[str, Any]:
    return operation(table, "I", position, after=row, tokens=tokens)


def update(
    table: Table,
    before: Row,
    after: Row,
    position: Position,
    compressed: bool,
    tokens: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An update. `compressed`: the images hold only the key columns and the columns whose value
    changed (a key column that changed is in both, with its old and new value)."""
    if compressed:
        changed = [c for c in after if before.get(c) != after.get(c) or c not in before]
        kept = [c for c in table.columns if c in table.key or c in changed]
        before = {c: before.get(c) for c in kept if c in before}
        after = {c: after[c] for c in kept if c in after}
    return operation(table, "U", position, before=before, after=after, tokens=tokens)


def delete(table: Table, before: Row, position: Position, key_only: bool) -> dict[str, Any]:
    """A delete; `key_only`: the before image holds only the key columns."""
    if key_only and table.key:
        before = {c: before[c] for c in table.key}
    return operation(table, "D", position, before=before)


def truncate(table: Table, position: Position) -> dict[str, Any]:
    """A truncate: the table only, no images."""
    return operation(table, "T", position)


def schema_document(table: Table) -> dict[str, Any]:
    """The JSON schema document the Kafka handler publishes for `table` to its schema topic."""
    nullable = {"type": ["string", "number", "null"]}
    return {
        "$schema": JSON_SCHEMA,
        "title": table.name,
        "description": f"JSON schema for table {table.name}",
        "definitions": {
            "row": {
                "type": "object",
                "properties": {c: dict(nullable) for c in table.columns},
                "additionalProperties": False,
            },
            "tokens": {"type": "object", "properties": {}, "additionalProperties": True},
        },
        "type": "object",
        "properties": {
            "table": {"type": "string"},
            "op_type": {"type": "string"},
            "op_ts": {"type": "string"},
            "current_ts": {"type": "string"},
            "pos": {"type": "string"},
            "primary_keys": {"type": "array", "items": {"type": "string"}},
            "tokens": {"$ref": "#/definitions/tokens"},
            "before": {"$ref": "#/definitions/row"},
            "after": {"$ref": "#/definitions/row"},
        },
        "required": ["table", "op_type", "op_ts", "current_ts", "pos"],
        "additionalProperties": False,
    }


# -- values -------------------------------------------------------------------------
def value_text(value: Any) -> str | None:
    """A value as sent, in the text gold shows: JSON numbers with the digits they were sent
    with (a decimal's `17520.00`; a float as Python spells it: 12.5), strings as sent."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def row_text(row: Row) -> dict[str, str | None]:
    return {column: value_text(value) for column, value in row.items()}


def key_text(table: Table, row: Row) -> str:
    """How a row is identified in `expected_current`: `col=value` pairs, in key order (every
    column, sorted, for a table without a key), joined by `,`."""
    return ",".join(f"{c}={value_text(row[c])}" for c in table.identity(row))


_NUMBER = "\x00number:"  # what a Decimal is while json.dumps writes the text (see dumps)
_NUMBER_TEXT = re.compile(r'"\\u0000number:([-0-9.]+)\\u0000"')


def _number_placeholder(value: Any) -> str:
    if isinstance(value, Decimal):
        return f"{_NUMBER}{format(value, 'f')}\x00"
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII characters as they are (GoldenGate writes UTF-8 JSON); a Decimal
    as a JSON number with exactly its digits (json.dumps has no such number: it is written as a
    marked string first, then unquoted)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_number_placeholder)
    return _NUMBER_TEXT.sub(r"\1", text)


def columns_of(rows: Sequence[Row]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)
