"""The scripted workload of the real-producer end-to-end test (tests/e2e/test_real_producers.py),
for PostgreSQL and for MariaDB (tests/helpers/real_servers.py), and each database's tables read
back as text in the contract's spellings, to compare gold with.

A :class:`Workload` has set-up SQL (tables and rows that exist before the Debezium connector
starts, so its initial snapshot sends them) and steps: each step is one committed transaction
(or one DDL statement). :meth:`Workload.run` executes the steps and reads every table after
each one, so the test knows each key's sequence of committed states (:func:`key_histories`)
as well as the tables' final rows.

What the PostgreSQL workload covers: inserts, updates, a primary-key change, deletes, a
truncate followed by a key the truncate removed, a multi-row transaction across tables, a
column added mid-stream, a TOASTed value left unchanged by an update (table ``docs``, REPLICA
IDENTITY DEFAULT: updates without a before image, deletes with only the key), numeric with
and without a declared scale, date, time, timestamp with and without time zone, interval,
uuid, json, jsonb, arrays, an enum, bytea and boolean. Every other table has REPLICA
IDENTITY FULL. MariaDB: the same operations (no TOAST, interval or arrays there), its own
types (BOOLEAN = TINYINT(1), DATETIME(6) and DATETIME, TIMESTAMP(6), UUID, JSON, ENUM,
VARBINARY, BLOB) and a multi-row UPDATE statement (several rows of one binlog event).

Rows are read with SQL that renders each value as text in the spellings of docs/contract.md: integers
``105``; decimals plain with their scale ``12.50``; booleans ``true``/``false``; dates
``yyyy-MM-dd``; timestamps ``yyyy-MM-dd HH:mm:ss[.ffffff]`` in UTC (fraction without
trailing zeros); binary as base64. For the types the contract does not name, the spelling is
what the models make of what Debezium sends with its default settings (docs/real_producers.md
has the table):

- time: ``HH:mm:ss[.ffffff]``;
- PostgreSQL interval: Debezium's default ``interval.handling.mode=numeric`` sends
  ``io.debezium.time.MicroDuration``, a number of microseconds that counts a month as 30.4375
  days (365.25 / 12) and a day as 24 hours; gold keeps that number as text
  (``1 mon`` → ``2629800000000``), and the database side computes the same number from the
  interval's months, days and time;
- uuid: lower-case text; json: the text as stored (json keeps it as written, jsonb in
  PostgreSQL's normalized form, MariaDB's JSON is LONGTEXT); enum: the label;
- PostgreSQL arrays: a JSON array (``["x","y z",null]``), as Debezium sends them;
- MariaDB BOOLEAN: MariaDB has no boolean type (BOOLEAN is TINYINT(1)) and reports ``1`` /
  ``0``, and Debezium sends an int16 with nothing to tell it from any other TINYINT, so gold
  says ``1`` / ``0`` as the database does.

A column added mid-stream (``ALTER TABLE ... ADD COLUMN``, nullable, no default) is not in
the row images of rows that no change has touched since: gold's row_data has no entry for it
there, where the database says NULL. :meth:`Workload.comparable` drops such a column from a
row when its value is NULL, on both sides, and only for the columns the workload added.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

Row = dict[str, str | None]  # column -> value as text (None: SQL NULL)
Key = tuple[tuple[str, str | None], ...]  # sorted (key column, value) pairs
Tables = dict[str, dict[Key, Row]]  # table_id -> key -> row
Version = tuple[str, bool, Row]  # operation, is_deleted, row_data: one version of a key in gold.cdc_history

TEMPORAL_TYPES = {
    # PostgreSQL (information_schema data_type)
    "time without time zone",
    "timestamp without time zone",
    "timestamp with time zone",
    # MariaDB
    "time",
    "datetime",
    "timestamp",
}
SENTINEL_TABLE = "workload_done"  # the last step writes one row here: once it is in Kafka, all is


class Database(Protocol):
    database: str

    def sql(self, statements: str, database: str | None = None) -> str: ...


@dataclass(frozen=True)
class Step:
    """One committed transaction (or DDL statement) of a workload."""

    name: str
    sql: str

    @property
    def truncates(self) -> bool:
        """Whether the rows this step removes go by TRUNCATE (else by DELETE)."""
        return self.sql.lstrip().lower().startswith("truncate")


@dataclass
class Workload:
    """A database's scripted workload and how to read its tables back as text."""

    kind: str  # postgresql | mariadb
    setup: str  # before the connector starts: its initial snapshot sends these rows
    steps: list[Step]
    added_columns: dict[str, set[str]]  # table -> columns an ALTER adds mid-stream
    read: Callable[[Database], Tables]
    # table -> JSON columns whose key order is the connector's (hstore): compared with sorted keys
    unordered_json: dict[str, set[str]] = field(default_factory=dict)
    captures: list[Tables] = field(default_factory=list)  # the tables before the first step, then after each

    def prepare(self, database: Database) -> None:
        """Create the tables and the rows the snapshot will send; read them (the first capture)."""
        database.sql(self.setup)
        self.captures = [self.read(database)]

    def run(self, database: Database) -> None:
        """Execute every step in order (each committed), reading every table after each."""
        for step in self.steps:
            database.sql(step.sql)
            self.captures.append(self.read(database))

    @property
    def final(self) -> Tables:
        return self.captures[-1]

    def comparable(self, table_id: str, row: Mapping[str, str | None]) -> Row:
        """`row` without the NULL values of columns added mid-stream (see the module's doc), with
        the JSON of `unordered_json` columns in one key order."""
        table = table_id.rsplit(".", 1)[-1]
        added = self.added_columns.get(table, set())
        unordered = self.unordered_json.get(table, set())
        return {
            c: json_canonical(v) if c in unordered and v is not None else v
            for c, v in row.items()
            if not (c in added and v is None)
        }

    def histories(self) -> dict[str, dict[Key, list[Version]]]:
        """table_id -> key -> the key's committed states in order, as gold.cdc_history should hold
        them (see :func:`key_histories`)."""
        return key_histories(self.captures, [step.truncates for step in self.steps], self.comparable)


