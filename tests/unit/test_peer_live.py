"""The live-row diff of benchmarks/peer_compare.py for GoldenGate, Canal, CES and DataWorks
traffic (benchmarks/peer_live.py), without Spark: the causes read from the messages, the classes of a
difference, and each system's live rows in the generators' text forms."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from benchmarks import peer_live as pl
from cdc_tools.generators import canal_messages as cm
from cdc_tools.generators import canal_traffic, ces_traffic, dataworks_traffic, goldengate_traffic
from cdc_tools.generators import dataworks_messages as dw
from cdc_tools.generators import goldengate_messages as gg


def gg_op(op: str, pos: int, before=None, after=None, keys=("ID",), op_ts="2025-03-14 09:00:00.000000"):
    message = {"table": "S.T", "op_type": op, "op_ts": op_ts, "current_ts": "x", "pos": f"{pos:020d}"}
    if keys:
        message["primary_keys"] = list(keys)
    if before is not None:
        message["before"] = before
    if after is not None:
        message["after"] = after
    return json.dumps(message)


def lines_of(*files: list[str]) -> list[tuple[int, int, str]]:
    return [(f, n, text) for f, texts in enumerate(files) for n, text in enumerate(texts)]


def gg_causes(*files: list[str]) -> tuple[pl.Tables, dict]:
    tables = pl.Tables()
    return tables, pl.causes(pl.goldengate_events(lines_of(*files), tables))


def test_goldengate_causes_from_hand_made_operations() -> None:
    row = {"ID": 1, "A": "x", "B": 2.5}
    tables, found = gg_causes(
        [
            gg_op("I", 1, after=row, op_ts="t1"),
            gg_op("U", 2, before={"ID": 1, "A": "x"}, after={"ID": 1, "A": "y"}, op_ts="t2"),  # compressed
            gg_op("U", 3, before={"ID": 1}, after={"ID": 7}, op_ts="t3"),  # key change
            gg_op("D", 4, before={"ID": 7}, op_ts="t4"),
            gg_op("I", 5, after={**row, "ID": 7, "C": "new"}, op_ts="t5"),  # back, with a new column
            gg_op("I", 6, after={**row, "ID": 2}, op_ts="t5"),  # same transaction
            gg_op("T", 7, op_ts="t6"),
        ],
        [gg_op("U", 2, before={"ID": 1, "A": "x"}, after={"ID": 1, "A": "y"}, op_ts="t2")],  # a copy
    )
    assert tables.keys == {"s.t": ["ID"]}
    compressed = gg_op("U", 2, before={"ID": 1, "A": "x"}, after={"ID": 1, "A": "y"}, op_ts="t2")
    # each cause with the first message that showed it, in CAUSES order
    assert list(found["s.t"]["ID=1"].items()) == [
        ("primary-key changes", gg_op("U", 3, before={"ID": 1}, after={"ID": 7}, op_ts="t3")),
        ("partial images", compressed),
        ("redelivery", compressed),
    ]
    assert list(found["s.t"]["ID=7"]) == [
        "truncates",
        "primary-key changes",
        "partial images",  # the key change's image holds the key only
        "deletes and re-inserts",
        "schema changes",
        "transactions",
    ]
    assert list(found["s.t"]["ID=2"]) == ["truncates", "transactions"]


def test_goldengate_table_without_a_key_is_identified_by_every_column() -> None:
    row = {"K": "a", "D": "one"}
    tables, found = gg_causes(
        [
            gg_op("I", 1, after=row, keys=()),
            gg_op("U", 2, before=row, after={"K": "a", "D": "two"}, keys=(), op_ts="t2"),
        ]
    )
    assert tables.keys == {"s.t": []}
    assert set(found["s.t"]) == {"D=one,K=a", "D=two,K=a"}
    assert all("primary-key changes" in c for c in found["s.t"].values())
    assert gg.key_text(gg.Table("S.T", ("K", "D")), {"K": "a", "D": "two"}) == "D=two,K=a"


def canal_message(kind: str, rows, es: int, ts: int, old=None, types=None, batch: int = 1) -> str:
    table = cm.Table("db", "orders", tuple((types or {"id": "int(11)", "note": "text"}).items()), ("id",))
    return cm.dumps(cm.rows_message(table, kind, rows, cm.Stamp(es, ts, batch, None), old))


def test_canal_causes_from_hand_made_messages() -> None:
    insert = canal_message("INSERT", [{"id": "1", "note": "a"}, {"id": "2", "note": "b"}], 1000, 1001)
    noblob = canal_message("UPDATE", [{"id": "1"}], 2000, 2001, old=[{}])
    key_change = canal_message("UPDATE", [{"id": "3", "note": "b"}], 3000, 3001, old=[{"id": "2"}])
    copy = json.dumps({**json.loads(noblob), "id": 1001, "ts": 9999})
    truncate = cm.dumps(
        cm.ddl_message(
            cm.Table("db", "orders", ()), "TRUNCATE", "TRUNCATE TABLE `orders`", cm.Stamp(4000, 4001, 2)
        )
    )
    back = canal_message("INSERT", [{"id": "1", "note": "c"}], 5000, 5001)
    tables = pl.Tables()
    found = pl.causes(pl.canal_events(lines_of([insert, noblob, key_change, copy, truncate, back]), tables))
    assert tables.keys == {"db.orders": ["id"]}
    assert list(found["db.orders"]["id=1"]) == [
        "truncates",
        "partial images",
        "deletes and re-inserts",
        "redelivery",
        "transactions",
    ]
    assert found["db.orders"]["id=1"]["redelivery"] == copy
    assert list(found["db.orders"]["id=2"]) == ["primary-key changes", "transactions"]
    assert list(found["db.orders"]["id=3"]) == ["truncates", "primary-key changes"]


def test_diff_live_classes() -> None:
    expected = {"t": {"k=1": {"a": "1"}, "k=2": {"a": "2", "b": None}, "k=3": {"a": "3"}}}
    got = {"t": {"k=1": {"a": "1"}, "k=2": {"a": "x"}, "k=4": {"a": "4"}, "k=9": {"a": "9"}}}
    key_causes = {
        "t": {
            "k=2": {"truncates": "m", "partial images": "m2"},  # values: truncates cannot explain it
            "k=3": {"schema changes": "m3"},  # missing: schema changes cannot explain it
            "k=4": {"truncates": "m4"},
        }
    }
    per_class, first = pl.diff_live(expected, got, key_causes)
    assert per_class == {"partial images": 1, pl.UNEXPLAINED: 1, "truncates": 1, pl.NEVER_HAD: 1}
    assert first == {
        "partial images": ("t", "k=2"),
        pl.UNEXPLAINED: ("t", "k=3"),
        "truncates": ("t", "k=4"),
        pl.NEVER_HAD: ("t", "k=9"),
    }
    assert pl.diff_live(expected, expected, key_causes)[0] == {}


def test_peer_live_rows_in_text_forms() -> None:
    tables = pl.Tables(
        keys={"db.orders": ["id"]}, types={"db.orders": {"id": "int(11)", "tag": "varbinary(4)"}}
    )
    history = {
        "db.orders": [
            {"id": "1", "tag": "\x00\xff", "__START_AT": 1, "__END_AT": None, "_commit_ts": 0},
            {"id": "2", "tag": None, "__START_AT": 1, "__END_AT": 2},
        ]
    }
    live = pl.peer_live("canal", history, tables)
    assert live == {"db.orders": {"id=1": {"id": "1", "tag": base64.b64encode(b"\x00\xff").decode()}}}
    keyless = pl.peer_live(
        "goldengate", {"s.t": [{"K": "a", "D": "x", "__END_AT": None}]}, pl.Tables(keys={"s.t": []})
    )
    assert keyless == {"s.t": {"D=x,K=a": {"K": "a", "D": "x"}}}


def test_project_live_rows() -> None:
    lines = [json.dumps(["t", {"b": "2", "a": "1"}, {"a": "1", "b": "2", "c": None}])]
    assert pl.project_live(lines, pl.Tables(keys={"t": ["b", "a"]})) == {
        "t": {"b=2,a=1": {"a": "1", "b": "2", "c": None}}
    }
    assert set(pl.project_live(lines, pl.Tables())["t"]) == {"a=1,b=2"}


def naive_goldengate(messages: list[dict]) -> dict[str, dict[str, dict]]:
    """What AUTO CDC keyed on the message's key does with GoldenGate operations
    (benchmarks/peer/pipeline/goldengate_auto_cdc.py): in pos order, each copy once, the image
    as sent, a truncate ignored, a key change an update of the new key."""
    live: dict[str, dict[str, dict]] = {}
    seen = set()
    for m in sorted(messages, key=lambda m: m["pos"]):
        if m.get("op_type") not in ("I", "U", "D") or m["pos"] in seen:
            continue
        seen.add(m["pos"])
        keys = m.get("primary_keys") or []
        rows = live.setdefault(m["table"].lower(), {})
        if m["op_type"] == "D":
            rows.pop(pl.goldengate_key(keys, m["before"]), None)
        else:
            rows[pl.goldengate_key(keys, m["after"])] = gg.row_text(m["after"])
    return live


def test_every_difference_of_a_naive_consumer_of_generated_goldengate_traffic_has_a_cause() -> None:
    traffic = goldengate_traffic.generate(changes=400, seed=5)
    messages = [m for partition in traffic.partitions for m in partition]
    texts = [[gg.dumps(m) for m in partition] for partition in traffic.partitions]
    tables = pl.Tables()
    events = pl.goldengate_events(lines_of(*texts), tables)
    key_causes = pl.causes(events)
    per_class, _ = pl.diff_live(traffic.expected_current, naive_goldengate(messages), key_causes)
    assert per_class["truncates"] and per_class["partial images"]
    assert pl.UNEXPLAINED not in per_class and pl.NEVER_HAD not in per_class
    assert pl.diff_live(traffic.expected_current, traffic.expected_current, key_causes)[0] == {}


def test_generated_canal_traffic_keys_all_have_events(tmp_path: Path) -> None:
    traffic = canal_traffic.generate(changes=300, seed=5)
    files = traffic.write(tmp_path)
    tables = pl.Tables()
    key_causes = pl.causes(pl.canal_events(pl.message_lines(files), tables))
    counts = pl.cause_counts(key_causes)
    assert counts["truncates"] and counts["partial images"] and counts["primary-key changes"]
    assert counts["redelivery"] and counts["schema changes"]
    assert "shop.audit_log" not in tables.keys  # no key: no flow, not expected either
    assert set(tables.keys) == set(traffic.expected_current)


@pytest.mark.parametrize("table_id", ["orclpdb1.sales.customers", "gendb.orders"])
def test_target_name(table_id: str) -> None:
    assert pl.target_name(table_id) == table_id.replace(".", "_")


def test_ces_values_in_text_forms() -> None:
    assert pl.ces_value_text("datetime2(7)", "2025-03-14 09:00:01.1234567") == "2025-03-14 09:00:01.123456"
    assert pl.ces_value_text("datetime2(7)", "2025-03-14 09:00:01.1000003") == "2025-03-14 09:00:01.1"
    assert pl.ces_value_text("datetime2(7)", "2025-03-14 09:00:01.0000009") == "2025-03-14 09:00:01"
    assert pl.ces_value_text("bit", "1") == "true" and pl.ces_value_text("bit", "0") == "false"
    assert pl.ces_value_text("varbinary(max)", "0x00FF") == base64.b64encode(b"\x00\xff").decode()
    assert pl.ces_value_text("int", "7") == "7" and pl.ces_value_text("int", None) is None


def naive_ces(events: list[pl.Event], messages: list[str]) -> dict[str, dict[str, dict]]:
    """What AUTO CDC does with CES events (benchmarks/peer/pipeline/ces_auto_cdc.py): in commit
    order, each once, the image as sent; a split event's pieces parse to nothing and are lost."""
    live: dict[str, dict[str, dict]] = {}
    done = set()
    for event in sorted(events, key=lambda e: e.order):
        if event.copy in done or pl.SPLIT in event.notes:
            continue
        done.add(event.copy)
        data = json.loads(json.loads(event.text)["data"])
        types = {c["name"]: c["type"] for c in data["eventsource"]["cols"]}
        rows = live.setdefault(event.table_id, {})
        if event.kind == "delete":
            rows.pop(event.old_key, None)
        else:
            current = json.loads(data["eventrow"]["current"])
            rows[event.new_key] = {c: pl.ces_value_text(types[c], v) for c, v in current.items()}
    return live


