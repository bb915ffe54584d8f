"""The Canal message generator, without Spark: determinism, the flat message's shape, multi-row
messages with `old` aligned by index, key changes, partial images, DDL, the table without a key,
redeliveries, a table's messages in one partition, and an expected outcome that follows from
replaying the messages."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from cdc_tools.generators import GenerateOptions
from cdc_tools.generators import canal_messages as cm
from cdc_tools.generators.canal_traffic import (
    Traffic,
    fresh_identity,
    generate,
    generate_named,
    message_body,
    table_partition,
    write_traffic,
)
from python_ingest.producers import canal as detector

KEYS = {
    "data",
    "database",
    "es",
    "id",
    "isDdl",
    "mysqlType",
    "old",
    "pkNames",
    "sql",
    "sqlType",
    "table",
    "ts",
    "type",
}


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return generate(changes=200, seed=7)


def messages(traffic: Traffic) -> list[dict[str, Any]]:
    return [m for partition in traffic.partitions for m in partition]


def contents(message: dict[str, Any]) -> str:
    """What a redelivered copy repeats: all but Canal's batch id and handling time."""
    return cm.dumps({k: v for k, v in message.items() if k not in ("id", "ts")})


def test_same_seed_same_traffic() -> None:
    assert cm.dumps(generate(60, 3).partitions) == cm.dumps(generate(60, 3).partitions)
    assert cm.dumps(generate(60, 3).partitions) != cm.dumps(generate(60, 4).partitions)


def test_every_message_has_the_flat_message_shape(traffic: Traffic) -> None:
    for message in messages(traffic):
        assert KEYS <= set(message) <= KEYS | {"gtid"}
        assert detector.matches(message)
        assert isinstance(message["es"], int) and message["es"] % 1000 == 0 and message["ts"] > message["es"]
        if message["isDdl"]:
            assert message["type"] in cm.DDL_TYPES and message["data"] is None and message["sql"]
            continue
        assert message["type"] in cm.ROW_TYPES and message["data"]
        assert all(isinstance(v, str | None) for row in message["data"] for v in row.values())
        assert all(set(row) <= set(message["mysqlType"]) for row in message["data"])
        assert set(message["sqlType"]) == set(message["mysqlType"])
        if message["type"] == "UPDATE":
            assert len(message["old"]) == len(message["data"])
            for row, old in zip(message["data"], message["old"], strict=True):
                assert old and all(row[c] != v for c, v in old.items())
        else:
            assert message["old"] is None


def test_edge_cases_are_all_there(traffic: Traffic) -> None:
    found = messages(traffic)
    assert traffic.multi_row_messages > 0 and any(len(m["data"] or ()) > 1 for m in found)
    assert any(m["type"] == "UPDATE" and len(m["data"]) > 1 for m in found)
    assert traffic.key_changes > 0
    assert any(m["type"] == "UPDATE" and any(k in o for o in m["old"] for k in m["pkNames"]) for m in found)
    assert traffic.partial_updates > 0
    assert any(m["table"] == "orders" and m["type"] == "UPDATE" and "note" not in m["data"][0] for m in found)
    assert traffic.keyless_messages > 0 and any(m["pkNames"] is None and not m["isDdl"] for m in found)
    assert [t for _, t, _ in traffic.expected_ddl] == ["CREATE", "ALTER", "TRUNCATE", "RENAME"]
    assert any(m["pkNames"] == ["order_id", "line_no"] for m in found)


def test_redeliveries_repeat_contents_in_another_batch(traffic: Traffic) -> None:
    assert traffic.redeliveries > 0
    for partition in traffic.partitions:
        seen: dict[str, dict[str, Any]] = {}
        for message in partition:
            first = seen.setdefault(contents(message), message)
            if first is not message:
                assert message["id"] != first["id"] and message["ts"] > first["ts"]
    distinct = {contents(m) for m in messages(traffic)}
    assert len(distinct) == traffic.messages - traffic.redeliveries