def key_histories(
    captures: list[Tables],
    truncates: list[bool],
    comparable: Callable[[str, Mapping[str, str | None]], Row],
) -> dict[str, dict[Key, list[Version]]]:
    """Each key's versions from consecutive captures of the tables (the first one before the
    snapshot, then one after each step; `truncates[i]`: step i removes rows by TRUNCATE): a
    version wherever its row differs from the one before: `snapshot` for the rows of the first
    capture, `insert` for a new key, `update` for a changed row, `delete` (or `truncate`) for a
    row that is gone, with its last image."""
    result: dict[str, dict[Key, list[Version]]] = {}
    previous: Tables = {}
    for number, capture in enumerate(captures):
        for table_id in sorted(set(previous) | set(capture)):
            before, after = previous.get(table_id, {}), capture.get(table_id, {})
            versions = result.setdefault(table_id, {})
            for key in sorted(set(before) | set(after), key=str):
                old = comparable(table_id, before[key]) if key in before else None
                new = comparable(table_id, after[key]) if key in after else None
                if new is not None and new != old:
                    operation = "snapshot" if number == 0 else "insert" if old is None else "update"
                    versions.setdefault(key, []).append((operation, False, new))
                elif new is None and old is not None:
                    operation = "truncate" if truncates[number - 1] else "delete"
                    versions.setdefault(key, []).append((operation, True, old))
        previous = capture
    return result


def key_of(primary_key: Mapping[str, str | None]) -> Key:
    return tuple(sorted(primary_key.items()))


def _trim_fraction(text: str) -> str:
    """`12:00:00.500000` → `12:00:00.5`; `12:00:00.000000` → `12:00:00`."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def keyed_steps(now: str) -> list[Step]:
    """The first steps of both workloads, on customers: an insert (`now`: the database's current
    time with microseconds), an update, a primary-key change and a delete."""
    return [
        Step("insert", f"insert into customers values (4, 'Dee', 99.99, true, '1985-06-15', {now});"),
        Step("update", "update customers set name = 'Bobby', balance = 7.25, active = true where id = 2;"),
        Step("primary-key change", "update customers set id = 10 where id = 1;"),
        Step("delete", "delete from customers where id = 3;"),
    ]


def closing_steps(truncate: str, text_type: str) -> list[Step]:
    """The last steps of both workloads: `truncate` of events and an insert of a key it removed,
    a column of type `text_type` added to customers, an update and an insert that set it and an
    update that leaves it null, then the sentinel row."""
    return [
        Step("truncate", truncate),
        Step(
            "insert after the truncate",
            "insert into events values (1, 'reopen', '2025-02-01 00:00:00'), (4, 'new', null);",
        ),
        Step("add a column", f"alter table customers add column note {text_type};"),
        Step("update the added column", "update customers set note = 'vip' where id = 2;"),
        Step(
            "insert with the added column",
            "insert into customers values (6, 'Fay', 0, false, null, null, 'new');",
        ),
        Step("update leaving the added column null", "update customers set name = 'Dee Dee' where id = 4;"),
        Step("sentinel", f"insert into {SENTINEL_TABLE} values (1, 'done');"),
    ]


Normalize = Callable[[str], str]


def _rows(
    table_id: str,
    columns: list[tuple[str, str, bool]],
    objects: list[dict[str, Any]],
    normalizers: Mapping[str, Normalize] | None = None,
) -> dict[Key, Row]:
    """Rows read as JSON objects of text values, keyed by their primary key columns; the values
    of the columns in `normalizers` pass through their function (the text the database prints →
    the normal form gold keeps, docs/real_producers.md)."""
    temporal = {name for name, data_type, _ in columns if data_type in TEMPORAL_TYPES}
    normalizers = normalizers or {}
    key_columns = [name for name, _, is_key in columns if is_key]
    assert key_columns, f"{table_id} has no primary key"
    rows: dict[Key, Row] = {}
    for found in objects:
        row: Row = {}
        for name, _, _ in columns:
            value = found[name]
            if value is not None and name in normalizers:
                value = normalizers[name](value)
            elif value is not None and name in temporal:
                value = _trim_fraction(value)
            row[name] = value
        rows[key_of({c: row[c] for c in key_columns})] = row
    return rows


# -- normal forms: the database's text → gold's text (docs/real_producers.md, "Type by type") --
def float_text(value: float) -> str:
    """The shortest decimal that reads back as the same double, an integral one without `.0`."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _single(value: float) -> float | None:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return None


def float32_text(value: float) -> str:
    """The shortest decimal that reads back as the same single-precision value."""
    single = _single(value)
    if single is None or single != single or single in (float("inf"), float("-inf")):
        return float_text(value)
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if _single(float(text)) == single:
            return float_text(float(text))
    return float_text(single)


def bits_number(text: str) -> str:
    """A bit string (`0000000001`) as its unsigned number (`1`)."""
    return str(int(text, 2)) if text else "0"


def utc_time(text: str) -> str:
    """PostgreSQL's `timetz` at time zone UTC (`11:45:30.5+00`) as Debezium's ZonedTime (`11:45:30.5Z`)."""
    assert text.endswith("+00"), text
    return text[:-3] + "Z"


