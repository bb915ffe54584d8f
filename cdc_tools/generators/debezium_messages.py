"""Build Debezium change messages exactly as Debezium 3.5 and Kafka Connect's
JsonConverter write them, and `kcat -C -J` records that carry them (the shapes
were checked against real connectors: tests/e2e/test_real_producers.py,
docs/real_producers.md).

- Column values in Debezium's encodings, from natural Python values (`encode`),
  and the same values in the contract's text forms (`contract_text`).
- Keys and values with their schema (`{"schema": …, "payload": …}`,
  `schemas.enable=true`) or without (the payload only). Schemas are written
  the JsonConverter way, keys in its order: type, fields, optional, name,
  version, doc, parameters, default, field.
- The `source` blocks of the SQL Server, PostgreSQL, MySQL and MariaDB
  connectors; tombstones; truncates (`op` `t`); PostgreSQL logical decoding
  messages (`op` `m`); primary-key changes (delete + tombstone + create, with
  the `__debezium.newkey` / `__debezium.oldkey` headers); the
  `__debezium.context.*` headers Debezium 3 adds to the records of a
  connector's task; transaction markers (`<prefix>.transaction`, with
  provide.transaction.metadata) and the schema change events of MySQL and
  MariaDB (topic `<prefix>`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

VERSION = "3.5.0.Final"
UNAVAILABLE = "__debezium_unavailable_value"  # PostgreSQL: an unchanged TOASTed value that was not sent
NEW_KEY_HEADER, OLD_KEY_HEADER = "__debezium.newkey", "__debezium.oldkey"
EPOCH = datetime(1970, 1, 1)
Row = Mapping[str, Any]  # column -> value as Debezium sends it

# Column kind -> (Kafka Connect schema type, logical type name)
KINDS: dict[str, tuple[str, str | None]] = {
    "boolean": ("boolean", None),
    "int16": ("int16", None),
    "tinyint1": ("int16", None),  # MySQL / MariaDB BOOLEAN (TINYINT(1)): 0 or 1, nothing says boolean
    "int32": ("int32", None),
    "int64": ("int64", None),
    "float64": ("float64", None),
    "string": ("string", None),
    "bytes": ("bytes", None),
    "date": ("int32", "io.debezium.time.Date"),
    "time": ("int32", "io.debezium.time.Time"),
    "micro_time": ("int64", "io.debezium.time.MicroTime"),
    "nano_time": ("int64", "io.debezium.time.NanoTime"),
    "timestamp": ("int64", "io.debezium.time.Timestamp"),
    "micro_timestamp": ("int64", "io.debezium.time.MicroTimestamp"),
    "nano_timestamp": ("int64", "io.debezium.time.NanoTimestamp"),
    "zoned_timestamp": ("string", "io.debezium.time.ZonedTimestamp"),
    "decimal": ("bytes", "org.apache.kafka.connect.data.Decimal"),
    "variable_decimal": ("struct", "io.debezium.data.VariableScaleDecimal"),
    "uuid": ("string", "io.debezium.data.Uuid"),
}
CONTEXT_HEADER = "__debezium.context."  # + connectorLogicalName, taskId, connectorName, runId


@dataclass(frozen=True)
class Connector:
    """One Debezium connector: its kind, logical server name (`topic.prefix`) and database."""

    kind: str  # sqlserver | postgresql | mysql | mariadb
    name: str
    db: str

    @property
    def message_topic(self) -> str:
        """Where PostgreSQL logical decoding messages go."""
        return f"{self.name}.message"

    @property
    def transaction_topic(self) -> str:
        """Where transaction markers go (provide.transaction.metadata=true)."""
        return f"{self.name}.transaction"

    @property
    def schema_change_topic(self) -> str:
        """Where MySQL and MariaDB connectors send schema change events: the topic prefix."""
        return self.name


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # a key of KINDS
    optional: bool = True
    precision: int = 0  # decimal only
    scale: int = 0  # decimal only


@dataclass(frozen=True)
class Table:
    connector: Connector
    schema: str | None  # None for MySQL and MariaDB
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def topic(self) -> str:
        """Debezium's topic: `<prefix>.<db>.<schema>.<table>` for SQL Server,
        `<prefix>.<schema>.<table>` for PostgreSQL, `<prefix>.<db>.<table>` for MySQL and MariaDB."""
        parts = {
            "sqlserver": (self.connector.db, self.schema),
            "postgresql": (self.schema,),
            "mysql": (self.connector.db,),
            "mariadb": (self.connector.db,),
        }[self.connector.kind]
        return ".".join((self.connector.name, *parts, self.name))

    @property
    def table_id(self) -> str:
        return ".".join(p for p in (self.connector.db, self.schema, self.name) if p).lower()

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


@dataclass(frozen=True)
class Record:
    """One Kafka record as the connector produces it (key and value as JSON objects, before
    serialization); `value` None is a tombstone."""

    topic: str
    key: dict[str, Any] | None
    value: dict[str, Any] | None
    headers: tuple[tuple[str, str], ...] = ()


# -- value encoders -----------------------------------------------------------
def connect_decimal(value: Decimal, scale: int) -> str:
    """org.apache.kafka.connect.data.Decimal: base64 of the unscaled value as a minimal
    big-endian two's-complement integer (Java's BigInteger.toByteArray)."""
    sign, digits, exponent = value.as_tuple()
    magnitude, shift = int("".join(map(str, digits)) or "0"), int(exponent) + scale
    if shift >= 0:
        magnitude *= 10**shift
    else:
        magnitude, rest = divmod(magnitude, 10**-shift)
        if rest:
            raise ValueError(f"{value} has more than {scale} decimal places")
    unscaled = -magnitude if sign else magnitude
    bits = (unscaled if unscaled >= 0 else ~unscaled).bit_length()
    return base64.b64encode(unscaled.to_bytes(bits // 8 + 1, "big", signed=True)).decode("ascii")


def variable_scale_decimal(value: Decimal) -> dict[str, Any]:
    """io.debezium.data.VariableScaleDecimal: the value's own scale and its Decimal bytes."""
    scale = max(0, -int(value.as_tuple().exponent))
    return {"scale": scale, "value": connect_decimal(value, scale)}


