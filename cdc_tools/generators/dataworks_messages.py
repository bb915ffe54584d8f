"""Single Alibaba Cloud DataWorks messages ("sync whole database to Kafka"), in the documented shape.

Every message is `{"schema": {...}, "payload": {...}, "version": ...}` (see
/work/shared/reference/dataworks-kafka-message-format.zh.txt): `schema` names the
columns and their types (BOOLEAN, DOUBLE, DATE, BYTES, LONG, STRING), the primary
key (null for tables without one) and the source table; `payload` carries the row
images, `sequenceId`, `scn` (Oracle only), `op`, the timestamps and `ddl`.

Also here: the contract's text form of a value (what gold.cdc_current shows) and
small helpers for the JSON values DataWorks writes (DATE as 13-digit epoch
milliseconds, BYTES as base64).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

VERSION = "1.0.0"  # the document's template; its literal examples show "0.0.1"
TYPES = ("BOOLEAN", "DOUBLE", "DATE", "BYTES", "LONG", "STRING")
ROW_OPS = ("INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE")
DDL_OPS = ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")
CONTROL_OPS = ("MHEARTBEAT", "TRANSACTION_BEGIN", "TRANSACTION_END", "GTID", "XACOMMIT", "XAROLLBACK")
MYSQL_ROW_ID = "#alibaba_rds_row_id#"  # identifies rows of MySQL tables without a primary key
ORACLE_ROW_ID = "rowid"  # Oracle's ROWID, always among the data columns
EPOCH = datetime(1970, 1, 1)

Row = Mapping[str, Any]  # column -> JSON value as DataWorks sends it


@dataclass(frozen=True)
class Table:
    """A captured source table: `columns` are (name, DataWorks type) in `dataColumn` order."""

    db_type: str  # "MySQL", "Oracle"
    db_version: str
    db_name: str
    schema_name: str | None
    table_name: str
    columns: tuple[tuple[str, str], ...]
    primary_key: tuple[str, ...] | None = None

    @property
    def table_id(self) -> str:
        """Lower-case non-empty parts of dbName, schemaName and tableName, joined by `.`."""
        return ".".join(p for p in (self.db_name, self.schema_name, self.table_name) if p).lower()

    @property
    def key(self) -> tuple[str, ...]:
        """The columns that identify a row: the primary key, else the row id column."""
        if self.primary_key:
            return self.primary_key
        return (ORACLE_ROW_ID,) if self.db_type.lower() == "oracle" else (MYSQL_ROW_ID,)

    @property
    def types(self) -> dict[str, str]:
        return dict(self.columns)

    def add_column(self, name: str, column_type: str) -> Table:
        """The table after `ALTER TABLE ADD COLUMN`: new column before the Oracle rowid, else last."""
        columns = list(self.columns)
        at = next((i for i, (c, _) in enumerate(columns) if c == ORACLE_ROW_ID), len(columns))
        columns.insert(at, (name, column_type))
        return replace(self, columns=tuple(columns))

    def renamed(self, table_name: str) -> Table:
        return replace(self, table_name=table_name)

    def source(self) -> dict[str, Any]:
        return {
            "dbType": self.db_type,
            "dbVersion": self.db_version,
            "dbName": self.db_name,
            "schemaName": self.schema_name,
            "tableName": self.table_name,
        }

    def schema(self) -> dict[str, Any]:
        return {
            "dataColumn": [{"name": n, "type": t} for n, t in self.columns],
            "primaryKey": list(self.primary_key) if self.primary_key else None,
            "source": self.source(),
        }


@dataclass(frozen=True)
class Position:
    """Where a record stands in the stream: its sequenceId, Oracle scn and times (epoch ms)."""

    sequence_id: str
    event_ms: int  # when the change happened at the source
    system_ms: int  # when the sync task processed it
    scn: str | None = None


def sequence_id(start_ms: int, number: int) -> str:
    """A 19-digit sequenceId as in the document's examples: the task's start (13-digit ms) and a
    6-digit counter, so that sequenceIds sort in the order the records were produced."""
    return f"{start_ms:013d}{number:06d}"


def timestamps(event_ms: int, system_ms: int | None = None) -> dict[str, int]:
    """`payload.timestamp`; checkpointTime equals eventTime, as the document says it usually does."""
    stamp = {"eventTime": event_ms}
    if system_ms is not None:
        stamp["systemTime"] = system_ms
    stamp["checkpointTime"] = event_ms
    return stamp


def image(row: Row | None) -> dict[str, Any] | None:
    return None if row is None else {"dataColumn": dict(row)}


def message(
    schema: Mapping[str, Any],
    op: str,
    position: Position | None,
    before: Row | None = None,
    after: Row | None = None,
    ddl: Mapping[str, Any] | None = None,
    event_ms: int | None = None,
) -> dict[str, Any]:
    """One message, keys in the order of the document's examples. `position` None (a heartbeat)
    gives a null sequenceId and no systemTime."""
    payload: dict[str, Any] = {
        "before": image(before),
        "after": image(after),
        "sequenceId": position.sequence_id if position else None,
    }
    if position is not None and position.scn is not None:
        payload["scn"] = position.scn
    payload["timestamp"] = (
        timestamps(position.event_ms, position.system_ms) if position else timestamps(event_ms or 0)
    )
    payload["op"] = op
    payload["ddl"] = dict(ddl) if ddl is not None else None
    return {"schema": dict(schema), "payload": payload, "version": VERSION}


def insert(table: Table, after: Row, position: Position) -> dict[str, Any]:
    return message(table.schema(), "INSERT", position, after=after)


def delete(table: Table, before: Row, position: Position) -> dict[str, Any]:
    return message(table.schema(), "DELETE", position, before=before)


def update_pair(table: Table, before: Row, after: Row, position: Position) -> list[dict[str, Any]]:
    """An update as two records sharing one sequenceId: UPDATE_BEFOR (old image), UPDATE_AFTER (new)."""
    return [
        message(table.schema(), "UPDATE_BEFOR", position, before=before),
        message(table.schema(), "UPDATE_AFTER", position, after=after),
    ]


def update_single(table: Table, before: Row, after: Row, position: Position) -> dict[str, Any]:
    """An update as one UPDATE_AFTER carrying both images (the "one Kafka record per update" option)."""
    return message(table.schema(), "UPDATE_AFTER", position, before=before, after=after)


def heartbeat(event_ms: int) -> dict[str, Any]:
    """MHEARTBEAT, exactly as the document's example: no schema, no data, no sequenceId."""
    empty = {"dataColumn": None, "primaryKey": None, "source": None}
    return message(empty, "MHEARTBEAT", None, event_ms=event_ms)