def test_every_difference_of_a_naive_consumer_of_generated_ces_traffic_has_a_cause(tmp_path: Path) -> None:
    traffic = ces_traffic.generate(changes=400, seed=5, big_every=40)
    files = traffic.write(tmp_path)
    tables = pl.Tables()
    events = pl.ces_events(pl.message_lines(files), tables)
    split = [e for e in events if pl.SPLIT in e.notes]
    assert traffic.split_events and len({e.copy for e in split}) == traffic.split_events
    key_causes = pl.causes(events)
    counts = pl.cause_counts(key_causes)
    assert counts[pl.SPLIT] and counts["redelivery"] and counts["out-of-order delivery"]
    per_class, _ = pl.diff_live(traffic.expected_current, naive_ces(events, []), key_causes)
    assert per_class[pl.SPLIT]
    assert pl.UNEXPLAINED not in per_class and pl.NEVER_HAD not in per_class
    assert pl.diff_live(traffic.expected_current, traffic.expected_current, key_causes)[0] == {}


CUSTOMERS = dw.Table("MySQL", "8.0", "shop", None, "customers", (("id", "LONG"), ("name", "STRING")), ("id",))
VISITS = dw.Table("MySQL", "8.0", "shop", None, "visits", (("url", "STRING"), (dw.MYSQL_ROW_ID, "LONG")))