def _micros_of_day(moment: time) -> int:
    return ((moment.hour * 60 + moment.minute) * 60 + moment.second) * 1_000_000 + moment.microsecond


def _utc(moment: datetime) -> datetime:
    """Naive UTC (a naive value is taken as UTC already, as Debezium does for `timestamp`)."""
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


def _epoch_micros(moment: datetime) -> int:
    return (_utc(moment) - EPOCH) // timedelta(microseconds=1)


def debezium_date(day: date) -> int:
    """io.debezium.time.Date: days since 1970-01-01."""
    return (day - EPOCH.date()).days


def debezium_time(moment: time) -> int:
    """io.debezium.time.Time: milliseconds of the day."""
    return _micros_of_day(moment) // 1000


def micro_time(moment: time) -> int:
    """io.debezium.time.MicroTime: microseconds of the day."""
    return _micros_of_day(moment)


def nano_time(moment: time, nanos: int = 0) -> int:
    """io.debezium.time.NanoTime: nanoseconds of the day; `nanos` (0-999) adds what `time` cannot hold."""
    return _micros_of_day(moment) * 1000 + nanos


def debezium_timestamp(moment: datetime) -> int:
    """io.debezium.time.Timestamp: milliseconds since the epoch."""
    return _epoch_micros(moment) // 1000


def micro_timestamp(moment: datetime) -> int:
    """io.debezium.time.MicroTimestamp: microseconds since the epoch."""
    return _epoch_micros(moment)