def point_text(text: str) -> str:
    """`(x,y)` with both numbers in float_text's spelling."""
    x, y = text.strip("()").split(",")
    return f"({float_text(float(x))},{float_text(float(y))})"


def json_canonical(text: str) -> str:
    """A JSON text with its keys sorted, compact: for values whose key order is the connector's."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# -- Every type of the connectors' type tables (docs/real_producers.md, "Type by type") ------
# (column, SQL type, literals): one row per position in the literals (the extremes first), plus a
# row of NULLs; the snapshot sends the rows the set-up inserts, the stream the same values again.
TypeColumn = tuple[str, str, list[str]]
ALL_TYPES_TABLE = "all_types"

PG_ALL_TYPES: list[TypeColumn] = [
    ("b1", "bit(1)", ["B'1'", "B'0'"]),
    ("b10", "bit(10)", ["B'1111111111'", "B'0000000000'", "B'0000000001'"]),
    ("vb", "bit varying(16)", ["B'1010'", "B''", "B'0000000000000001'"]),
    ("bo", "boolean", ["true", "false"]),
    ("i2", "smallint", ["32767", "-32768", "0"]),
    ("i4", "integer", ["2147483647", "-2147483648", "42"]),
    ("i8", "bigint", ["9223372036854775807", "-9223372036854775808", "9007199254740993"]),
    ("s2", "smallserial", ["32767", "1", "5"]),
    ("s4", "serial", ["2147483647", "1", "7"]),
    ("s8", "bigserial", ["9223372036854775807", "1", "9"]),
    ("oi", "oid", ["4294967295", "0", "12345"]),
    ("f4", "real", ["3.4028235e38", "-1.4e-45", "0.1", "'NaN'", "'-Infinity'", "'-0'"]),
    ("f8", "double precision", ["1.7976931348623157e308", "-5e-324", "100", "'Infinity'", "'NaN'", "0.1"]),
    (
        "nu",
        "numeric",
        [
            "12345678901234567890123456789012345678901234567890.123456789",
            "-0.000000000000000000001",
            "0",
            "100",
            "3.14159",
        ],
    ),
    ("n2", "numeric(10,3)", ["9999999.999", "-9999999.999", "1.5", "0"]),
    # The connector reads money through a double: exact to 15 significant digits (the type's own
    # extremes, ±92233720368547758.07, arrive rounded; docs/real_producers.md).
    ("mo", "money", ["9999999999999.99", "-9999999999999.99", "12.34"]),
    ("c3", "character(3)", ["'ab'", "'Zoë'", "''"]),
    ("vc", "character varying(20)", ["'Zoë 🙂'", "E'line\\u2028sep'", "''"]),
    ("tx", "text", ["E'tab\\there'", "E'quote\"\\\\back'", "'x'"]),
    ("by", "bytea", ["'\\x00ff'", "'\\x'", "'\\xdeadbeef'"]),
    ("dt", "date", ["'9999-12-31'", "'0001-01-01'", "'2024-02-29'"]),
    ("t3", "time(3)", ["'23:59:59.999'", "'00:00:00'", "'12:00:00.5'"]),
    ("t6", "time(6)", ["'24:00:00'", "'00:00:00'", "'23:59:59.999999'"]),
    ("tz", "time(6) with time zone", ["'23:59:59.999999-12'", "'00:00:00+14'", "'12:00+05:30'"]),
    (
        "ts3",
        "timestamp(3)",
        ["'9999-12-31 23:59:59.999'", "'0001-01-01 00:00:00'", "'1969-12-31 23:59:59.999'"],
    ),
    (
        "ts6",
        "timestamp(6)",
        ["'9999-12-31 23:59:59.999999'", "'0001-01-01 00:00:00.000001'", "'2024-02-29 12:00:00'"],
    ),
    (
        "tst",
        "timestamp(6) with time zone",
        ["'9999-12-31 23:59:59.999999+00'", "'0001-01-01 00:00:00+00'", "'2024-03-31 01:30:00+01'"],
    ),
    (
        "iv",
        "interval",
        [
            "'178000000 years'",
            "'-178000000 years'",
            "'1 year 2 mons 3 days 04:05:06.789'",
            "'-3 days +04:00:00'",
            "'-1 year -2 mons +3 days -04:05:06.000001'",
            "'00:00:00.000001'",
        ],
    ),
    (
        "uu",
        "uuid",
        [
            "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
            "'00000000-0000-0000-0000-000000000000'",
            "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'",
        ],
    ),
    ("js", "json", ['\'{"b": 1, "a": [1,2]}\'', "'[]'", "'null'", "'\"Zoë\"'"]),
    (
        "jb",
        "jsonb",
        ['\'{"z": null, "a": {"b": [true, 1.50]}}\'', "'{}'", "'null'", "'12345678901234567890.123'"],
    ),
    ("xm", "xml", ["'<a>x</a>'", "'<b/>'", "'text'"]),
    ("ip", "inet", ["'192.168.0.1/24'", "'::1'", "'2001:db8::ff00:42:8329'"]),
    ("ci", "cidr", ["'10.0.0.0/8'", "'::/0'", "'2001:db8::/32'"]),
    ("ma", "macaddr", ["'ff:ff:ff:ff:ff:ff'", "'00:00:00:00:00:00'", "'08:00:2b:01:02:03'"]),
    (
        "m8",
        "macaddr8",
        ["'ff:ff:ff:ff:ff:ff:ff:ff'", "'00:00:00:00:00:00:00:00'", "'08:00:2b:01:02:03:04:05'"],
    ),
    ("r4", "int4range", ["'[1,10)'", "'empty'", "'(,5]'"]),
    ("r8", "int8range", ["'[-9223372036854775808,9223372036854775807)'", "'empty'", "'[1,)'"]),
    ("rn", "numrange", ["'(1.5,2.5]'", "'empty'", "'(,)'"]),
    ("rs", "tsrange", ["'[2024-01-01,2024-02-01)'", "'empty'", "'(,2024-01-01 00:00:00.5]'"]),
    ("rz", "tstzrange", ["'[2024-01-01 00:00+00,)'", "'empty'"]),
    ("rd", "daterange", ["'[2024-01-01,2024-02-01)'", "'empty'", "'(,2024-01-01]'"]),
    ("pt", "point", ["'(1.5,2)'", "'(-1e+30,0)'", "'(0,-0.000001)'"]),
    ("lt", "ltree", ["'a.b.c'", "'Top'", "''"]),
    ("cx", "citext", ["'MiXed'", "'Zoë'"]),
    ("hs", "hstore", ['\'"a"=>"1", "b"=>NULL\'', "''", '\'"k"=>"Zoë"\'']),
    ("en", "mood", ["'happy'", "'sad'"]),
    ("dm", "posint", ["2147483647", "1"]),
    ("ta", "text[]", ["array['x', 'y z', null, 'q\"', 'Zoë']", "'{}'", "array['back\\slash']"]),
    ("ia", "int[]", ["'{1,NULL,3}'", "'{}'", "'{-2147483648,2147483647}'"]),
    ("ba", "bigint[]", ["'{9223372036854775807}'", "'{}'"]),
    ("ua", "uuid[]", ["'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'", "'{}'"]),
    ("la", "boolean[]", ["'{true,false,NULL}'", "'{}'"]),
    ("tv", "tsvector", ["'a fat cat'", "''"]),
]

MARIADB_GEOMETRY_TYPES = (
    "geometry",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
)
MARIADB_ALL_TYPES: list[TypeColumn] = [
    ("b1", "bit(1)", ["b'1'", "b'0'"]),
    ("b10", "bit(10)", ["b'1111111111'", "b'0'", "b'1'"]),
    ("b64", "bit(64)", ["b'" + "1" * 64 + "'", "b'0'", "b'1" + "0" * 62 + "1'"]),
    ("bo", "boolean", ["true", "false"]),
    ("ti", "tinyint", ["127", "-128", "0"]),
    ("tiu", "tinyint unsigned", ["255", "0"]),
    ("si", "smallint", ["32767", "-32768"]),
    ("siu", "smallint unsigned", ["65535", "0"]),
    ("mi", "mediumint", ["8388607", "-8388608"]),
    ("miu", "mediumint unsigned", ["16777215", "0"]),
    ("i4", "int", ["2147483647", "-2147483648"]),
    ("iu", "int unsigned", ["4294967295", "0"]),
    ("i8", "bigint", ["9223372036854775807", "-9223372036854775808"]),
    ("biu", "bigint unsigned", ["18446744073709551615", "0", "9223372036854775808"]),
    # The snapshot reads a FLOAT with 6 significant digits (the stream exactly): values of 6 digits.
    ("fl", "float", ["3.4e38", "-1.17549e-38", "0.5", "0.1"]),
    ("db", "double", ["1.7976931348623157e308", "-2.2250738585072014e-308", "0.1", "100"]),
    ("re", "real", ["1e-300", "-1e300"]),
    (
        "dc",
        "decimal(65,30)",
        [
            "99999999999999999999999999999999999.999999999999999999999999999999",
            "-99999999999999999999999999999999999.999999999999999999999999999999",
            "0.000000000000000000000000000001",
        ],
    ),
    ("d0", "decimal(10,0)", ["9999999999", "-9999999999", "0"]),
    ("nm", "numeric(5,2)", ["999.99", "-999.99"]),
    ("ch", "char(3)", ["'ab'", "'Zoë'", "''"]),
    ("vc", "varchar(100)", ["'Zoë 🙂'", "''", "'tab\\tnl\\n'"]),
    ("bn", "binary(3)", ["x'ffffff'", "x''", "x'0102'"]),
    ("vb", "varbinary(10)", ["x'00ff'", "x''"]),
    ("tb", "tinyblob", ["x'ff'", "x''"]),
    ("tt", "tinytext", ["'tiny'", "''"]),
    ("bl", "blob", ["x'deadbeef'"]),
    ("tx", "text", ["'Zoë'", "''"]),
    ("mb", "mediumblob", ["x'00'"]),
    ("mt", "mediumtext", ["'medium'"]),
    ("lb", "longblob", ["x'0a0d09'"]),
    ("lt", "longtext", ["'long 🙂'"]),
    ("js", "json", ["'{\"a\": 1}'", "'[]'", "'null'"]),
    ("en", "enum('sad','ok','happy')", ["'happy'", "'sad'"]),
    ("st", "set('a','b','c')", ["'a,b,c'", "''", "'a,c'"]),
    ("yr", "year", ["2155", "1901", "2024"]),
    ("dt", "date", ["'9999-12-31'", "'0001-01-01'", "'1000-01-01'"]),
    ("t6", "time(6)", ["'838:59:59.000000'", "'-838:59:59.000000'", "'-01:30:00.250000'", "'00:00:00'"]),
    ("t0", "time", ["'838:59:59'", "'-838:59:59'", "'-00:00:01'"]),
    (
        "d6",
        "datetime(6)",
        ["'9999-12-31 23:59:59.999999'", "'0001-01-01 00:00:00'", "'1000-01-01 00:00:00.000001'"],
    ),
    ("d0t", "datetime", ["'9999-12-31 23:59:59'", "'1000-01-01 00:00:00'"]),
    ("ts", "timestamp(6) null", ["'2038-01-19 03:14:07.999999'", "'1970-01-01 00:00:01'"]),
    ("uu", "uuid", ["'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'00000000-0000-0000-0000-000000000000'"]),
    ("pt", "point", ["ST_GeomFromText('POINT(1.5 2)')", "ST_GeomFromText('POINT(-1e30 0)')"]),
    ("ge", "geometry", ["ST_GeomFromText('LINESTRING(0 0,1 1)')", "ST_GeomFromText('POINT(1 2)', 4326)"]),
    ("ls", "linestring", ["ST_GeomFromText('LINESTRING(0 0,1 1,2 0)')"]),
    ("pg", "polygon", ["ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))')"]),
    ("mp", "multipoint", ["ST_GeomFromText('MULTIPOINT(0 0,1 1)')"]),
    ("ml", "multilinestring", ["ST_GeomFromText('MULTILINESTRING((0 0,1 1),(2 2,3 3))')"]),
    ("my", "multipolygon", ["ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))')"]),
    ("gc", "geometrycollection", ["ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))')"]),
]


def all_types_rows(columns: list[TypeColumn], first_id: int, replace: Mapping[str, str] | None = None) -> str:
    """The rows of the all-types table as one INSERT: a row per position of the literals (a
    shorter list gives NULL, or a serial column its default), then a row of NULLs; ids from
    `first_id`; each key of `replace` in a literal replaced by its value."""
    count = max(len(literals) for _, _, literals in columns)
    rows = []
    for position in range(count + 1):
        values = [
            literals[position]
            if position < len(literals)
            else "default"  # a serial column is NOT NULL: its sequence's next value
            if sql_type.endswith("serial")
            else "null"
            for _, sql_type, literals in columns
        ]
        for old, new in (replace or {}).items():
            values = [value.replace(old, new) for value in values]
        rows.append(f"({first_id + position}, {', '.join(values)})")
    names = ", ".join(name for name, _, _ in columns)
    return f"insert into {ALL_TYPES_TABLE} (id, {names}) values\n  " + ",\n  ".join(rows) + ";\n"


def all_types_table(columns: list[TypeColumn], options: str = "") -> str:
    body = ", ".join(f"{name} {sql_type}" for name, sql_type, _ in columns)
    return f"create table {ALL_TYPES_TABLE} (id int primary key, {body}){options};\n"


def all_types_steps(columns: list[TypeColumn], update: str) -> list[Step]:
    """Streamed: the same rows again (ids from 101), an update of row 101 to row 2's values
    (`update`: the database's statement, with {names} and {pairs}), and a delete."""
    names = ", ".join(name for name, _, _ in columns)
    pairs = ", ".join(f"a.{name} = b.{name}" for name, _, _ in columns)
    return [
        Step("every type inserted", all_types_rows(columns, 101)),
        Step("every type updated", update.format(names=names, pairs=pairs)),
        Step("a row of every type deleted", f"delete from {ALL_TYPES_TABLE} where id = 102;"),
    ]


# -- PostgreSQL -----------------------------------------------------------------------------
# The SQL that renders a column as text, by information_schema's data_type (else `::text`), and
# what turns that text into gold's normal form (PG_NORMAL).
PG_TEXT = {
    "boolean": "{c}::text",
    "date": "to_char({c}, 'YYYY-MM-DD')",
    "time without time zone": "{c}::text",
    "timestamp without time zone": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "timestamp with time zone": "to_char({c} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')",
    "time with time zone": "({c} at time zone 'UTC')::text",
    "interval": "{c}::text",  # IntervalStyle postgres: `1 year 2 mons 3 days 04:05:06.789`
    "money": "{c}::numeric::text",
    "character": "{c}",  # as stored, blank-padded (a cast to text would trim the padding)
    # The type's output function, as the connector reads them (text() would add a host's /32, /128)
    "inet": "{c}",
    "cidr": "{c}",
    "bytea": "translate(encode({c}, 'base64'), E'\\n', '')",
    "ARRAY": "array_to_json({c})::text",
    "hstore": "hstore_to_json({c})::text",
}
PG_NORMAL: dict[str, Normalize] = {
    "real": lambda text: float32_text(float(text)),
    "double precision": lambda text: float_text(float(text)),
    "bit varying": bits_number,
    "time with time zone": utc_time,
    "point": point_text,
}


def _pg_column(data_type: str, udt_name: str, length: str) -> tuple[str, Normalize | None]:
    """The SQL rendering a column and the function giving gold's normal form of that text."""
    if data_type == "bit":  # bit(1) is a boolean to Debezium; longer bit strings a number
        if length == "1":
            return "({c} = B'1')::text", None
        return "{c}::text", bits_number
    key = udt_name if data_type == "USER-DEFINED" else data_type
    return PG_TEXT.get(key, "{c}::text"), PG_NORMAL.get(key)


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_postgres(database: Database, schema: str = "public") -> Tables:
    """Every table of `schema`: its rows, each value as text in the contract's spelling."""
    listing = database.sql(
        f"""
        select c.table_name, c.column_name, c.data_type, c.udt_name,
               coalesce(c.character_maximum_length::text, ''),
               exists (
                 select from information_schema.table_constraints t
                 join information_schema.key_column_usage k
                   on k.constraint_schema = t.constraint_schema and k.constraint_name = t.constraint_name
                 where t.constraint_type = 'PRIMARY KEY' and t.table_schema = c.table_schema
                   and t.table_name = c.table_name and k.column_name = c.column_name
               )
        from information_schema.columns c
        join information_schema.tables t using (table_schema, table_name)
        where c.table_schema = '{schema}' and t.table_type = 'BASE TABLE'
        order by c.table_name, c.ordinal_position
        """
    )
    tables: dict[str, list[tuple[str, str, bool]]] = {}
    renderings: dict[str, dict[str, tuple[str, Normalize | None]]] = {}
    for line in listing.splitlines():
        table, column, data_type, udt_name, length, is_key = line.split("|")
        tables.setdefault(table, []).append((column, data_type, is_key == "t"))
        renderings.setdefault(table, {})[column] = _pg_column(data_type, udt_name, length)
    if not tables:
        return {}
    queries = []
    for table, columns in tables.items():
        values = ", ".join(
            f"{renderings[table][name][0].format(c=_pg_ident(name))} as {_pg_ident(name)}"
            for name, _, _ in columns
        )
        queries.append(
            f"select '{table}', row_to_json(r)::text from "
            f"(select {values} from {_pg_ident(schema)}.{_pg_ident(table)}) r;"
        )
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in tables}
    # Lines end at "\n" only: a value may hold U+2028, which splitlines() would break at.
    for line in filter(None, database.sql("\n".join(queries)).split("\n")):
        table, _, text = line.partition("|")
        found[table].append(json.loads(text))
    return {
        f"{database.database}.{schema}.{table}".lower(): _rows(
            table,
            columns,
            found[table],
            {c: normal for c, (_, normal) in renderings[table].items() if normal is not None},
        )
        for table, columns in tables.items()
    }