def dw_position(number: int, event_ms: int = 1000) -> dw.Position:
    return dw.Position(dw.sequence_id(1_700_000_000_000, number), event_ms, event_ms + 5)


def test_dataworks_causes_from_hand_made_records() -> None:
    one, two = {"id": 1, "name": "a"}, {"id": 2, "name": "b"}
    records = [
        dw.insert(CUSTOMERS, one, dw_position(1)),
        dw.insert(CUSTOMERS, two, dw_position(2)),  # the same transaction: one eventTime
        *dw.update_pair(CUSTOMERS, one, {"id": 1, "name": "c"}, dw_position(3, 2000)),
        dw.update_single(CUSTOMERS, two, {"id": 3, "name": "b"}, dw_position(4, 3000)),
        dw.ddl(CUSTOMERS, "TRUNCATE", "TRUNCATE TABLE `customers`", dw_position(5, 4000)),
        dw.insert(CUSTOMERS, {"id": 1, "name": "d"}, dw_position(6, 5000)),
        dw.insert(VISITS, {"url": "/", dw.MYSQL_ROW_ID: 7}, dw_position(7, 6000)),
        dw.heartbeat(7000),
    ]
    texts = [dw.dumps(r) for r in records]
    copy = texts[3]  # the UPDATE_AFTER of the pair, delivered again
    tables = pl.Tables()
    events = pl.dataworks_events(lines_of([*texts, copy]), tables)
    assert [e.kind for e in events] == [
        "insert",
        "insert",
        "update",
        "update",
        "truncate",
        "insert",
        "insert",
    ] + ["update"]
    assert events[2].old_key == events[2].new_key == "id=1"  # the pair's old image from its UPDATE_BEFOR
    assert tables.keys == {"shop.customers": ["id"], "shop.visits": [dw.MYSQL_ROW_ID]}
    found = pl.causes(events)
    assert list(found["shop.customers"]["id=1"]) == [
        "truncates",
        "deletes and re-inserts",
        "redelivery",
        "transactions",
    ]
    assert found["shop.customers"]["id=1"]["redelivery"] == copy
    assert list(found["shop.customers"]["id=2"]) == ["primary-key changes", "transactions"]
    assert list(found["shop.customers"]["id=3"]) == ["truncates", "primary-key changes"]
    assert "shop.visits" not in found  # one insert: nothing could go wrong