def test_a_tables_messages_stay_in_one_partition_in_order(traffic: Traffic) -> None:
    for number, partition in enumerate(traffic.partitions):
        assert all(table_partition(m["table"], len(traffic.partitions)) == number for m in partition)
        seen: set[str] = set()
        times = [m["es"] for m in partition if not (contents(m) in seen or seen.add(contents(m)))]
        assert times == sorted(times)


def replay(traffic: Traffic) -> dict[str, dict[str, dict[str, str | None]]]:
    """The live rows, as gold shows them, from the messages alone: each distinct message once, in
    (es, partition, place) order; a column a message leaves out keeps its value."""
    ordered, seen = [], set()
    for number, partition in enumerate(traffic.partitions):
        for place, message in enumerate(partition):
            if contents(message) not in seen:
                seen.add(contents(message))
                ordered.append((message["es"], number, place, message))
    live: dict[str, dict[str, dict[str, str | None]]] = {}
    for _, _, _, message in sorted(ordered, key=lambda item: item[:3]):
        table_id = f"{message['database']}.{message['table']}"
        rows = live.setdefault(table_id, {})
        if message["type"] == "TRUNCATE":
            rows.clear()
        if message["isDdl"] or not message["pkNames"]:
            continue
        table = cm.Table(
            message["database"],
            message["table"],
            tuple(message["mysqlType"].items()),
            tuple(message["pkNames"]),
        )
        for index, row in enumerate(message["data"]):
            text = cm.row_text(table, row)
            if message["type"] == "DELETE":
                del rows[cm.key_text(table, row)]
            elif message["type"] == "INSERT":
                rows[cm.key_text(table, row)] = text
            else:
                before = {**row, **message["old"][index]}
                previous = rows.pop(cm.key_text(table, before))
                rows[cm.key_text(table, row)] = {**previous, **text}
    return {t: rows for t, rows in live.items() if rows or t in traffic.expected_current}


def test_expected_current_follows_from_the_messages(traffic: Traffic) -> None:
    replayed = replay(traffic)
    assert {t: replayed.get(t, {}) for t in traffic.expected_current} == traffic.expected_current
    assert "shop.audit_log" not in traffic.expected_current


def test_values_and_their_text_forms() -> None:
    assert (
        cm.value_text("varbinary(8)", cm.bytes_value(b"\x01\xff")) == base64.b64encode(b"\x01\xff").decode()
    )
    assert cm.value_text("decimal(10,2)", "12.50") == "12.50"
    assert cm.value_text("datetime", "2025-03-14 09:00:00") == "2025-03-14 09:00:00"
    assert cm.value_text("text", None) is None
    assert table_partition("orders", 3) == table_partition("orders", 3)


def test_the_sample_messages_are_canal_messages() -> None:
    sample = Path(__file__).parents[2] / "sample_data" / "canal" / "jsonl" / "canal_examples.jsonl"
    for line in sample.read_text(encoding="utf-8").splitlines():
        assert detector.matches(json.loads(line))


def test_hostile_input_helpers() -> None:
    named = generate_named(40, 3, 3, "hostile")
    assert all(m["database"] == "hostileshop" for p in named.partitions for m in p)
    message = named.partitions[0][0]
    body = message_body(message)
    assert body is message
    fresh_identity(body, 5)
    assert body["gtid"].endswith(":1000000000005")


def test_write(tmp_path: Path) -> None:
    line = write_traffic(tmp_path, GenerateOptions(changes=40, seed=2))
    files = sorted(tmp_path.glob("partition-*.jsonl"))
    assert len(files) == 3 and "canal message(s)" in line
    expected = json.loads((tmp_path / "_expected_current.json").read_text(encoding="utf-8"))
    assert set(expected) == {"gendb.orders", "gendb.order_lines"}
    for path in files:
        for text in path.read_text(encoding="utf-8").splitlines():
            assert detector.matches(json.loads(text))