# The PostgreSQL connector's snapshot reads timestamps through JDBC's hybrid Julian/Gregorian
# calendar: one before 1582-10-15 arrives shifted (0001-01-01 00:00 as 0000-12-30, which gold
# quarantines; docs/real_producers.md). The snapshot's rows take year 1583 there; the streamed
# rows keep year 1 (the stream's values are exact).
PG_SNAPSHOT_SAFE = {"'0001-01-01 00:00:00": "'1583-01-01 00:00:00"}


def _pg_big_text(seed: int) -> str:
    """SQL for about 10 kB of hex text: beyond the TOAST threshold, stored out of line."""
    return f"(select string_agg(md5(({seed} * 1000 + i)::text), '') from generate_series(1, 320) i)"


def _pg_big_row(seed: int) -> str:
    """SQL for the large values of a docs row: body, tags, nums, blobby and meta, each beyond the
    TOAST threshold."""
    return ", ".join(
        [
            _pg_big_text(seed),
            f"(select array_agg(md5(({seed} * 1000 + i)::text)) from generate_series(1, 400) i)",
            f"(select array_agg({seed} * 10000 + i) from generate_series(1, 3000) i)",
            f"convert_to({_pg_big_text(seed + 100)}, 'UTF8')",
            f"to_jsonb({_pg_big_text(seed + 200)})",
        ]
    )