def transaction_marker(table: Table, op: str, position: Position) -> dict[str, Any]:
    """TRANSACTION_BEGIN / TRANSACTION_END: the database in `source`, no table, no columns, no data."""
    if op not in ("TRANSACTION_BEGIN", "TRANSACTION_END"):
        raise ValueError(f"not a transaction marker: {op}")
    source = {**table.source(), "tableName": None}
    return message({"dataColumn": None, "primaryKey": None, "source": source}, op, position)


def ddl_meta(text: str) -> str:
    """A stand-in for `ddlMeta` (a serialized Java object, in base64): the Java serialization of
    the DDL text as a String (stream magic, version, TC_STRING, length, modified UTF-8)."""
    data = text.encode("utf-8")
    return base64.b64encode(b"\xac\xed\x00\x05\x74" + len(data).to_bytes(2, "big") + data).decode()


def ddl(table: Table, op: str, text: str, position: Position) -> dict[str, Any]:
    """A DDL record (CREATE, ALTER, TRUNCATE, RENAME, ...) for `table` with its columns after the
    change, and `ddl.text` the statement."""
    if op not in DDL_OPS:
        raise ValueError(f"not a DDL op: {op}")
    return message(table.schema(), op, position, ddl={"text": text, "ddlMeta": ddl_meta(text)})


# -- values -------------------------------------------------------------------------
def date_ms(moment: datetime) -> int:
    """A naive UTC datetime as DataWorks sends a DATE: epoch milliseconds."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


def bytes_value(data: bytes) -> str:
    """BYTES as DataWorks sends them: base64 (Base64.getEncoder().encodeToString)."""
    return base64.b64encode(data).decode("ascii")


def timestamp_text(moment: datetime) -> str:
    """`yyyy-MM-dd HH:mm:ss[.ffffff]`: trailing fraction zeros dropped, no fraction when zero."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")


def value_text(column_type: str, value: Any) -> str | None:
    """A value as sent, in the contract's text form for its DataWorks type."""
    if value is None:
        return None
    if column_type == "DATE":
        return timestamp_text(EPOCH + timedelta(milliseconds=value))
    if column_type == "BOOLEAN":
        return "true" if value else "false"
    if column_type == "DOUBLE":
        return repr(float(value))
    return str(value)


def row_text(table: Table, row: Row) -> dict[str, str | None]:
    """A row image in the contract's text forms."""
    types = table.types
    return {column: value_text(types[column], value) for column, value in row.items()}


def key_text(table: Table, row: Row) -> str:
    """How a row is identified in `expected_current`: `col=value` pairs, in key order, joined by `,`."""
    types = table.types
    return ",".join(f"{c}={value_text(types[c], row[c])}" for c in table.key)


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII characters as they are (DataWorks writes UTF-8 JSON)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
