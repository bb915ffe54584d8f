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
        """`row` without the NULL values of columns added mid-stream (see the module's doc)."""
        added = self.added_columns.get(table_id.rsplit(".", 1)[-1], set())
        return {c: v for c, v in row.items() if not (c in added and v is None)}

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


def _rows(
    table_id: str, columns: list[tuple[str, str, bool]], objects: list[dict[str, Any]]
) -> dict[Key, Row]:
    """Rows read as JSON objects of text values, keyed by their primary key columns."""
    temporal = {name for name, data_type, _ in columns if data_type in TEMPORAL_TYPES}
    key_columns = [name for name, _, is_key in columns if is_key]
    assert key_columns, f"{table_id} has no primary key"
    rows: dict[Key, Row] = {}
    for found in objects:
        row = {
            name: None
            if found[name] is None
            else _trim_fraction(found[name])
            if name in temporal
            else found[name]
            for name, _, _ in columns
        }
        rows[key_of({c: row[c] for c in key_columns})] = row
    return rows


# -- PostgreSQL -----------------------------------------------------------------------------
# Debezium's MicroDuration (io.debezium.time.MicroDuration with interval.handling.mode=numeric):
# months at 365.25 / 12 days = 2 629 800 s, days at 86 400 s, plus the time part.
PG_INTERVAL_MICROS = (
    "((extract(year from {c})::bigint * 12 + extract(month from {c})::bigint) * 2629800000000"
    " + extract(day from {c})::bigint * 86400000000"
    " + (extract(hour from {c})::bigint * 3600 + extract(minute from {c})::bigint * 60) * 1000000"
    " + extract(microseconds from {c})::bigint)::text"
)
PG_TEXT = {
    "boolean": "{c}::text",
    "date": "to_char({c}, 'YYYY-MM-DD')",
    "time without time zone": "{c}::text",
    "timestamp without time zone": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "timestamp with time zone": "to_char({c} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')",
    "interval": PG_INTERVAL_MICROS,
    "bytea": "translate(encode({c}, 'base64'), E'\\n', '')",
    "ARRAY": "array_to_json({c})::text",
}


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_postgres(database: Database, schema: str = "public") -> Tables:
    """Every table of `schema`: its rows, each value as text in the contract's spelling."""
    listing = database.sql(
        f"""
        select c.table_name, c.column_name, c.data_type,
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
    for line in listing.splitlines():
        table, column, data_type, is_key = line.split("|")
        tables.setdefault(table, []).append((column, data_type, is_key == "t"))
    if not tables:
        return {}
    queries = []
    for table, columns in tables.items():
        values = ", ".join(
            f"{PG_TEXT.get(data_type, '{c}::text').format(c=_pg_ident(name))} as {_pg_ident(name)}"
            for name, data_type, _ in columns
        )
        queries.append(
            f"select '{table}', row_to_json(r)::text from "
            f"(select {values} from {_pg_ident(schema)}.{_pg_ident(table)}) r;"
        )
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in tables}
    for line in database.sql("\n".join(queries)).splitlines():
        table, _, text = line.partition("|")
        found[table].append(json.loads(text))
    return {
        f"{database.database}.{schema}.{table}".lower(): _rows(table, columns, found[table])
        for table, columns in tables.items()
    }


def _pg_big_text(seed: int) -> str:
    """SQL for about 10 kB of hex text: beyond the TOAST threshold, stored out of line."""
    return f"(select string_agg(md5(({seed} * 1000 + i)::text), '') from generate_series(1, 320) i)"


POSTGRES_SETUP = f"""
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

-- REPLICA IDENTITY DEFAULT: updates have no before image, deletes only the key. `body` is
-- stored out of line uncompressed (TOAST), so an update that leaves it alone does not send it.
create table docs (id int primary key, title text, body text);
alter table docs alter column body set storage external;
insert into docs values (1, 'first', {_pg_big_text(1)}), (2, 'second', {_pg_big_text(2)}),
  (3, 'third', 'short');

create table events (id int primary key, kind text, at timestamp(6));
alter table events replica identity full;
insert into events values (1, 'open', '2025-01-01 08:00:00'), (2, 'click', '2025-01-01 08:00:01.000001'),
  (3, 'close', null);

create table {SENTINEL_TABLE} (id int primary key, note text);
alter table {SENTINEL_TABLE} replica identity full;
"""

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
    *closing_steps(truncate="truncate events;", text_type="text"),
]


def postgres_workload() -> Workload:
    return Workload(
        "postgresql", POSTGRES_SETUP, list(POSTGRES_STEPS), {"customers": {"note"}}, read_postgres
    )


# -- MariaDB --------------------------------------------------------------------------------
MARIADB_TEXT = {
    "date": "date_format({c}, '%Y-%m-%d')",
    "datetime": "date_format({c}, '%Y-%m-%d %H:%i:%s.%f')",
    "timestamp": "date_format({c}, '%Y-%m-%d %H:%i:%s.%f')",
    "time": "time_format({c}, '%H:%i:%s.%f')",
    "varbinary": "replace(to_base64({c}), '\\n', '')",
    "binary": "replace(to_base64({c}), '\\n', '')",
    "blob": "replace(to_base64({c}), '\\n', '')",
}


def _maria_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_mariadb(database: Database) -> Tables:
    """Every table of the database: its rows, each value as text in the contract's spelling."""
    listing = database.sql(
        """
        select table_name, column_name, data_type, column_key = 'PRI'
        from information_schema.columns
        where table_schema = database()
        order by table_name, ordinal_position;
        """
    )
    tables: dict[str, list[tuple[str, str, bool]]] = {}
    for line in listing.splitlines():
        table, column, data_type, is_key = line.split("\t")
        tables.setdefault(table, []).append((column, data_type, is_key == "1"))
    if not tables:
        return {}
    queries = []
    for table, columns in tables.items():
        values = ", ".join(
            f"'{name}', {MARIADB_TEXT.get(data_type, 'cast({c} as char)').format(c=_maria_ident(name))}"
            for name, data_type, _ in columns
        )
        # Hex of the JSON text: the client's batch output escapes nothing in it.
        queries.append(f"select '{table}', hex(json_object({values})) from {_maria_ident(table)};")
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in tables}
    for line in database.sql("\n".join(queries)).splitlines():
        table, _, text = line.partition("\t")
        found[table].append(json.loads(bytes.fromhex(text).decode("utf-8")))
    return {
        f"{database.database}.{table}".lower(): _rows(table, columns, found[table])
        for table, columns in tables.items()
    }


MARIADB_SETUP = f"""
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
    *closing_steps(truncate="truncate table events;", text_type="varchar(20)"),
]


def mariadb_workload() -> Workload:
    return Workload("mariadb", MARIADB_SETUP, list(MARIADB_STEPS), {"customers": {"note"}}, read_mariadb)