def _pg_external(table: str) -> str:
    """SQL storing the large columns of a docs table out of line, uncompressed."""
    return "\n".join(
        f"alter table {table} alter column {column} set storage external;"
        for column in ("body", "tags", "nums", "blobby", "meta")
    )


POSTGRES_SETUP = (
    f"""
create type mood as enum ('sad', 'ok', 'happy');

create table customers (
  id int primary key, name text, balance numeric(12, 2), active boolean, born date,
  updated_at timestamptz
);
alter table customers replica identity full;
insert into customers values
  (1, 'Ann', 12.50, true, '1990-01-31', '2025-03-14 12:00:00+00'),
  (2, 'Bob', -3.00, false, null, '2025-03-14 12:00:00.25+01'),
  (3, 'Cy', 0.10, true, '2001-12-01', null);

create table typed (
  id int primary key, amount numeric(12, 2), ratio numeric, big bigint, small smallint,
  flag boolean, born date, at_time time(6), ts timestamp(6), tstz timestamptz, span interval,
  uid uuid, doc json, docb jsonb, tags text[], nums int[], feeling mood, blob bytea
);
alter table typed replica identity full;
insert into typed values
  (1, 12.5, 3.14159, 9007199254740993, -5, true, '1999-12-31', '13:45:30.123456',
   '2024-02-29 23:59:59.5', '2024-02-29 23:59:59.5+02', '1 year 2 mons 3 days 04:05:06.789',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"b": 1, "a": [1,2]}}', '{{"b": 1, "a": [1,2]}}',
   array['x', 'y z', null, 'q"', 'Zoë'], array[1, 2], 'ok', '\\xdeadbeef'),
  (2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
   null, null);

-- REPLICA IDENTITY DEFAULT: updates have no before image, deletes only the key. The large
-- columns are stored out of line uncompressed (TOAST), so an update that leaves them alone does
-- not send them (Debezium sends its placeholder, in the form of each column's type).
create table docs (id int primary key, title text, body text, tags text[], nums int[], blobby bytea,
  meta jsonb);
{_pg_external("docs")}
insert into docs values (1, 'first', {_pg_big_row(1)}), (2, 'second', {_pg_big_row(2)}),
  (3, 'third', 'short', '{{a}}', '{{1}}', '\\x00', '{{}}');

-- The same with REPLICA IDENTITY FULL: every before image whole, TOASTed values included.
create table docs_full (id int primary key, title text, body text, tags text[], nums int[], blobby bytea,
  meta jsonb);
alter table docs_full replica identity full;
{_pg_external("docs_full")}
insert into docs_full values (1, 'first', {_pg_big_row(4)}), (2, 'second', {_pg_big_row(5)});

create table events (id int primary key, kind text, at timestamp(6));
alter table events replica identity full;
insert into events values (1, 'open', '2025-01-01 08:00:00'), (2, 'click', '2025-01-01 08:00:01.000001'),
  (3, 'close', null);

create table {SENTINEL_TABLE} (id int primary key, note text);
alter table {SENTINEL_TABLE} replica identity full;

create extension hstore;
create extension citext;
create extension ltree;
create domain posint as int check (value > 0);
"""
    + all_types_table(PG_ALL_TYPES)
    + "alter table all_types replica identity full;\n"
    + all_types_rows(PG_ALL_TYPES, 1, PG_SNAPSHOT_SAFE)
)

