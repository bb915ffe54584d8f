"""Single Qlik Replicate messages (Event Hubs / Kafka target, JSON), in the documented shape.

Metadata (`MD`) and data (`DT`) messages in the `atMSG` envelope, and data messages
without it (`{schema, table, data, beforeData, headers}`, the schema id in
`headers.externalSchemaId`); see /work/shared/reference/qlik-replicate-eventhubs-messages.en.txt
and sample_data/qlik. Also here: masks (hex, bit i = ordinal i + 1), the values Qlik
sends (text; binary as hex) and their text forms in the contract (what gold shows).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

LOB_TYPES = ("CLOB", "NCLOB", "BLOB")
Row = Mapping[str, str | None]  # column -> value as Qlik sends it (text, or null)


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Qlik type: INT2/4/8, NUMERIC, REAL8, STRING, DATE, DATETIME, BOOLEAN, BYTES, CLOB, BLOB
    length: int = 0
    precision: int = 0
    scale: int = 0
    key_position: int = 0  # primaryKeyPosition: 0 = not in the key

    @property
    def is_lob(self) -> bool:
        return self.type in LOB_TYPES


@dataclass(frozen=True)
class TableVersion:
    """One version of a source table's structure, as a metadata message describes it."""

    server: str
    task: str
    schema: str
    table: str
    version: int
    columns: tuple[Column, ...]  # in ordinal order (ordinal = index + 1)
    timestamp: datetime  # when Replicate produced this version

    @property
    def table_id(self) -> str:
        return f"{self.schema}.{self.table}".lower()

    @property
    def schema_id(self) -> str:
        """A 32-digit hex id, stable for (task, table, version) as Replicate's schema ids are."""
        text = f"{self.server}|{self.task}|{self.schema}.{self.table}|{self.version}"
        return hashlib.md5(text.encode("utf-8")).hexdigest()  # noqa: S324 - an id, not security

    @property
    def key(self) -> tuple[str, ...]:
        keyed = sorted((c for c in self.columns if c.key_position), key=lambda c: c.key_position)
        return tuple(c.name for c in keyed)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def add_column(self, column: Column, at: datetime) -> TableVersion:
        """The next version after `ALTER TABLE ... ADD` (the new column last)."""
        return replace(self, version=self.version + 1, columns=(*self.columns, column), timestamp=at)


