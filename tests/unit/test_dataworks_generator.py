"""The DataWorks message generator, without Spark: builders against the document's examples,
determinism, the documented shape of every message, both update modes, heartbeats, DDL,
redeliveries, keyed partitions, and an expected outcome that follows from the messages."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cdc_tools.generators import dataworks_messages as dw
from cdc_tools.generators.dataworks_traffic import Traffic, generate

REFERENCE = Path(__file__).parents[2] / "sample_data" / "dataworks" / "jsonl" / "reference_examples.jsonl"
ALL_OPS = (*dw.ROW_OPS, *dw.DDL_OPS, *dw.CONTROL_OPS)
PYTHON_TYPES = {"BOOLEAN": bool, "DOUBLE": float, "DATE": int, "BYTES": str, "LONG": int, "STRING": str}


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return generate(changes=200, seed=7)


def messages(traffic: Traffic) -> list[dict[str, Any]]:
    return [m for partition in traffic.partitions for m in partition]


def unique_in_order(traffic: Traffic) -> list[dict[str, Any]]:
    """Each distinct record once, in the order the source produced it (sequenceId)."""
    distinct = {dw.dumps(m): m for m in messages(traffic) if m["payload"]["sequenceId"] is not None}
    ops = {op: i for i, op in enumerate(ALL_OPS)}  # UPDATE_BEFOR before UPDATE_AFTER
    return sorted(distinct.values(), key=lambda m: (m["payload"]["sequenceId"], ops[m["payload"]["op"]]))


def table_of(message: dict[str, Any]) -> dw.Table:
    schema = message["schema"]
    source = schema["source"]
    columns = tuple((c["name"], c["type"]) for c in schema["dataColumn"])
    key = tuple(schema["primaryKey"]) if schema["primaryKey"] else None
    return dw.Table(
        source["dbType"],
        source["dbVersion"],
        source["dbName"],
        source["schemaName"],
        source["tableName"],
        columns,
        key,
    )


# -- builders ------------------------------------------------------------------------
def test_builders_reproduce_the_documents_examples() -> None:
    reference = [json.loads(line) for line in REFERENCE.read_text(encoding="utf-8").splitlines()]
    for line in reference:
        line["version"] = dw.VERSION
    table = dw.Table(
        "MySQL",
        "",
        "pkset_test",
        None,
        "pkset_test_no_pk",
        tuple((c, "STRING") for c in ("name", "job", "sex")),
    ).add_column(dw.MYSQL_ROW_ID, "LONG")
    man = {"name": "name11", "job": "job11", "sex": "man", dw.MYSQL_ROW_ID: 15}
    woman = {**man, "sex": "woman"}
    update = dw.Position("1620457642589000001", 1620458077000, 1620458077779)
    built = [
        dw.heartbeat(1620457659000),
        dw.insert(table, man, dw.Position("1620457642589000000", 1620457896000, 1620457896977)),
        *dw.update_pair(table, man, woman, update),
        dw.update_single(table, man, woman, update),
        dw.delete(table, woman, dw.Position("1620457642589000002", 1620458266000, 1620458266101)),
    ]
    for message in built[1:]:  # the document's source block has no dbVersion and no schemaName
        source = message["schema"]["source"]
        del source["dbVersion"], source["schemaName"]
    assert built == reference[1:]


def test_values_and_their_text_forms() -> None:
    moment = dw.EPOCH.replace(year=2025, month=3, day=14, hour=9, minute=30, second=5, microsecond=120_000)
    assert dw.date_ms(moment) == 1741944605120
    assert dw.value_text("DATE", 1741944605120) == "2025-03-14 09:30:05.12"
    assert dw.value_text("DATE", 1741944605000) == "2025-03-14 09:30:05"
    assert dw.value_text("DATE", -86_400_000) == "1969-12-31 00:00:00"
    assert dw.value_text("BOOLEAN", False) == "false"
    assert dw.value_text("DOUBLE", 12.5) == "12.5"
    assert dw.value_text("LONG", 105) == "105"
    assert dw.value_text("STRING", None) is None
    assert dw.bytes_value(b"\x01\x02\x03\x04") == "AQIDBA=="
    assert dw.sequence_id(1620457642589, 2) == "1620457642589000002"
    assert base64.b64decode(dw.ddl_meta("TRUNCATE TABLE t")).startswith(b"\xac\xed\x00\x05t\x00\x10")
    with pytest.raises(ValueError):
        dw.ddl(dw.Table("MySQL", "8.0", "d", None, "t", ()), "INSERT", "x", dw.Position("1", 1, 1))


# -- traffic -------------------------------------------------------------------------
def test_same_seed_same_traffic() -> None:
    first, again = generate(changes=60, seed=3), generate(changes=60, seed=3)
    assert first.partitions == again.partitions and first.expected_current == again.expected_current
    assert generate(changes=60, seed=4).partitions != first.partitions


def test_every_message_has_the_documented_shape(traffic: Traffic) -> None:
    for message in messages(traffic):
        assert list(message) == ["schema", "payload", "version"] and message["version"] == dw.VERSION
        schema, payload = message["schema"], message["payload"]
        assert list(schema) == ["dataColumn", "primaryKey", "source"]
        assert set(payload) - {"scn"} == {"before", "after", "sequenceId", "op", "timestamp", "ddl"}
        assert payload["op"] in ALL_OPS
        stamp = payload["timestamp"]
        assert set(stamp) <= {"eventTime", "systemTime", "checkpointTime"} and "eventTime" in stamp
        assert all(isinstance(v, int) and len(str(v)) == 13 for v in stamp.values())
        if payload["op"] == "MHEARTBEAT":
            continue
        assert len(payload["sequenceId"]) == 19 and payload["sequenceId"].isdigit()
        source = schema["source"]
        assert list(source) == ["dbType", "dbVersion", "dbName", "schemaName", "tableName"]
        assert ("scn" in payload) == (source["dbType"] == "Oracle")
        assert "scn" not in payload or payload["scn"].isdigit()
        if payload["op"].startswith("TRANSACTION_"):
            assert schema["dataColumn"] is None and source["tableName"] is None
            continue
        types = {c["name"]: c["type"] for c in schema["dataColumn"]}
        assert set(types.values()) <= set(dw.TYPES)
        for image in (payload["before"], payload["after"]):
            if image is None:
                continue
            assert list(image) == ["dataColumn"] and set(image["dataColumn"]) <= set(types)
            for column, value in image["dataColumn"].items():
                assert value is None or type(value) is PYTHON_TYPES[types[column]], (column, value)
                if value is not None and types[column] == "BYTES":
                    base64.b64decode(value, validate=True)


def test_row_tables_keys_and_types(traffic: Traffic) -> None:
    tables = {t.table_id: t for t in traffic.tables}
    assert (
        set(traffic.expected_current)
        == set(tables)
        == {"shop.customers", "shop.page_visits", "orcl.hr.employees"}
    )
    assert tables["shop.customers"].key == ("id",)
    assert tables["shop.page_visits"].primary_key is None and tables["shop.page_visits"].key == (
        dw.MYSQL_ROW_ID,
    )
    assert tables["orcl.hr.employees"].primary_key is None and tables["orcl.hr.employees"].key == ("rowid",)
    assert set(tables["shop.customers"].types.values()) == set(dw.TYPES)


def test_both_update_modes_and_pairs_share_a_sequence_id(traffic: Traffic) -> None:
    records = unique_in_order(traffic)
    singles = [m for m in records if m["payload"]["op"] == "UPDATE_AFTER" and m["payload"]["before"]]
    befores = [m for m in records if m["payload"]["op"] == "UPDATE_BEFOR"]
    afters = {m["payload"]["sequenceId"]: m for m in records if m["payload"]["op"] == "UPDATE_AFTER"}
    assert singles and befores
    for before in befores:
        after = afters[before["payload"]["sequenceId"]]
        assert after["payload"]["before"] is None and before["payload"]["after"] is None
        assert (
            after["schema"] == before["schema"]
            and after["payload"]["timestamp"] == before["payload"]["timestamp"]
        )
    sequence_ids = Counter(m["payload"]["sequenceId"] for m in records)
    assert {s for s, n in sequence_ids.items() if n > 1} == {b["payload"]["sequenceId"] for b in befores}


def test_heartbeats_and_transaction_markers(traffic: Traffic) -> None:
    heartbeats = [m for m in messages(traffic) if m["payload"]["op"] == "MHEARTBEAT"]
    assert len({dw.dumps(m) for m in heartbeats}) == traffic.heartbeats >= 5
    for message in heartbeats:
        assert message["schema"] == {"dataColumn": None, "primaryKey": None, "source": None}
        payload = message["payload"]
        assert payload["before"] is None and payload["after"] is None and payload["sequenceId"] is None
        assert payload["ddl"] is None and "systemTime" not in payload["timestamp"]
    ops = Counter(m["payload"]["op"] for m in unique_in_order(traffic))
    assert ops["TRANSACTION_BEGIN"] == ops["TRANSACTION_END"] > 0
    assert ops["TRANSACTION_BEGIN"] * 2 == traffic.transaction_markers


def test_ddl_messages_carry_their_text(traffic: Traffic) -> None:
    for message in messages(traffic):
        payload = message["payload"]
        if payload["op"] in dw.DDL_OPS:
            assert payload["ddl"]["text"] and base64.b64decode(payload["ddl"]["ddlMeta"])
            assert payload["before"] is None and payload["after"] is None
        else:
            assert payload["ddl"] is None
    logged = [
        (table_of(m).table_id, m["payload"]["op"], m["payload"]["ddl"]["text"])
        for m in unique_in_order(traffic)
        if m["payload"]["op"] in dw.DDL_OPS
    ]
    assert logged == traffic.expected_ddl
    assert [op for _, op, _ in logged] == ["ALTER", "CREATE", "TRUNCATE", "RENAME"]


def test_expected_current_follows_from_the_messages(traffic: Traffic) -> None:
    """Replaying the distinct records in sequenceId order gives exactly the expected live rows."""
    live: dict[str, dict[str, dict[str, str | None]]] = {t.table_id: {} for t in traffic.tables}
    for message in unique_in_order(traffic):
        payload, op = message["payload"], message["payload"]["op"]
        if op == "TRUNCATE":
            live[table_of(message).table_id].clear()
        if op not in ("INSERT", "UPDATE_AFTER", "DELETE"):
            continue
        table = table_of(message)
        row = (payload["after"] or payload["before"])["dataColumn"]
        key = dw.key_text(table, row)
        if op == "DELETE":
            del live[table.table_id][key]
        else:
            assert (key in live[table.table_id]) == (op == "UPDATE_AFTER"), (op, key)
            live[table.table_id][key] = dw.row_text(table, row)
    assert live == traffic.expected_current


def test_truncate_and_added_column_show_in_expected_current(traffic: Traffic) -> None:
    records = unique_in_order(traffic)
    truncate = next(m["payload"]["sequenceId"] for m in records if m["payload"]["op"] == "TRUNCATE")
    customers = [
        m for m in records if m["schema"]["source"] and m["schema"]["source"]["tableName"] == "customers"
    ]
    survivors = traffic.expected_current["shop.customers"]
    assert survivors and any(m["payload"]["sequenceId"] < truncate for m in customers)
    for key in survivors:  # every live customer was (re)inserted after the truncate
        inserts = [
            m
            for m in customers
            if m["payload"]["op"] == "INSERT" and key == f"id={m['payload']['after']['dataColumn']['id']}"
        ]
        assert inserts[-1]["payload"]["sequenceId"] > truncate
    reused = Counter(
        m["payload"]["after"]["dataColumn"]["id"] for m in customers if m["payload"]["op"] == "INSERT"
    )
    assert reused.most_common(1)[0][1] == 2  # one id inserted again after the truncate
    employees = traffic.expected_current["orcl.hr.employees"].values()
    assert any("EMAIL" in row for row in employees) and any("EMAIL" not in row for row in employees)
    alter = next(m for m in records if m["payload"]["op"] == "ALTER")
    assert [c["name"] for c in alter["schema"]["dataColumn"]][-2:] == ["EMAIL", "rowid"]
    for message in records:
        if message["schema"]["source"] and message["schema"]["source"]["tableName"] == "EMPLOYEES":
            has_email = "EMAIL" in [c["name"] for c in message["schema"]["dataColumn"]]
            assert has_email == (message["payload"]["sequenceId"] >= alter["payload"]["sequenceId"])


def test_redeliveries_include_half_of_a_pair(traffic: Traffic) -> None:
    copies = Counter(dw.dumps(m) for m in messages(traffic))
    repeated = [json.loads(text) for text, n in copies.items() if n > 1]
    assert sum(n - 1 for n in copies.values()) == traffic.redeliveries > 0
    assert any(
        m["payload"]["op"] == "UPDATE_BEFOR" or m["payload"]["before"] is None
        for m in repeated
        if "UPDATE" in m["payload"]["op"]
    )


def test_a_rows_records_stay_in_one_partition_in_order(traffic: Traffic) -> None:
    where: dict[str, set[int]] = {}
    for number, partition in enumerate(traffic.partitions):
        delivered: set[str] = set()
        last: dict[str, str] = {}
        for message in partition:
            payload, text = message["payload"], dw.dumps(message)
            if payload["op"] not in dw.ROW_OPS or text in delivered:  # skip redelivered copies
                continue
            delivered.add(text)
            table = table_of(message)
            image = (payload["after"] or payload["before"])["dataColumn"]
            row = f"{table.table_id}|{dw.key_text(table, image)}"
            where.setdefault(row, set()).add(number)
            assert payload["sequenceId"] >= last.get(row, ""), row
            last[row] = payload["sequenceId"]
    assert all(len(partitions) == 1 for partitions in where.values())
    assert all(traffic.partitions)


def test_write(traffic: Traffic, tmp_path: Path) -> None:
    paths = traffic.write(tmp_path / "traffic")
    assert [p.name for p in paths] == ["partition-0.jsonl", "partition-1.jsonl", "partition-2.jsonl"]
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    assert lines == [dw.dumps(m) for m in traffic.partitions[0]] and ": " not in lines[0][:40]
    assert (
        json.loads((tmp_path / "traffic" / "_expected_current.json").read_text()) == traffic.expected_current
    )