def nano_timestamp(moment: datetime, nanos: int = 0) -> int:
    """io.debezium.time.NanoTimestamp: nanoseconds since the epoch; `nanos` (0-999) adds what
    `datetime` cannot hold (SQL Server datetime2(7) has 100 ns ticks)."""
    return _epoch_micros(moment) * 1000 + nanos


def _fraction(microsecond: int) -> str:
    """`.ffffff` without trailing zeros, or nothing for a whole second."""
    return f".{microsecond:06d}".rstrip("0") if microsecond else ""


def zoned_timestamp(moment: datetime) -> str:
    """io.debezium.time.ZonedTimestamp: ISO-8601 with the value's own offset (`Z` for UTC) and
    the fraction's trailing zeros dropped, as java.time's ISO_OFFSET_DATE_TIME writes it."""
    if moment.tzinfo is None:
        raise ValueError("a ZonedTimestamp needs a datetime with a time zone")
    offset = moment.isoformat()[-6:]
    return f"{moment:%Y-%m-%dT%H:%M:%S}{_fraction(moment.microsecond)}{'Z' if offset == '+00:00' else offset}"


_ENCODERS: dict[str, Callable[[Any], Any]] = {
    "bytes": lambda raw: base64.b64encode(raw).decode("ascii"),
    "date": debezium_date,
    "time": debezium_time,
    "micro_time": micro_time,
    "nano_time": nano_time,
    "timestamp": debezium_timestamp,
    "micro_timestamp": micro_timestamp,
    "nano_timestamp": nano_timestamp,
    "zoned_timestamp": zoned_timestamp,
    "variable_decimal": variable_scale_decimal,
}


def encode(column: Column, value: Any) -> Any:
    """The JSON value Debezium sends for the natural Python `value` of `column`."""
    if value is None:
        return None
    if column.kind == "decimal":
        return connect_decimal(value, column.scale)
    encoder = _ENCODERS.get(column.kind)
    return encoder(value) if encoder else value


