"""The Debezium message generator, without Spark: value encoders, Kafka's
partitioner, determinism, kcat records the lander reads back, and an expected
outcome that follows from the messages (truncate, key changes, TOAST)."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_cli import main
from cdc_tools.generators import debezium_messages as dm
from cdc_tools.generators.debezium_traffic import Traffic, generate, key_text
from python_ingest.containers import INGEST_ERROR_HEADER, RawMessage, read_jsonl, read_kcat

IST = timezone(timedelta(hours=5, minutes=30))


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return generate(changes=200, seed=8)


@pytest.fixture(scope="module")
def written(traffic: Traffic, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("debezium")
    traffic.write(directory)
    return directory


@pytest.fixture(scope="module")
def landed(written: Path) -> list[RawMessage]:
    return [m for path in sorted((written / "kcat").iterdir()) for m in read_kcat(path)]


def payloads(landed: list[RawMessage], topic: str) -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    """(key payload, value payload) of the non-tombstone records of a topic."""
    return [
        (
            json.loads(m.message_key)["payload"] if m.message_key else None,
            json.loads(m.message_value)["payload"],
        )
        for m in landed
        if m.source_uri == f"kafka:{topic}" and m.message_value is not None
    ]


def table(traffic: Traffic, name: str) -> dm.Table:
    return next(f.table for f in traffic.feeds if f.table.name == name)


# -- encoders -------------------------------------------------------------------
@pytest.mark.parametrize("length", range(1, 17))
@pytest.mark.parametrize("sign", [1, -1])
def test_decimal_bytes_are_minimal_twos_complement_of_every_length(length: int, sign: int) -> None:
    unscaled = 2 ** (8 * length - 1) - 1 if sign > 0 else -(2 ** (8 * length - 1))  # the extreme of `length`
    raw = base64.b64decode(dm.connect_decimal(Decimal(f"{unscaled}E-3"), 3))
    assert len(raw) == length
    assert int.from_bytes(raw, "big", signed=True) == unscaled
    beyond = base64.b64decode(dm.connect_decimal(Decimal(f"{unscaled + sign}E-3"), 3))
    assert len(beyond) == length + 1


@pytest.mark.parametrize(
    ("value", "scale", "raw"),
    [
        (Decimal("12.50"), 2, b"\x04\xe2"),
        (Decimal("12.5"), 2, b"\x04\xe2"),
        (Decimal("-3.000"), 3, b"\xf4\x48"),
        (Decimal("0.00"), 2, b"\x00"),
        (Decimal("-1.28"), 2, b"\x80"),
    ],
)
def test_decimal_is_the_unscaled_integer_at_the_column_scale(value: Decimal, scale: int, raw: bytes) -> None:
    assert base64.b64decode(dm.connect_decimal(value, scale)) == raw


def test_decimal_with_more_places_than_the_scale_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 2 decimal places"):
        dm.connect_decimal(Decimal("1.234"), 2)


def test_variable_scale_decimal_carries_its_own_scale() -> None:
    encoded = dm.variable_scale_decimal(Decimal("-123.456"))
    assert encoded["scale"] == 3
    assert int.from_bytes(base64.b64decode(encoded["value"]), "big", signed=True) == -123456


@pytest.mark.parametrize(
    ("encoder", "args", "expected"),
    [
        (dm.debezium_date, (date(2025, 3, 14),), 20161),
        (dm.debezium_date, (date(1969, 12, 31),), -1),
        (dm.debezium_time, (time(10, 30, 0, 500_000),), 37_800_500),
        (dm.micro_time, (time(10, 30, 0, 1),), 37_800_000_001),
        (dm.nano_time, (time(10, 30, 0, 123_456), 789), 37_800_123_456_789),
        (dm.debezium_timestamp, (datetime(2025, 3, 14, 10),), 1_741_946_400_000),
        (dm.micro_timestamp, (datetime(2025, 3, 14, 10, 0, 0, 123_456),), 1_741_946_400_123_456),
        (dm.micro_timestamp, (datetime(1969, 12, 31, 23, 59, 59, 999_999),), -1),
        (dm.micro_timestamp, (datetime(2025, 3, 14, 15, 30, tzinfo=IST),), 1_741_946_400_000_000),
        (dm.nano_timestamp, (datetime(2025, 3, 14, 10, 0, 0, 123_456), 700), 1_741_946_400_123_456_700),
        (
            dm.zoned_timestamp,
            (datetime(2025, 3, 14, 10, 0, 0, 123_456, IST),),
            "2025-03-14T10:00:00.123456+05:30",
        ),
        (dm.zoned_timestamp, (datetime(2025, 3, 14, 10, 0, 0, 500_000, UTC),), "2025-03-14T10:00:00.5Z"),
        (
            dm.zoned_timestamp,
            (datetime(2025, 3, 14, 10, tzinfo=timezone(-timedelta(hours=3))),),
            "2025-03-14T10:00:00-03:00",
        ),
    ],
)
def test_temporal_encoders(encoder: Callable[..., Any], args: tuple, expected: Any) -> None:
    assert encoder(*args) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (105, "105"),
        (Decimal("12.50"), "12.50"),
        (Decimal("-3.000"), "-3.000"),
        (True, "true"),
        (False, "false"),
        (date(2025, 3, 14), "2025-03-14"),
        (datetime(2025, 3, 14, 10), "2025-03-14 10:00:00"),
        (datetime(2025, 3, 14, 10, 0, 0, 500_000), "2025-03-14 10:00:00.5"),
        (datetime(2025, 3, 14, 10, 0, 0, 123_456, IST), "2025-03-14 04:30:00.123456"),
        (time(10, 30), "10:30:00"),
        (time(10, 30, 0, 120_000), "10:30:00.12"),
        (b"\x01\x02\xff", "AQL/"),
        ("text", "text"),
        (None, None),
    ],
)
def test_contract_text(value: Any, text: str | None) -> None:
    assert dm.contract_text(value) == text


def test_field_schemas_are_written_the_jsonconverter_way() -> None:
    id_column, amount, weight = dm.columns("id:int32! amount:decimal(10,2) weight:variable_decimal")
    assert dm.field_schema(id_column) == {"type": "int32", "optional": False, "field": "id"}
    assert dm.field_schema(amount) == {
        "type": "bytes",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": {"scale": "2", "connect.decimal.precision": "10"},
        "field": "amount",
    }
    assert dm.field_schema(weight)["fields"] == [
        {"type": "int32", "optional": False, "field": "scale"},
        {"type": "bytes", "optional": False, "field": "value"},
    ]


@pytest.mark.parametrize(
    ("data", "hashed"),
    [
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"abc", 479470107),
    ],
)
def test_murmur2_matches_kafka(data: bytes, hashed: int) -> None:
    assert dm.murmur2(data) == hashed
    assert dm.kafka_partition(data, 7) == (hashed & 0x7FFFFFFF) % 7


# -- generated traffic ---------------------------------------------------------------
def test_same_seed_same_files(tmp_path: Path) -> None:
    generate(changes=60, seed=3).write(tmp_path / "a")
    generate(changes=60, seed=3).write(tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    generate(changes=60, seed=4).write(tmp_path / "c")
    expected = Path("_expected_current.json")
    assert (tmp_path / "c" / expected).read_bytes() != (tmp_path / "a" / expected).read_bytes()


def test_layout(written: Path, traffic: Traffic) -> None:
    assert sorted(p.name for p in written.iterdir()) == ["_expected_current.json", "jsonl", "kcat"]
    assert "gensql.gendb.dbo.accounts-0.kcat.jsonl" in traffic.kcat
    assert "genpg.public.items-1.kcat.jsonl" in traffic.kcat
    assert any(name.endswith(".redump.kcat.jsonl") for name in traffic.kcat)
    assert (
        "topics/invpg.public.shipments/partition=0/invpg.public.shipments+0+0000000000.json" in traffic.jsonl
    )
    assert json.loads((written / "_expected_current.json").read_text()) == traffic.expected_current


def test_kcat_lines_are_read_back_by_the_lander(written: Path, traffic: Traffic) -> None:
    for name, records in traffic.kcat.items():
        messages = list(read_kcat(written / "kcat" / name))
        assert len(messages) == len(records)
        for message, record in zip(messages, records, strict=True):
            assert (message.source_uri, message.source_partition, message.source_offset) == (
                f"kafka:{record['topic']}",
                record["partition"],
                record["offset"],
            )
            assert message.message_key == record["key"]
            assert message.message_value == record["payload"]
            pairs = record["headers"] or []
            assert message.headers == (dict(zip(pairs[::2], pairs[1::2], strict=True)) or None)
            assert INGEST_ERROR_HEADER not in (message.headers or {})


def test_a_redump_repeats_records_exactly(written: Path, traffic: Traffic) -> None:
    name = next(n for n in traffic.kcat if n.endswith(".redump.kcat.jsonl"))
    original = {m.message_id: m for m in read_kcat(written / "kcat" / name.replace(".redump", ""))}
    for copy in read_kcat(written / "kcat" / name):
        assert original[copy.message_id].message_value == copy.message_value


def test_every_delete_is_followed_by_its_tombstone(traffic: Traffic) -> None:
    for records in traffic.kcat.values():
        for record, following in zip(records, records[1:], strict=False):
            if record["payload"] and json.loads(record["payload"])["payload"].get("op") == "d":
                assert following["payload"] is None and following["key"] == record["key"]


def test_a_truncate_empties_the_table_then_new_rows_arrive(
    landed: list[RawMessage], traffic: Traffic
) -> None:
    items = payloads(landed, "genpg.public.items")
    [truncate_lsn] = {p["source"]["lsn"] for key, p in items if p["op"] == "t" and key is None}
    before = {
        f"item_id={k['item_id']}" for k, p in items if p["op"] in "rc" and p["source"]["lsn"] < truncate_lsn
    }
    after = {
        f"item_id={k['item_id']}" for k, p in items if p["op"] == "c" and p["source"]["lsn"] > truncate_lsn
    }
    live = set(traffic.expected_current["gendb.public.items"])
    assert live and live <= after
    assert before & after  # a key the truncate removed was inserted again


@pytest.mark.parametrize(
    ("name", "topic"), [("accounts", "gensql.gendb.dbo.accounts"), ("items", "genpg.public.items")]
)
def test_a_key_change_moves_the_row_to_its_new_key(
    landed: list[RawMessage], traffic: Traffic, name: str, topic: str
) -> None:
    tbl, live = table(traffic, name), traffic.expected_current[table(traffic, name).table_id]
    messages = [m for m in landed if m.source_uri == f"kafka:{topic}" and m.headers]
    deletes = [m for m in messages if dm.NEW_KEY_HEADER in m.headers]
    assert deletes
    for delete in deletes:
        old_key = json.loads(delete.message_key)["payload"]
        create = next(m for m in messages if m.headers.get(dm.OLD_KEY_HEADER) == dm.dumps(old_key))
        assert json.loads(create.message_key)["payload"] == json.loads(delete.headers[dm.NEW_KEY_HEADER])
        deleted, created = (json.loads(m.message_value)["payload"]["source"] for m in (delete, create))
        position = "lsn" if name == "items" else "change_lsn"
        assert deleted[position] == created[position]  # one source change
        assert key_text(tbl, old_key) not in live
    new_keys = {key_text(tbl, json.loads(d.headers[dm.NEW_KEY_HEADER])) for d in deletes}
    assert new_keys & set(live)


def test_the_live_keys_follow_from_the_messages_in_commit_order(
    landed: list[RawMessage], traffic: Traffic
) -> None:
    def commit_order(entry: tuple[Any, dict[str, Any]]) -> tuple[str, str, int]:
        source = entry[1]["source"]
        return source["commit_lsn"], source["change_lsn"] or "", source["event_serial_no"] or 0

    live: set[str] = set()
    for key, p in sorted(payloads(landed, "gensql.gendb.dbo.accounts"), key=commit_order):
        (live.discard if p["op"] == "d" else live.add)(key_text(table(traffic, "accounts"), key))
    assert live == set(traffic.expected_current["gendb.dbo.accounts"])


def test_an_unchanged_toasted_value_keeps_the_previous_one(
    landed: list[RawMessage], traffic: Traffic
) -> None:
    last: dict[str, str | None] = {}  # key -> the last description sent in full
    kept: set[str] = set()  # keys whose latest update carried the placeholder
    for key, p in sorted(payloads(landed, "genpg.public.items"), key=lambda e: e[1]["source"]["lsn"]):
        if p["op"] == "t":
            last.clear()
            continue
        k = f"item_id={key['item_id']}"
        if p["op"] == "d":
            last.pop(k, None)
        elif p["after"]["description"] == dm.UNAVAILABLE:
            assert p["op"] == "u" and p["before"] is None  # REPLICA IDENTITY DEFAULT
            kept.add(k)
        else:
            last[k] = p["after"]["description"]
            kept.discard(k)
    live = traffic.expected_current["gendb.public.items"]
    assert {k: row["description"] for k, row in live.items()} == {k: last[k] for k in live}
    assert kept & set(live)
    assert all(
        dm.UNAVAILABLE not in json.dumps(row)
        for rows in traffic.expected_current.values()
        for row in rows.values()
    )


def test_schemaless_files_carry_encoded_values_that_decode_to_the_expected_rows(
    written: Path, traffic: Traffic
) -> None:
    values = [
        json.loads(m.message_value)
        for path in sorted((written / "jsonl").rglob("*.json"))
        for m in read_jsonl(path)
    ]
    assert values and all("schema" not in v and v["op"] in "rcud" for v in values)
    last: dict[str, dict[str, Any]] = {}
    shipments = [v for v in values if v["source"]["db"] == "inventory"]
    for v in sorted(shipments, key=lambda v: v["source"]["lsn"]):
        image = v["after"] or v["before"]
        key = f"shipment_id={image['shipment_id']}"
        if v["op"] == "d":
            last.pop(key, None)
        else:
            last[key] = v["after"]
    decode: dict[str, Callable[[Any], str]] = {  # by the types the project declares for the table
        "shipment_id": str,
        "shipped_on": lambda days: (date(1970, 1, 1) + timedelta(days=days)).isoformat(),
        "weight": lambda raw: (
            f"{Decimal(int.from_bytes(base64.b64decode(raw), 'big', signed=True)).scaleb(-3):f}"
        ),
        "shipped_at": lambda micros: dm.contract_text(datetime(1970, 1, 1) + timedelta(microseconds=micros)),
        "note": str,
    }
    decoded = {k: {c: None if v is None else decode[c](v) for c, v in row.items()} for k, row in last.items()}
    assert decoded == traffic.expected_current["inventory.public.shipments"]
    orders = traffic.expected_current["shop.orders"]
    assert orders and all(row["paid"] in ("true", "false", None) for row in orders.values())


def _distinct(landed: list[RawMessage]) -> list[RawMessage]:
    """The landed messages without the re-dumped copies."""
    return list({m.message_id: m for m in landed}.values())


def _binlog_position(source: dict[str, Any]) -> tuple[str, int, int]:
    return source["file"], source["pos"], source["row"]


def test_mariadb_records_are_shaped_as_the_real_connector_sends_them(landed: list[RawMessage]) -> None:
    """As Debezium 3.5's MariaDB connector sends them (tests/e2e/test_real_producers.py): connector
    `mariadb`, binlog positions, GTIDs (none in the snapshot, server id 0 there), both halves of
    a key change at one position and row, a truncate with a GTID, BOOLEAN as int16 0 / 1."""
    landed = _distinct(landed)
    products = [p for _, p in payloads(landed, "genmaria.gendb.products")]
    assert all(p["source"]["connector"] == "mariadb" for p in products)
    assert all(p["source"]["file"].startswith("mariadb-bin.") for p in products)
    assert all(p["source"]["ts_ms"] % 1000 == 0 for p in products)  # the binlog's clock: whole seconds
    snapshot = [p for p in products if p["op"] == "r"]
    assert snapshot and all(p["source"]["server_id"] == 0 and p["source"]["gtid"] is None for p in snapshot)
    markers = Counter(p["source"]["snapshot"] for p in snapshot)
    assert markers["first"] == markers["last"] == 1 and set(markers) <= set(dm.SNAPSHOT_MARKERS)
    streamed = [p for p in products if p["op"] != "r"]
    assert all(re.fullmatch(r"0-1-\d+", p["source"]["gtid"]) for p in streamed)
    assert all(p["transaction"]["id"] == p["source"]["gtid"] for p in streamed)
    assert any(p["op"] == "t" for p in streamed)
    assert {p["after"]["active"] for p in streamed if p["after"]} <= {0, 1, None}
    halves = [m for m in landed if m.source_uri == "kafka:genmaria.gendb.products" and m.message_value]
    deletes = [m for m in halves if dm.NEW_KEY_HEADER in m.headers]
    assert deletes
    for delete in deletes:
        old_key = dm.dumps(json.loads(delete.message_key)["payload"])
        create = next(m for m in halves if m.headers.get(dm.OLD_KEY_HEADER) == old_key)
        deleted, created = (json.loads(m.message_value)["payload"]["source"] for m in (delete, create))
        assert _binlog_position(deleted) == _binlog_position(created)  # one row of one binlog event
        assert deleted["gtid"] == created["gtid"]


def test_only_the_binlog_position_orders_the_mariadb_changes(
    landed: list[RawMessage], traffic: Traffic
) -> None:
    """Several MariaDB transactions share a second of its binlog clock (`ts_ms`), and a truncate
    (no key) lands in any partition: the live keys follow from the binlog position, not from the
    commit time and the offsets."""
    records = [
        (m, json.loads(m.message_value)["payload"])
        for m in _distinct(landed)
        if m.source_uri == "kafka:genmaria.gendb.products" and m.message_value
    ]

    def live_keys(order: Callable[[tuple[RawMessage, dict[str, Any]]], Any]) -> set[str]:
        live: set[str] = set()
        for message, p in sorted(records, key=order):
            if p["op"] == "t":
                live.clear()
                continue
            key = f"product_id={json.loads(message.message_key)['payload']['product_id']}"
            (live.discard if p["op"] == "d" else live.add)(key)
        return live

    expected = set(traffic.expected_current["gendb.products"])
    assert live_keys(lambda r: _binlog_position(r[1]["source"])) == expected
    assert live_keys(lambda r: (r[1]["source"]["ts_ms"], r[0].source_offset)) != expected


def test_mariadb_schema_changes_and_a_column_added_mid_stream(
    landed: list[RawMessage], traffic: Traffic
) -> None:
    landed = _distinct(landed)
    ddl = [m for m in landed if m.source_uri == "kafka:genmaria"]  # one key: one partition, in order
    events = [json.loads(m.message_value)["payload"] for m in sorted(ddl, key=lambda m: m.source_offset)]
    assert all("op" not in e and e["databaseName"] == "gendb" for e in events)
    kinds = [(e["tableChanges"][0]["type"], e["source"]["snapshot"]) for e in events]
    assert kinds == [("DROP", "true"), ("CREATE", "true"), ("ALTER", "false")]
    alter = next(e for e in events if e["tableChanges"][0]["type"] == "ALTER")
    assert "add column note" in alter["ddl"]
    altered_at = _binlog_position(alter["source"])
    changes = [p for _, p in payloads(landed, "genmaria.gendb.products") if p["op"] != "t"]
    for p in changes:  # every row image after the ALTER has the column, none before
        assert ("note" in (p["after"] or p["before"])) == (_binlog_position(p["source"]) > altered_at), p
    last_change = {}
    for p in sorted(changes, key=lambda p: _binlog_position(p["source"])):
        last_change[f"product_id={(p['after'] or p['before'])['product_id']}"] = _binlog_position(p["source"])
    live = traffic.expected_current["gendb.products"]
    assert live
    for key, row in live.items():  # a row not changed since the ALTER has no value for the column
        assert ("note" in row) == (last_change[key] > altered_at), key
    assert any("note" not in row for row in live.values())


def test_transaction_markers_and_context_headers(landed: list[RawMessage]) -> None:
    landed = _distinct(landed)
    topic = "kafka:genmaria.transaction"
    markers = [json.loads(m.message_value)["payload"] for m in landed if m.source_uri == topic]
    assert markers and all(m.headers is None for m in landed if m.source_uri == topic)
    begins = Counter(m["id"] for m in markers if m["status"] == "BEGIN")
    ends = Counter(m["id"] for m in markers if m["status"] == "END")
    counts = {m["id"]: m["event_count"] for m in markers if m["status"] == "END"}
    products = [p for _, p in payloads(landed, "genmaria.gendb.products") if p["op"] != "r"]
    assert {p["source"]["gtid"] for p in products} <= set(begins) and set(ends) <= set(begins)
    rows = Counter(p["source"]["gtid"] for p in products if p["op"] != "t")
    truncates = {p["source"]["gtid"] for p in products if p["op"] == "t"}
    assert truncates and not truncates & set(ends)  # no END after DDL
    assert set(rows) == set(ends)
    for gtid, copies in ends.items():  # a transaction re-sent after a restart is sent whole again
        assert counts[gtid] * copies == rows[gtid] and begins[gtid] == copies
    # Every record of a connector's task (not the markers) names its connector and run.
    runs: dict[str, set[str]] = {}
    for m in landed:
        if m.source_uri != topic:
            assert m.headers[dm.CONTEXT_HEADER + "connectorLogicalName"] in m.source_uri
            runs.setdefault(m.headers[dm.CONTEXT_HEADER + "connectorName"], set()).add(
                m.headers[dm.CONTEXT_HEADER + "runId"]
            )
    assert set(runs) == {"sqlserver", "postgresql", "mariadb"}  # the sink files have no headers
    assert sum(len(ids) for ids in runs.values()) > len(runs)  # a restart starts a new run


def test_generate_command_writes_debezium_traffic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--format", "debezium", "--changes", "40", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.startswith("wrote ")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["_expected_current.json", "jsonl", "kcat"]


# -- the expected history (benchmarks/peer_compare.py) ------------------------------------
def test_recording_the_history_changes_no_message_and_ends_in_the_live_rows(traffic: Traffic) -> None:
    recorded = generate(changes=200, seed=8, record_history=True)
    assert (recorded.kcat, recorded.jsonl) == (traffic.kcat, traffic.jsonl)
    assert traffic.expected_history is None
    for table_id, keys in recorded.expected_history.items():
        live = {k: e["versions"][-1][1] for k, e in keys.items() if e["versions"][-1][0] not in ("d", "t")}
        assert live == traffic.expected_current[table_id], table_id
        for e in keys.values():  # a row after every r, c, u; none after d, t
            assert all((v[1] is None) == (v[0] in ("d", "t")) for v in e["versions"])


def test_the_history_names_each_key_s_causes(tmp_path: Path) -> None:
    recorded = generate(changes=600, seed=7, record_history=True)
    history = recorded.expected_history
    causes = Counter(c for keys in history.values() for e in keys.values() for c in e["causes"])
    for cause in ("truncates", "primary-key changes", "partial images", "deletes and re-inserts"):
        assert causes[cause], cause
    assert causes["schema changes"] and causes["redelivery"] and causes["transactions"]
    items = history["gendb.public.items"]
    truncated = [k for k, e in items.items() if any(v[0] == "t" for v in e["versions"])]
    assert truncated and all("truncates" in items[k]["causes"] for k in truncated)
    # the key a refill reuses after the truncate: deleted, then live again
    ops = {k: [v[0] for v in items[k]["versions"]] for k in truncated}
    again = [k for k in truncated if "c" in ops[k][ops[k].index("t") :]]
    assert again and "deletes and re-inserts" in items[again[0]]["causes"]
    recorded.write(tmp_path)
    written = json.loads((tmp_path / "_expected_history.json").read_text(encoding="utf-8"))
    assert written.keys() == history.keys()
