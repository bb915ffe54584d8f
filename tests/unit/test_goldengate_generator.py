"""The GoldenGate message generator, without Spark: the builders' shapes, determinism, the
documented fields of every message, compressed updates, key-only deletes, primary-key updates,
the truncate, redeliveries, the schema topic, and an expected outcome that follows from the
messages (replayed here in pos order, as gold applies them)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_tools.generators import GenerateOptions, traffic_module
from cdc_tools.generators import goldengate_messages as gg
from cdc_tools.generators.goldengate_traffic import (
    Traffic,
    fresh_identity,
    generate,
    generate_named,
    message_body,
)
from python_ingest.detect import detect_shape

SAMPLE = Path(__file__).parents[2] / "sample_data" / "goldengate" / "jsonl" / "reference_examples.jsonl"
TIME = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$"


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return generate(changes=200, seed=7)


def messages(traffic: Traffic) -> list[dict[str, Any]]:
    return [m for partition in traffic.partitions for m in partition]


def test_builders() -> None:
    table = gg.Table("S.T", ("ID", "A", "B"), ("ID",))
    at = gg.Position(3, 1234, datetime(2025, 1, 2, 3, 4, 5, 6), datetime(2025, 1, 2, 3, 4, 6))
    assert at.pos == "00000000030000001234"
    inserted = gg.insert(table, {"ID": 1, "A": "x", "B": None}, at)
    assert inserted == {
        "table": "S.T",
        "op_type": "I",
        "op_ts": "2025-01-02 03:04:05.000006",
        "current_ts": "2025-01-02T03:04:06.000000",
        "pos": "00000000030000001234",
        "primary_keys": ["ID"],
        "after": {"ID": 1, "A": "x", "B": None},
    }
    compressed = gg.update(
        table, {"ID": 1, "A": "x", "B": 2}, {"ID": 1, "A": None, "B": 2}, at, compressed=True
    )
    assert compressed["before"] == {"ID": 1, "A": "x"} and compressed["after"] == {"ID": 1, "A": None}
    assert gg.delete(table, {"ID": 1, "A": "x", "B": 2}, at, key_only=True)["before"] == {"ID": 1}
    truncated = gg.truncate(gg.Table("S.K", ("A",)), at)
    assert "before" not in truncated and "after" not in truncated and "primary_keys" not in truncated
    with pytest.raises(ValueError):
        gg.operation(table, "X", at)
    assert gg.value_text(12.5) == "12.5" and gg.value_text(7) == "7" and gg.value_text(None) is None
    # A decimal goes out as a JSON number with exactly its digits, and gold shows those digits.
    price = Decimal(1752000).scaleb(-2)
    assert gg.value_text(price) == "17520.00"
    sent = gg.dumps({"P": price, "Q": [Decimal("-0.50")], "S": "a\u0000b"})
    assert sent == '{"P":17520.00,"Q":[-0.50],"S":"a\\u0000b"}'
    assert gg.key_text(gg.Table("S.K", ("B", "A")), {"B": 2, "A": "x"}) == "A=x,B=2"


def test_same_seed_same_traffic() -> None:
    first, again = generate(changes=60, seed=3), generate(changes=60, seed=3)
    assert first.partitions == again.partitions and first.expected_current == again.expected_current
    assert generate(changes=60, seed=4).partitions != first.partitions


def test_every_message_has_the_documented_shape_and_is_detected(traffic: Traffic) -> None:
    for message in messages(traffic):
        assert set(message) <= {
            "table", "op_type", "op_ts", "current_ts", "pos", "primary_keys", "tokens", "before", "after",
        }  # fmt: skip
        assert message["op_type"] in gg.OPERATIONS and len(message["table"].split(".")) in (2, 3)
        assert len(message["pos"]) == 20 and message["pos"].isdigit()
        datetime.strptime(message["op_ts"], "%Y-%m-%d %H:%M:%S.%f")
        datetime.strptime(message["current_ts"], "%Y-%m-%dT%H:%M:%S.%f")
        op = message["op_type"]
        assert ("after" in message) == (op in "IU") and ("before" in message) == (op in "UD")
        if message.get("primary_keys"):
            for image in (message.get("before"), message.get("after")):
                assert image is None or set(message["primary_keys"]) <= set(image)
        assert detect_shape(message) == "goldengate"
    for document in traffic.schemas:
        assert detect_shape(document) == "goldengate"
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        assert detect_shape(json.loads(line)) == "goldengate"


def test_the_edge_cases_are_there(traffic: Traffic) -> None:
    sent = messages(traffic)
    ops = Counter(m["op_type"] for m in sent)
    assert ops["I"] and ops["U"] and ops["D"] and ops["T"] == 1
    keyed_updates = [m for m in sent if m["op_type"] == "U" and m.get("primary_keys")]
    columns = {t.name: set(t.columns) for t in traffic.tables.values()}
    assert any(set(m["after"]) < columns[m["table"]] for m in keyed_updates)  # compressed images
    assert traffic.compressed_updates > 0 and traffic.key_updates > 0
    assert any(
        m["op_type"] == "U" and any(m["before"][k] != m["after"][k] for k in m["primary_keys"])
        for m in keyed_updates
    )
    assert any(
        m["op_type"] == "D" and set(m["before"]) == set(m["primary_keys"])
        for m in sent
        if "primary_keys" in m
    )
    assert any("primary_keys" not in m for m in sent)  # the keyless table
    assert any(m["table"].count(".") == 2 for m in sent) and any(m["table"].count(".") == 1 for m in sent)
    assert len({m["pos"][:10] for m in sent}) > 1  # the trail rolled over
    copies = Counter((m["table"], m["pos"]) for m in sent)
    assert sum(n - 1 for n in copies.values()) == traffic.redeliveries > 0
    assert [s["title"] for s in traffic.schemas].count("ORCLPDB1.SALES.CUSTOMERS") == 2  # first seen, ALTER


def test_the_expected_rows_follow_from_the_messages(traffic: Traffic) -> None:
    """Replay every distinct operation in pos order as gold does: images laid over the row, a key
    change carrying the old row, a truncate emptying the table."""
    distinct = {(m["table"], m["pos"]): m for m in messages(traffic)}
    tables = {t.name: t for t in traffic.tables.values()}
    rows: dict[str, dict[str, dict[str, Any]]] = {t.table_id: {} for t in tables.values()}
    for (name, _), message in sorted(distinct.items(), key=lambda item: item[0][1]):
        table, live = tables[name], rows[name.lower()]
        before, after = message.get("before"), message.get("after")
        if message["op_type"] == "T":
            live.clear()
        elif message["op_type"] == "I":
            live[gg.key_text(table, after)] = dict(after)
        elif message["op_type"] == "D":
            del live[gg.key_text(table, before)]
        else:
            old = live.pop(gg.key_text(table, before))
            new = {**old, **after}
            live[gg.key_text(table, new)] = new
    expected = {t: {k: gg.row_text(r) for k, r in live.items()} for t, live in rows.items()}
    assert expected == traffic.expected_current


def test_hostile_input_hooks() -> None:
    named = generate_named(40, 3, 2, "hostile")
    assert all(m["table"].split(".")[-2] == "HOSTILESALES" for p in named.partitions for m in p)
    body = message_body({"table": "S.T", "pos": "1"})
    fresh_identity(body, 5)
    assert body["pos"] == "90000000000000000005" and len(body["pos"]) == 20


def test_write_traffic(tmp_path: Path) -> None:
    module = traffic_module("goldengate")
    line = module.write_traffic(tmp_path, GenerateOptions(changes=50, seed=2))
    assert "goldengate message(s)" in line
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["_expected_current.json", "partition-0.jsonl", "partition-1.jsonl", "partition-2.jsonl",
                     "schema-topic.jsonl"]  # fmt: skip