def contract_text(value: Any) -> str | None:
    """A natural value in the contract's text form: `105`, `12.50`, `true`, `2025-03-14`,
    `2025-03-14 10:00:00.5` (UTC, fraction trimmed), `10:30:00`, base64 for bytes."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        moment = _utc(value)
        return f"{moment:%Y-%m-%d %H:%M:%S}{_fraction(moment.microsecond)}"
    if isinstance(value, time):
        return f"{value:%H:%M:%S}{_fraction(value.microsecond)}"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


# -- schemas --------------------------------------------------------------------
def columns(spec: str) -> tuple[Column, ...]:
    """Columns (or schema fields) from `name:kind` words: `!` marks NOT NULL (a non-optional
    field), `decimal(p,s)` a Decimal, e.g. `"id:int32! price:decimal(12,3) note:string"`."""
    result = []
    for word in spec.split():
        name, kind = word.split(":")
        optional, kind = not kind.endswith("!"), kind.rstrip("!")
        if kind.startswith("decimal("):
            precision, scale = map(int, kind[len("decimal(") : -1].split(","))
            result.append(Column(name, "decimal", optional, precision, scale))
        else:
            result.append(Column(name, kind, optional))
    return tuple(result)


def _fields(spec: str) -> list[dict[str, Any]]:
    return [field_schema(c) for c in columns(spec)]


def _struct(
    fields: list[dict[str, Any]],
    name: str,
    optional: bool,
    field: str | None = None,
    version: int | None = None,
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "struct", "fields": fields, "optional": optional, "name": name}
    if version is not None:
        schema["version"] = version
    if field is not None:
        schema["field"] = field
    return schema


def field_schema(column: Column) -> dict[str, Any]:
    """The JsonConverter schema of one column, e.g. `{"type": "int32", "optional": false, "field": "id"}`."""
    connect_type, logical = KINDS[column.kind]
    schema: dict[str, Any] = {"type": connect_type}
    if column.kind == "variable_decimal":
        schema["fields"] = _fields("scale:int32! value:bytes!")
    schema["optional"] = column.optional
    if logical:
        schema.update(name=logical, version=1)
    if column.kind == "variable_decimal":
        schema["doc"] = "Variable scaled decimal"
    if column.kind == "decimal":
        schema["parameters"] = {
            "scale": str(column.scale),
            "connect.decimal.precision": str(column.precision),
        }
    schema["field"] = column.name
    return schema


_BINLOG_SOURCE_FIELDS = (
    "table:string server_id:int64! gtid:string file:string! pos:int64! row:int32! thread:int64 query:string"
)
_SOURCE_FIELDS = {
    "sqlserver": "schema:string! table:string! change_lsn:string commit_lsn:string event_serial_no:int64",
    "postgresql": "schema:string! table:string! txId:int64 lsn:int64 xmin:int64 "
    "origin:string origin_lsn:int64",
    "mysql": _BINLOG_SOURCE_FIELDS,
    "mariadb": _BINLOG_SOURCE_FIELDS,
}
SNAPSHOT_MARKERS = ("true", "first", "first_in_data_collection", "last_in_data_collection", "last")
_SNAPSHOT_FIELD = {
    "type": "string",
    "optional": True,
    "name": "io.debezium.data.Enum",
    "version": 1,
    "parameters": {"allowed": ",".join((*SNAPSHOT_MARKERS, "false", "incremental"))},
    "default": "false",
    "field": "snapshot",
}
_TRANSACTION_FIELD = _struct(
    _fields("id:string! total_order:int64! data_collection_order:int64!"),
    "event.block",
    True,
    "transaction",
    1,
)


def source_schema(connector_kind: str) -> dict[str, Any]:
    """The schema of a connector's `source` block."""
    fields = _fields("version:string! connector:string! name:string! ts_ms:int64!") + [_SNAPSHOT_FIELD]
    fields += _fields("db:string! sequence:string ts_us:int64 ts_ns:int64")
    fields += _fields(_SOURCE_FIELDS[connector_kind])
    return _struct(fields, f"io.debezium.connector.{connector_kind}.Source", False, "source")


def envelope_schema(table: Table) -> dict[str, Any]:
    """The value schema of a table's change events (`<topic>.Envelope`)."""
    row = [field_schema(c) for c in table.columns]
    fields = [
        _struct(row, f"{table.topic}.Value", True, "before"),
        _struct(row, f"{table.topic}.Value", True, "after"),
        source_schema(table.connector.kind),
        *_fields("op:string! ts_ms:int64 ts_us:int64 ts_ns:int64"),
        _TRANSACTION_FIELD,
    ]
    return _struct(fields, f"{table.topic}.Envelope", False, version=2)


# -- source blocks --------------------------------------------------------------
def _common_source(
    connector: Connector, ts_us: int, snapshot: str, sequence: str | None = None
) -> dict[str, Any]:
    return {
        "version": VERSION,
        "connector": connector.kind,
        "name": connector.name,
        "ts_ms": ts_us // 1000,
        "snapshot": snapshot,
        "db": connector.db,
        "sequence": sequence,
        "ts_us": ts_us,
        "ts_ns": ts_us * 1000,
    }


def sqlserver_lsn(position: int) -> str:
    """An SQL Server LSN (VLF:block:slot, lower-case hex, as Debezium prints it) from a number."""
    return f"{position >> 48:08x}:{(position >> 16) & 0xFFFFFFFF:08x}:{position & 0xFFFF:04x}"


def sqlserver_source(
    table: Table,
    commit_ms: int,
    commit_lsn: str,
    change_lsn: str | None,
    event_serial_no: int | None,
    snapshot: str = "false",
) -> dict[str, Any]:
    """SQL Server `source`: `ts_ms` is the commit time; snapshot rows have no change_lsn or serial."""
    return {
        **_common_source(table.connector, commit_ms * 1000, snapshot),
        "schema": table.schema,
        "table": table.name,
        "change_lsn": change_lsn,
        "commit_lsn": commit_lsn,
        "event_serial_no": event_serial_no,
    }


