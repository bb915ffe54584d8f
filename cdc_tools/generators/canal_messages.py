"""Single Alibaba Canal flat messages (what canal-server sends to Kafka / RocketMQ with
`flatMessage` on), in the shape docs/producers/canal.md describes.

A message carries the rows of one binlog event of one table: `data` (each row as an object
of text values, or null), `old` (UPDATE only: per row, by index, the previous values of the
columns it changed), `database`, `table`, `pkNames`, `mysqlType` and `sqlType` (the columns'
MySQL type text and java.sql.Types code), `isDdl`, `sql`, `type`, `es` (the binlog event's
time, whole seconds in epoch milliseconds), `ts` (when Canal handled it), `id` (Canal's batch
id, shared by the messages of one batch) and, on a server with GTIDs, `gtid`.

Also here: the contract's text form of a value (what gold.cdc_current shows).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

ROW_TYPES = ("INSERT", "UPDATE", "DELETE")
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "QUERY")
BINARY_BASES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
# java.sql.Types of the MySQL types the generator uses
SQL_TYPES = {
    "int": 4,
    "bigint": -5,
    "tinyint": -6,
    "decimal": 3,
    "varchar": 12,
    "text": 2005,
    "datetime": 93,
    "date": 91,
    "varbinary": -3,
    "blob": 2004,
}

Row = Mapping[str, str | None]  # column -> value as Canal sends it (text or None)


def base_type(mysql_type: str) -> str:
    """`decimal(10,2)` -> `decimal`."""
    return mysql_type.split("(")[0].split()[0].lower()


def is_binary(mysql_type: str) -> bool:
    return base_type(mysql_type) in BINARY_BASES


def is_blob_like(mysql_type: str) -> bool:
    """TEXT and BLOB columns: what binlog_row_image=NOBLOB leaves out when unchanged."""
    return base_type(mysql_type).endswith(("text", "blob"))


@dataclass(frozen=True)
class Table:
    """A captured MySQL table: `columns` are (name, mysqlType) in table order; `primary_key`
    empty for a table without one."""

    database: str
    name: str
    columns: tuple[tuple[str, str], ...]
    primary_key: tuple[str, ...] = ()

    @property
    def table_id(self) -> str:
        return f"{self.database}.{self.name}".lower()

    @property
    def key(self) -> tuple[str, ...]:
        return self.primary_key

    @property
    def types(self) -> dict[str, str]:
        return dict(self.columns)

    def add_column(self, name: str, mysql_type: str) -> Table:
        return replace(self, columns=(*self.columns, (name, mysql_type)))

    def mysql_type(self) -> dict[str, str]:
        return dict(self.columns)

    def sql_type(self) -> dict[str, int]:
        return {c: SQL_TYPES.get(base_type(t), 12) for c, t in self.columns}


@dataclass(frozen=True)
class Stamp:
    """When and where a message was produced: binlog event time, Canal's handling time, its batch
    id and the transaction's GTID (None without GTIDs)."""

    es: int
    ts: int
    batch_id: int
    gtid: str | None = None


def rows_message(
    table: Table,
    kind: str,
    data: Sequence[Row],
    stamp: Stamp,
    old: Sequence[Row] | None = None,
) -> dict[str, Any]:
    """An INSERT, UPDATE or DELETE message of one or more rows, keys in Canal's (alphabetical)
    order. `old` (UPDATE only) is aligned with `data` by index."""
    if kind not in ROW_TYPES:
        raise ValueError(f"not a row type: {kind}")
    if (kind == "UPDATE") != (old is not None) or (old is not None and len(old) != len(data)):
        raise ValueError("an UPDATE, and only an UPDATE, has one `old` entry per row")
    message: dict[str, Any] = {
        "data": [dict(r) for r in data],
        "database": table.database,
        "es": stamp.es,
        "id": stamp.batch_id,
        "isDdl": False,
        "mysqlType": table.mysql_type(),
        "old": [dict(o) for o in old] if old is not None else None,
        "pkNames": list(table.primary_key) or None,
        "sql": "",
        "sqlType": table.sql_type(),
        "table": table.name,
        "ts": stamp.ts,
        "type": kind,
    }
    if stamp.gtid is not None:
        message["gtid"] = stamp.gtid
    return message


def ddl_message(table: Table, kind: str, sql: str, stamp: Stamp) -> dict[str, Any]:
    """A DDL message (CREATE, ALTER, TRUNCATE, RENAME, …): no rows, no column types, the statement
    in `sql`."""
    if kind not in DDL_TYPES:
        raise ValueError(f"not a DDL type: {kind}")
    message: dict[str, Any] = {
        "data": None,
        "database": table.database,
        "es": stamp.es,
        "id": stamp.batch_id,
        "isDdl": True,
        "mysqlType": None,
        "old": None,
        "pkNames": None,
        "sql": sql,
        "sqlType": None,
        "table": table.name,
        "ts": stamp.ts,
        "type": kind,
    }
    if stamp.gtid is not None:
        message["gtid"] = stamp.gtid
    return message


# -- values -------------------------------------------------------------------------
def bytes_value(data: bytes) -> str:
    """Bytes as Canal sends them: one character per byte (ISO-8859-1)."""
    return data.decode("latin-1")


def value_text(mysql_type: str, value: str | None) -> str | None:
    """A value as sent, in the contract's text form for its MySQL type: bytes as base64, the rest
    as sent."""
    if value is None:
        return None
    if is_binary(mysql_type):
        return base64.b64encode(value.encode("latin-1")).decode("ascii")
    return value


def row_text(table: Table, row: Row) -> dict[str, str | None]:
    types = table.types
    return {column: value_text(types[column], value) for column, value in row.items()}


def key_text(table: Table, row: Row) -> str:
    """How a row is identified in `expected_current`: `col=value` pairs in key order, joined by `,`."""
    types = table.types
    return ",".join(f"{c}={value_text(types[c], row[c])}" for c in table.key)


# Characters Python's str.splitlines breaks a line at, beyond \n and \r (JSON escapes those):
# escaped, so that every line-reading tool sees one message a line.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII characters as they are (Canal writes UTF-8 JSON), but for the
    few that some tools read as line breaks."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text