def test_dataworks_values_in_text_forms() -> None:
    assert pl.dataworks_value_text("DATE", "1590315269000") == "2020-05-24 10:14:29"
    assert (
        pl.dataworks_value_text("DOUBLE", "1.0E7")
        == pl.dataworks_value_text("DOUBLE", "10000000")
        == "10000000.0"
    )
    assert pl.dataworks_value_text("BOOLEAN", "true") == "true"
    assert pl.dataworks_value_text("LONG", "42") == "42" and pl.dataworks_value_text("STRING", None) is None
    assert pl.peer_value_text("dataworks", {"d": "DATE"}, "d", "0") == "1970-01-01 00:00:00"


def naive_dataworks(events: list[pl.Event]) -> dict[str, dict[str, dict]]:
    """What AUTO CDC does with DataWorks records (benchmarks/peer/pipeline/dataworks_auto_cdc.py):
    INSERT, UPDATE_AFTER and DELETE in sequenceId order, a copy applied again, truncates not."""
    live: dict[str, dict[str, dict]] = {}
    for event in sorted(events, key=lambda e: e.order):
        if event.kind == "truncate":
            continue
        message = json.loads(event.text)
        table = pl.dataworks_table(message)
        rows = live.setdefault(event.table_id, {})
        if event.kind == "delete":
            rows.pop(event.old_key, None)
        else:
            after = message["payload"]["after"]["dataColumn"]
            rows[event.new_key] = dw.row_text(table, after)
    return live