def postgresql_source(
    connector: Connector,
    commit_us: int,
    tx_id: int | None,
    lsn: int,
    last_commit_lsn: int | None,
    snapshot: str = "false",
    table: Table | None = None,
) -> dict[str, Any]:
    """PostgreSQL `source`: `sequence` is the JSON text `["<last commit lsn>","<lsn>"]`; a
    logical decoding message has no table (empty schema and table)."""
    sequence = dumps([None if last_commit_lsn is None else str(last_commit_lsn), str(lsn)])
    return {
        **_common_source(connector, commit_us, snapshot, sequence),
        "schema": table.schema if table else "",
        "table": table.name if table else "",
        "txId": tx_id,
        "lsn": lsn,
        "xmin": None,
        "origin": None,
        "origin_lsn": None,
    }


def mysql_source(
    table: Table,
    event_ms: int,
    file: str,
    pos: int,
    row: int,
    snapshot: str = "false",
    thread: int | None = None,
    server_id: int = 223344,
    gtid: str | None = None,
) -> dict[str, Any]:
    """MySQL and MariaDB `source`: binlog `file`, `pos` of the rows event and `row` within it;
    `event_ms` has whole seconds (the binlog's clock). MariaDB's streamed events carry the
    transaction's GTID (`domain-server-sequence`); snapshot rows have server id 0 and none."""
    return {
        **_common_source(table.connector, event_ms * 1000, snapshot),
        "table": table.name,
        "server_id": server_id,
        "gtid": gtid,
        "file": file,
        "pos": pos,
        "row": row,
        "thread": thread,
        "query": None,
    }


# -- keys, values, records ------------------------------------------------------
def _with_schema(schema: dict[str, Any], payload: Any, with_schema: bool) -> Any:
    return {"schema": schema, "payload": payload} if with_schema else payload


def key_message(table: Table, row: Row, with_schema: bool = True) -> dict[str, Any]:
    """The Kafka key of a row: its primary-key columns (`<topic>.Key`)."""
    payload = {c: row[c] for c in table.key}
    schema = _struct([field_schema(table.column(c)) for c in table.key], f"{table.topic}.Key", False)
    return _with_schema(schema, payload, with_schema)


def key_only_image(table: Table, row: Row) -> dict[str, Any]:
    """A delete's `before` under PostgreSQL REPLICA IDENTITY DEFAULT: the key columns, others null."""
    return {c: v if c in table.key else None for c, v in row.items()}


def change_value(
    table: Table,
    op: str,
    before: Row | None,
    after: Row | None,
    source: dict[str, Any],
    processed_ns: int,
    transaction: dict[str, Any] | None = None,
    with_schema: bool = True,
) -> dict[str, Any]:
    """A change event value: `op` c/u/d/r, or t (truncate: no before/after, written as nulls as
    JsonConverter does). `processed_ns` is when the connector processed it (payload ts_*)."""
    payload = {
        "before": None if before is None else dict(before),
        "after": None if after is None else dict(after),
        "source": source,
        "op": op,
        "ts_ms": processed_ns // 1_000_000,
        "ts_us": processed_ns // 1000,
        "ts_ns": processed_ns,
        "transaction": transaction,
    }
    return _with_schema(envelope_schema(table), payload, with_schema)


def transaction_block(transaction_id: str, total_order: int, data_collection_order: int) -> dict[str, Any]:
    """The `transaction` block (provide.transaction.metadata=true): 1-based orders within the
    transaction, overall and within the event's table."""
    return {"id": transaction_id, "total_order": total_order, "data_collection_order": data_collection_order}