POSTGRES_STEPS = [
    *keyed_steps(now="now()"),
    Step(
        "multi-row transaction",
        """
        begin;
        insert into customers values (5, 'Eve', 1000000000.01, null, '1969-07-20', '1969-07-20 20:17:40+00');
        update customers set balance = balance + 1, born = '2000-02-29' where id in (4, 10);
        delete from events where id = 3;
        insert into typed (id, amount, ratio) values (3, -0.01, 100);
        commit;
        """,
    ),
    Step(
        "typed update",
        """
        update typed set ratio = 0.000015, span = '-3 days 04:00', tags = '{}', nums = array[-1],
          flag = false, blob = '', doc = '[]', docb = '{"z": null, "a": {"b": [true, 1.50]}}',
          tstz = '1969-07-20 20:17:40.000001-05', ts = '1969-12-31 23:59:59.999999',
          born = '0001-01-01', at_time = '00:00:00', feeling = 'happy', small = 32767
        where id = 1;
        """,
    ),
    Step(
        "typed insert",
        """
        insert into typed values
          (4, -0.05, 123456789012345678901234567890.123456789, -9223372036854775808, -32768, true,
           '2038-01-19', '23:59:59.999999', '2000-01-01 00:00:00', '2038-01-19 03:14:08.000001+00',
           '1 mon', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12', '{"t": "Zoë\\nx", "n": 1.50}',
           '{"t": "Zoë\\nx", "n": 1.50}', array['back\\slash', E'tab\\tx', ''], array[]::int[], 'sad',
           '\\x00ff10');
        """,
    ),
    Step("typed update of nulls", "update typed set feeling = 'ok', span = '00:00:00.000001' where id = 2;"),
    Step(
        "update leaving the TOASTed value unchanged", "update docs set title = 'first, renamed' where id = 1;"
    ),
    Step("update of the TOASTed value", f"update docs set body = {_pg_big_text(3)} where id = 2;"),
    Step("delete with only the key (REPLICA IDENTITY DEFAULT)", "delete from docs where id = 3;"),
    Step("update after the TOAST update", "update docs set title = 'second, renamed' where id = 2;"),
    *[
        step
        for table in ("docs", "docs_full")
        for step in (
            Step(
                f"{table}: TOASTed values left unchanged",
                f"update {table} set title = 'renamed' where id = 2;",
            ),
            Step(
                f"{table}: primary-key change of a TOASTed row", f"update {table} set id = 11 where id = 1;"
            ),
            # A chain of three key changes of one row (1 -> 11 -> 12 -> 1): every new key's
            # insert leaves the TOASTed value out, so each carries the old key's, link by link.
            Step(f"{table}: the key changed again", f"update {table} set id = 12 where id = 11;"),
            Step(
                f"{table}: the key changed back",
                f"update {table} set id = 1, title = 'first, back' where id = 12;",
            ),
        )
    ],
    *all_types_steps(
        PG_ALL_TYPES,
        "update all_types as a set ({names}) = (select {names} from all_types as b where b.id = 2) "
        "where a.id = 101;",
    ),
    *closing_steps(truncate="truncate events;", text_type="text"),
]