def mask(version: TableVersion, names: Iterable[str]) -> str:
    """A change / column mask: upper-case hex of the set ordinals, one byte more than the columns
    need (as in the documented examples: 3 columns `07`, 16 columns `00FFFF`)."""
    wanted = set(names)
    bits = sum(1 << i for i, c in enumerate(version.columns) if c.name in wanted)
    width = 2 * (len(version.columns) // 8 + 1)
    return f"{bits:0{width}X}"


def mask_ordinals(text: str) -> list[int]:
    """The ordinals a mask's set bits stand for, ascending."""
    bits = int(text, 16) if text.strip() else 0
    return [i + 1 for i in range(bits.bit_length()) if bits >> i & 1]


def _data_schema(version: TableVersion) -> str:
    """`dataSchema`: the Avro schema of the data messages (every column a nullable string)."""
    data = [{"name": n, "type": ["null", "string"], "default": None} for n in version.names]
    operations = {"type": "enum", "name": "operation", "symbols": ["INSERT", "UPDATE", "DELETE", "REFRESH"]}
    headers = [
        {"name": "operation", "type": operations},
        *({"name": n, "type": "string"} for n in ("changeSequence", "timestamp", "streamPosition")),
        *({"name": n, "type": "string"} for n in ("transactionId", "changeMask", "columnMask")),
        {"name": "transactionEventCounter", "type": ["null", "long"], "default": None},
        {"name": "transactionLastEvent", "type": ["null", "boolean"], "default": None},
    ]
    record = {
        "type": "record",
        "name": "DataRecord",
        "fields": [
            {"name": "data", "type": {"type": "record", "name": "Data", "fields": data}},
            {"name": "beforeData", "type": ["null", "Data"], "default": None},
            {"name": "headers", "type": {"type": "record", "name": "Headers", "fields": headers}},
        ],
    }
    return json.dumps(record, separators=(",", ":"))


def metadata(version: TableVersion) -> dict[str, Any]:
    """The `MD` message of a table version, in the atMSG envelope."""
    columns = {
        c.name: {
            "ordinal": i + 1,
            "type": c.type,
            "length": c.length,
            "precision": c.precision,
            "scale": c.scale,
            "primaryKeyPosition": c.key_position,
        }
        for i, c in enumerate(version.columns)
    }
    return {
        "magic": "atMSG",
        "type": "MD",
        "headers": None,
        "messageSchemaId": None,
        "messageSchema": None,
        "message": {
            "schemaId": version.schema_id,
            "lineage": {
                "server": version.server,
                "task": version.task,
                "schema": version.schema,
                "table": version.table,
                "tableVersion": version.version,
                "timestamp": version.timestamp.strftime("%Y-%m-%dT%H:%M:%S.%f"),
            },
            "tableStructure": {"tableColumns": columns},
            "dataSchema": _data_schema(version),
        },
    }


@dataclass(frozen=True)
class Position:
    """Where a CDC change stands: None fields for REFRESH rows (full load)."""

    change_sequence: str
    timestamp: str
    stream_position: str
    transaction_id: str
    event_counter: int
    last_event: bool


def headers(operation: str, position: Position | None, change_mask: str, column_mask: str) -> dict[str, Any]:
    """A data message's `headers`; REFRESH rows have empty CDC fields."""
    return {
        "operation": operation,
        "changeSequence": position.change_sequence if position else "",
        "timestamp": position.timestamp if position else "",
        "streamPosition": position.stream_position if position else "",
        "transactionId": position.transaction_id if position else "",
        "changeMask": change_mask,
        "columnMask": column_mask,
        "transactionEventCounter": position.event_counter if position else None,
        "transactionLastEvent": position.last_event if position else None,
    }


def data(
    version: TableVersion,
    operation: str,
    row: Row,
    before: Row | None,
    position: Position | None,
    change_mask: str,
    column_mask: str,
    envelope: bool = True,
    name_table: bool = True,
) -> dict[str, Any]:
    """A data message: in the atMSG envelope (`messageSchemaId`; with top-level `schema` / `table`
    when `name_table`), or bare (always naming its table; `headers.externalSchemaId`)."""
    head = headers(operation, position, change_mask, column_mask)
    body: dict[str, Any] = {}
    if name_table or not envelope:
        body.update(schema=version.schema, table=version.table)
    body.update(data=dict(row), beforeData=None if before is None else dict(before))
    if not envelope:
        head = {**head, "externalSchemaId": version.schema_id}
        head["transactionEventCounter"] = head.pop("transactionEventCounter")
        head["transactionLastEvent"] = head.pop("transactionLastEvent")
        return {**body, "headers": head}
    body["headers"] = head
    return {
        "magic": "atMSG",
        "type": "DT",
        "headers": None,
        "messageSchemaId": version.schema_id,
        "messageSchema": None,
        "message": body,
    }


# -- values -------------------------------------------------------------------------
def value_text(column: Column, value: str | None) -> str | None:
    """A value as Qlik sends it, in the contract's text form for its Qlik type."""
    if value is None:
        return None
    if column.type == "DATETIME":
        return value.rstrip("0").rstrip(".") if "." in value else value
    if column.type == "BOOLEAN":
        return {"1": "true", "0": "false"}.get(value.strip().lower(), value)
    if column.type in ("BYTES", "BLOB"):
        return base64.b64encode(bytes.fromhex(value)).decode("ascii")
    if column.type == "NUMERIC" and column.scale > 0:
        whole, _, fraction = value.partition(".")
        return f"{whole}.{fraction.ljust(column.scale, '0')}"
    return value


def row_text(version: TableVersion, row: Row) -> dict[str, str | None]:
    return {name: value_text(version.column(name), value) for name, value in row.items()}


def key_text(version: TableVersion, row: Row) -> str:
    """How a row is identified in `expected_current`: `col=value` pairs in key order, joined by `,`."""
    return ",".join(f"{c}={value_text(version.column(c), row[c])}" for c in version.key)


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII characters as they are (UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