def test_every_difference_of_a_naive_consumer_of_generated_dataworks_traffic_has_a_cause(
    tmp_path: Path,
) -> None:
    traffic = dataworks_traffic.generate(changes=400, seed=5)
    files = traffic.write(tmp_path)
    tables = pl.Tables()
    events = pl.dataworks_events(pl.message_lines(files), tables)
    key_causes = pl.causes(events)
    counts = pl.cause_counts(key_causes)
    assert counts["truncates"] and counts["redelivery"] and counts["schema changes"]
    assert set(tables.keys) == set(traffic.expected_current)
    per_class, _ = pl.diff_live(traffic.expected_current, naive_dataworks(events), key_causes)
    assert per_class["truncates"]
    assert pl.UNEXPLAINED not in per_class and pl.NEVER_HAD not in per_class
    assert pl.diff_live(traffic.expected_current, traffic.expected_current, key_causes)[0] == {}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (17520.0, "17520.0"),
        (1e7, "1.0E7"),
        (9999999.5, "9999999.5"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-2.5, "-2.5"),
        (123456789012345678901234.5, "1.2345678901234569E23"),
        (0.0, "0.0"),
    ],
)
def test_java_double_text(value: float, text: str) -> None:
    assert pl.java_double_text(value) == text


def test_numbers_read_through_a_double() -> None:
    assert pl.read_through_double("17520.00") == "17520.0"
    assert pl.read_through_double("42") == "42"  # an integer keeps its digits
    assert pl.read_through_double("1E2") == "100.0"
    assert pl.read_through_double("123456789012345678901234.50") == "1.2345678901234569E23"
    insert = gg_op("I", 1, after={"ID": 1, "PRICE": "@17520.00@"})
    insert = insert.replace('"@17520.00@"', "17520.00")  # the decimal's digits as GoldenGate sends them
    plain = gg_op("I", 2, after={"ID": 2, "PRICE": 12.5})
    _, found = gg_causes([insert, plain])
    assert pl.THROUGH_A_DOUBLE in found["s.t"]["ID=1"] and pl.THROUGH_A_DOUBLE not in found["s.t"]["ID=2"]
    expected = {"s.t": {"ID=1": {"ID": "1", "PRICE": "17520.00"}, "ID=2": {"ID": "2", "PRICE": "12.5"}}}
    peer = {"s.t": {"ID=1": {"ID": "1", "PRICE": "17520.0"}, "ID=2": {"ID": "2", "PRICE": "12.5"}}}
    causes = {"s.t": {"ID=1": {"transactions": "x"}}}  # the only difference is the double's
    assert pl.diff_live(expected, peer, causes)[0] == {pl.THROUGH_A_DOUBLE: 1}
    peer["s.t"]["ID=1"]["PRICE"] = None  # another difference: the key's noted causes say
    assert pl.diff_live(expected, peer, causes)[0] == {"transactions": 1}


def test_abbreviated_messages_keep_every_field() -> None:
    text = json.dumps({"data": "x" * 300, "segmentindex": 2, "nested": {"v": ["y" * 250]}})
    short = json.loads(pl.abbreviated(text, keep=10))
    assert short == {
        "data": "xxxxxxxxxx… (290 more characters)",
        "segmentindex": 2,
        "nested": {"v": ["yyyyyyyyyy… (240 more characters)"]},
    }
    assert pl.abbreviated("not json") == "not json"
    sent = '{"after": {"PRICE": 17520.00, "NOTE": "' + "z" * 300 + '"}}'
    assert pl.abbreviated(sent, keep=400) == sent  # nothing to cut: the digits as sent