def message_record(
    connector: Connector,
    prefix: str,
    content: bytes,
    source: dict[str, Any],
    processed_ns: int,
    with_schema: bool = True,
) -> Record:
    """A PostgreSQL logical decoding message (pg_logical_emit_message) on `<prefix>.message`:
    key `{"prefix"}`, value with `op` m and `message.content` as base64."""
    names = "io.debezium.connector.postgresql"
    key_schema = _struct(_fields("prefix:string"), f"{names}.MessageKey", False)
    message = _struct(_fields("prefix:string content:bytes"), f"{names}.Message", False, "message")
    value_fields = [*_fields("op:string! ts_ms:int64"), source_schema("postgresql"), message]
    value_schema = _struct(value_fields, f"{names}.MessageValue", False)
    payload = {
        "op": "m",
        "ts_ms": processed_ns // 1_000_000,
        "source": source,
        "message": {"prefix": prefix, "content": base64.b64encode(content).decode("ascii")},
    }
    return Record(
        connector.message_topic,
        _with_schema(key_schema, {"prefix": prefix}, with_schema),
        _with_schema(value_schema, payload, with_schema),
    )


def context_headers(connector: Connector, run_id: str) -> tuple[tuple[str, str], ...]:
    """The headers Debezium 3 adds to every record of a connector's task (changes, tombstones,
    schema change events; not transaction markers): its logical name (topic prefix), the task,
    the connector's kind and the id of the run (new at each start of the connector)."""
    return (
        (f"{CONTEXT_HEADER}connectorLogicalName", connector.name),
        (f"{CONTEXT_HEADER}taskId", "0"),
        (f"{CONTEXT_HEADER}connectorName", connector.kind),
        (f"{CONTEXT_HEADER}runId", run_id),
    )


def transaction_marker(
    connector: Connector,
    status: str,
    transaction_id: str,
    ts_ms: int,
    collections: Mapping[str, int] | None = None,
) -> Record:
    """A BEGIN or END record on `<prefix>.transaction` (provide.transaction.metadata=true): END
    has the transaction's event count and the count per table (`<db>.<table>`)."""
    common = "io.debezium.connector.common"
    key_schema = _struct(_fields("id:string!"), f"{common}.TransactionMetadataKey", False, version=1)
    collection = _struct(
        _fields("data_collection:string! event_count:int64!"), "event.collection", True, version=1
    )
    collections_field = {"type": "array", "items": collection, "optional": True, "field": "data_collections"}
    value_fields = [*_fields("status:string! id:string! event_count:int64"), collections_field]
    value_schema = _struct(
        [*value_fields, *_fields("ts_ms:int64!")], f"{common}.TransactionMetadataValue", False, version=1
    )
    payload = {
        "status": status,
        "id": transaction_id,
        "event_count": None if collections is None else sum(collections.values()),
        "data_collections": None
        if collections is None
        else [{"data_collection": c, "event_count": n} for c, n in collections.items()],
        "ts_ms": ts_ms,
    }
    return Record(
        connector.transaction_topic,
        {"schema": key_schema, "payload": {"id": transaction_id}},
        {"schema": value_schema, "payload": payload},
    )