def postgres_workload() -> Workload:
    return Workload(
        "postgresql",
        POSTGRES_SETUP,
        list(POSTGRES_STEPS),
        {"customers": {"note"}},
        read_postgres,
        unordered_json={ALL_TYPES_TABLE: {"hs"}},  # hstore: the connector's key order
    )


# -- MariaDB --------------------------------------------------------------------------------
MARIADB_TEXT = {
    "date": "date_format({c}, '%Y-%m-%d')",
    "datetime": "date_format({c}, '%Y-%m-%d %H:%i:%s.%f')",
    "timestamp": "date_format({c}, '%Y-%m-%d %H:%i:%s.%f')",
    "time": "time_format({c}, '%H:%i:%s.%f')",
    "float": "cast(cast({c} as double) as char)",
    "point": "concat('(', ST_X({c}), ',', ST_Y({c}), ')')",
    **{
        binary: "replace(to_base64({c}), '\\n', '')"
        for binary in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
    },
    # WKB in base64, after `SRID=n;` when the value has a spatial reference
    **{
        geometry: "if({c} is null, null, concat_ws(';', nullif(concat('SRID=', ST_SRID({c})), 'SRID=0'), "
        "replace(to_base64(ST_AsWKB({c})), '\\n', '')))"
        for geometry in MARIADB_GEOMETRY_TYPES
    },
}
MARIADB_NORMAL: dict[str, Normalize] = {
    "float": lambda text: float32_text(float(text)),
    "double": lambda text: float_text(float(text)),
    "point": point_text,
}