def schema_change_record(
    table: Table, change_type: str, ddl: str, source: dict[str, Any], processed_ns: int
) -> Record:
    """A MySQL / MariaDB schema change event on the topic `<prefix>`: the DDL as run, and the
    table's structure after it in `tableChanges` (type CREATE, ALTER or DROP)."""
    connector, names = table.connector, f"io.debezium.connector.{table.connector.kind}"
    columns = [
        {
            "name": c.name,
            "typeName": c.kind.upper(),
            "position": position,
            "optional": c.optional,
            "scale": c.scale if c.kind == "decimal" else None,
        }
        for position, c in enumerate(table.columns, start=1)
    ]
    structure = {
        "defaultCharsetName": "utf8mb4",
        "primaryKeyColumnNames": list(table.key),
        "columns": columns,
    }
    change = {
        "type": change_type,
        "id": f'"{connector.db}"."{table.name}"',
        "table": None if change_type == "DROP" else structure,
    }
    key_schema = _struct(_fields("databaseName:string!"), f"{names}.SchemaChangeKey", False, version=1)
    value_fields = [
        source_schema(connector.kind),
        *_fields("ts_ms:int64! databaseName:string schemaName:string"),
    ]
    value_fields += _fields("ddl:string")
    change_schema = _struct(_fields("type:string! id:string!"), "io.debezium.connector.schema.Change", False)
    value_fields.append({"type": "array", "items": change_schema, "optional": False, "field": "tableChanges"})
    value_schema = _struct(value_fields, f"{names}.SchemaChangeValue", False, version=1)
    payload = {
        "source": source,
        "ts_ms": processed_ns // 1_000_000,
        "databaseName": connector.db,
        "schemaName": None,
        "ddl": ddl,
        "tableChanges": [change],
    }
    return Record(
        connector.schema_change_topic,
        {"schema": key_schema, "payload": {"databaseName": connector.db}},
        {"schema": value_schema, "payload": payload},
    )


def key_change_records(
    table: Table,
    old_key: Row,
    new_key: Row,
    delete_value: dict[str, Any],
    create_value: dict[str, Any],
    with_schema: bool = True,
) -> list[Record]:
    """A primary-key update as the SQL Server, PostgreSQL and MariaDB connectors send it: the
    delete of the old key (header `__debezium.newkey`), its tombstone, the create of the new key
    (header `__debezium.oldkey`), at one source position. Header values are the keys' JSON
    without schema."""
    old, new = key_message(table, old_key, with_schema), key_message(table, new_key, with_schema)
    old_text, new_text = dumps(key_message(table, old_key, False)), dumps(key_message(table, new_key, False))
    return [
        Record(table.topic, old, delete_value, ((NEW_KEY_HEADER, new_text),)),
        Record(table.topic, old, None),
        Record(table.topic, new, create_value, ((OLD_KEY_HEADER, old_text),)),
    ]


def dumps(value: Any) -> str:
    """Compact JSON with non-ASCII characters as they are, as Jackson (JsonConverter) writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit int."""
    mask, m = 0xFFFFFFFF, 0x5BD1E995
    h = (0x9747B28C ^ len(data)) & mask
    whole = len(data) & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little") * m & mask
        k = (k ^ (k >> 24)) * m & mask
        h = (h * m & mask) ^ k
    if len(data) & 3:
        h ^= int.from_bytes(data[whole:], "little")
        h = h * m & mask
    h = (h ^ (h >> 13)) * m & mask
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a keyed record."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


@dataclass(frozen=True, slots=True)
class SentRecord:
    """A record as it goes out: its key and value serialized to the JSON text Kafka carries (None:
    no key, or a tombstone), its headers and its Kafka timestamp. A generated run keeps these
    texts rather than the records' objects until it delivers them: about 0.4 of the memory, so
    that millions of records fit (docs/benchmarks.md)."""

    topic: str
    key: str | None
    value: str | None
    headers: tuple[tuple[str, str], ...]
    ts_ms: int

    @classmethod
    def of(cls, record: Record, ts_ms: int) -> SentRecord:
        key = None if record.key is None else dumps(record.key)
        value = None if record.value is None else dumps(record.value)
        return cls(record.topic, key, value, record.headers, ts_ms)


def kcat_record(record: SentRecord, partition: int, offset: int) -> dict[str, Any]:
    """The record as one `kcat -C -J` line: key and payload are the serialized JSON as strings
    (null for no key / a tombstone); headers in kcat's flat list form, null when none."""
    return {
        "topic": record.topic,
        "partition": partition,
        "offset": offset,
        "tstype": "create",
        "ts": record.ts_ms,
        "broker": 1,
        "headers": [text for pair in record.headers for text in pair] or None,
        "key": record.key,
        "payload": record.value,
    }