def _mariadb_column(data_type: str, column_type: str) -> tuple[str, Normalize | None]:
    """The SQL rendering a column and the function giving gold's normal form of that text."""
    if data_type == "bit":  # BIT(1) is a boolean to Debezium; longer bit strings a number
        if column_type == "bit(1)":
            return "case {c} + 0 when 1 then 'true' when 0 then 'false' end", None
        return "cast({c} + 0 as char)", None
    return MARIADB_TEXT.get(data_type, "cast({c} as char)"), MARIADB_NORMAL.get(data_type)


def _maria_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_mariadb(database: Database) -> Tables:
    """Every table of the database: its rows, each value as text in the contract's spelling."""
    listing = database.sql(
        """
        select table_name, column_name, data_type, column_type, column_key = 'PRI'
        from information_schema.columns
        where table_schema = database()
        order by table_name, ordinal_position;
        """
    )
    tables: dict[str, list[tuple[str, str, bool]]] = {}
    renderings: dict[str, dict[str, tuple[str, Normalize | None]]] = {}
    for line in listing.splitlines():
        table, column, data_type, column_type, is_key = line.split("\t")
        tables.setdefault(table, []).append((column, data_type, is_key == "1"))
        renderings.setdefault(table, {})[column] = _mariadb_column(data_type, column_type)
    if not tables:
        return {}
    queries = []
    for table, columns in tables.items():
        values = ", ".join(
            f"'{name}', {renderings[table][name][0].format(c=_maria_ident(name))}" for name, _, _ in columns
        )
        # Hex of the JSON text: the client's batch output escapes nothing in it.
        queries.append(f"select '{table}', hex(json_object({values})) from {_maria_ident(table)};")
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in tables}
    for line in database.sql("\n".join(queries)).splitlines():
        table, _, text = line.partition("\t")
        found[table].append(json.loads(bytes.fromhex(text).decode("utf-8")))
    return {
        f"{database.database}.{table}".lower(): _rows(
            table,
            columns,
            found[table],
            {c: normal for c, (_, normal) in renderings[table].items() if normal is not None},
        )
        for table, columns in tables.items()
    }


MARIADB_SETUP = (
    f"""
create table customers (
  id int primary key, name varchar(100), balance decimal(12, 2), active boolean, born date,
  updated_at timestamp(6) null default null
);
insert into customers values
  (1, 'Ann', 12.50, true, '1990-01-31', '2025-03-14 12:00:00'),
  (2, 'Bob', -3.00, false, null, '2025-03-14 11:00:00.25'),
  (3, 'Cy', 0.10, true, '2001-12-01', null);

create table typed (
  id int primary key, amount decimal(12, 2), wide decimal(38, 10), big bigint, small smallint,
  flag boolean, born date, at_time time(6), dt datetime(6), dt0 datetime,
  ts timestamp(6) null default null, uid uuid, doc json, feeling enum('sad', 'ok', 'happy'),
  bin varbinary(32), data blob, txt text
);
insert into typed values
  (1, 12.5, 3.1415926535, 9007199254740993, -5, true, '1999-12-31',
   '13:45:30.123456', '2024-02-29 23:59:59.5', '2024-02-29 23:59:59', '2024-02-29 23:59:59.5',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"b": 1, "a": [1,2]}}', 'ok', x'deadbeef', x'00ff',
   'Zoë'),
  (2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
   null);

create table events (id int primary key, kind varchar(20), at datetime(6));
insert into events values (1, 'open', '2025-01-01 08:00:00'), (2, 'click', '2025-01-01 08:00:01.000001'),
  (3, 'close', null);

create table {SENTINEL_TABLE} (id int primary key, note varchar(20));
"""
    + all_types_table(MARIADB_ALL_TYPES, " default charset utf8mb4")
    + all_types_rows(MARIADB_ALL_TYPES, 1)
)

MARIADB_STEPS = [
    *keyed_steps(now="now(6)"),
    Step(
        "multi-row transaction",
        """
        begin;
        insert into customers values (5, 'Eve', 1000000000.01, null, '1969-07-20', '1970-01-01 00:00:01');
        update customers set balance = balance + 1, born = '2000-02-29' where id in (4, 10);
        delete from events where id = 3;
        insert into typed (id, amount, wide) values (3, -0.01, 100);
        commit;
        """,
    ),
    Step(
        "typed update",
        """
        update typed set wide = 0.0000150000, flag = false, bin = '', data = x'0a0d09',
          doc = '[]', ts = '2038-01-19 03:14:07.999999', dt = '1969-12-31 23:59:59.999999',
          dt0 = '1000-01-01 00:00:00', born = '1000-01-01', at_time = '00:00:00', feeling = 'happy',
          small = 32767
        where id = 1;
        """,
    ),
    Step(
        "typed insert",
        """
        insert into typed values
          (4, -0.05, -1234567890123456789012345678.0123456789, -9223372036854775808, -32768,
           true, '2038-01-19', '23:59:59.999999', '2000-01-01 00:00:00',
           '9999-12-31 23:59:59', '1970-01-01 00:00:01', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12',
           '{"t": "Zoë\\\\nx", "n": 1.50}', 'sad', x'00ff10', null, 'tab\\tand\\nnewline');
        """,
    ),
    Step("typed update of nulls", "update typed set feeling = 'ok', flag = true where id = 2;"),
    *all_types_steps(
        MARIADB_ALL_TYPES,
        "update all_types as a join all_types as b on b.id = 2 set {pairs} where a.id = 101;",
    ),
    *closing_steps(truncate="truncate table events;", text_type="varchar(20)"),
]


def mariadb_workload() -> Workload:
    return Workload("mariadb", MARIADB_SETUP, list(MARIADB_STEPS), {"customers": {"note"}}, read_mariadb)
