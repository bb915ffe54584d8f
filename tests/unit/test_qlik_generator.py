"""The Qlik Replicate traffic generator, without Spark: determinism, streaming, the documented
shape of metadata and data messages, masks, REFRESH before CDC, the table version change, data
delivered before its metadata, redeliveries, and an expected outcome that follows from the
messages (replayed here the way a consumer applies them)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cdc_tools.generators import qlik_messages as qm
from cdc_tools.generators.qlik_traffic import Traffic, generate, write
from python_ingest.detect import detect_shape

REFERENCE = Path(__file__).parents[2] / "sample_data" / "qlik" / "jsonl" / "reference_examples.jsonl"


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return generate(changes=300, seed=7)


def messages(traffic: Traffic) -> list[dict[str, Any]]:
    assert traffic.partitions is not None
    return [m for partition in traffic.partitions for m in partition]


def body(message: dict[str, Any]) -> dict[str, Any]:
    return message["message"] if message.get("magic") == "atMSG" else message


def schema_id_of(message: dict[str, Any]) -> str:
    return (
        message["messageSchemaId"]
        if message.get("magic") == "atMSG"
        else message["headers"]["externalSchemaId"]
    )


def distinct(traffic: Traffic) -> list[dict[str, Any]]:
    return list({qm.dumps(m): m for m in messages(traffic)}.values())


def metadata_by_id(traffic: Traffic) -> dict[str, dict[str, Any]]:
    return {m["message"]["schemaId"]: m["message"] for m in messages(traffic) if m.get("type") == "MD"}


def test_same_seed_same_files_and_streaming_writes_the_same(tmp_path: Path) -> None:
    kept = generate(changes=120, seed=3, partitions=2)
    kept.write(tmp_path / "kept")
    streamed, paths = write(tmp_path / "streamed", changes=120, seed=3, partitions=2)
    assert streamed.partitions is None and [p.name for p in paths] == [
        "partition-0.jsonl",
        "partition-1.jsonl",
    ]
    for name in ("partition-0.jsonl", "partition-1.jsonl", "_expected_current.json"):
        assert (tmp_path / "kept" / name).read_bytes() == (tmp_path / "streamed" / name).read_bytes()
    assert generate(changes=120, seed=4, partitions=2).partitions != kept.partitions


def test_builders_match_the_reference_examples() -> None:
    reference = [json.loads(line) for line in REFERENCE.read_text(encoding="utf-8").splitlines()]
    md = reference[0]["message"]
    assert set(qm.metadata(generate(changes=10).tables["orders"])["message"]) == set(md)
    assert list(qm.headers("INSERT", None, "07", "07")) == list(reference[2]["message"]["headers"])
    bare_version = generate(changes=10).tables["documents"]
    bare = qm.data(bare_version, "INSERT", {}, None, None, "", "", envelope=False)
    assert list(bare) == list(reference[-1]) and list(bare["headers"]) == list(reference[-1]["headers"])
    assert qm.mask_ordinals("0B") == [1, 2, 4] and qm.mask_ordinals("008080") == [8, 16]


def test_every_message_is_recognised_as_qlik_and_has_its_documented_shape(traffic: Traffic) -> None:
    kinds = Counter()
    for message in messages(traffic):
        assert detect_shape(json.loads(qm.dumps(message))) == "qlik"
        if message.get("type") == "MD":
            kinds["MD"] += 1
            columns = message["message"]["tableStructure"]["tableColumns"]
            assert sorted(c["ordinal"] for c in columns.values()) == list(range(1, len(columns) + 1))
            continue
        kinds["DT" if message.get("magic") == "atMSG" else "bare"] += 1
        head = body(message)["headers"]
        assert head["operation"] in ("REFRESH", "INSERT", "UPDATE", "DELETE")
        if head["operation"] == "REFRESH":
            assert head["changeSequence"] == head["timestamp"] == head["transactionId"] == ""
            assert head["transactionEventCounter"] is None
        else:
            assert len(head["changeSequence"]) == 35 and head["changeSequence"].isdigit()
            assert len(head["transactionId"]) == 32 and head["transactionEventCounter"] >= 1
        assert schema_id_of(message) in metadata_by_id(traffic)
    assert kinds["MD"] >= 4 and kinds["DT"] > 100 and kinds["bare"] > 20


def test_masks_follow_the_documented_bit_semantics(traffic: Traffic) -> None:
    versions = metadata_by_id(traffic)
    left_out = 0
    for message in distinct(traffic):
        if message.get("type") == "MD":
            continue
        columns = versions[schema_id_of(message)]["tableStructure"]["tableColumns"]
        by_ordinal = {c["ordinal"]: name for name, c in columns.items()}
        lobs = {n for n, c in columns.items() if c["type"] in qm.LOB_TYPES}
        keys = {n for n, c in columns.items() if c["primaryKeyPosition"]}
        head, data = body(message)["headers"], body(message)["data"]
        changed = {by_ordinal[o] for o in qm.mask_ordinals(head["changeMask"])}
        sent = {by_ordinal[o] for o in qm.mask_ordinals(head["columnMask"])}
        assert set(data) == set(columns) and len(head["columnMask"]) == 2 * (len(columns) // 8 + 1)
        assert not changed & lobs  # LOB columns are not included in the changeMask
        if head["operation"] in ("REFRESH", "INSERT"):
            assert changed == set(columns) - lobs and sent == set(columns)
        elif head["operation"] == "DELETE":
            assert changed == keys and sent == set(columns)
        else:
            assert not changed & keys or "LINE_NO" in changed  # empty when only a LOB changed
            if sent != set(columns):
                assert set(columns) - sent <= lobs and all(data[c] is None for c in set(columns) - sent)
                left_out += 1
    assert left_out == traffic.lob_left_out > 0


def test_refresh_first_sequences_increase_and_the_table_version_changes(traffic: Traffic) -> None:
    produced = [m for m in distinct(traffic) if m.get("type") != "MD"]
    cdc = sorted(
        body(m)["headers"]["changeSequence"] for m in produced if body(m)["headers"]["changeSequence"]
    )
    assert len(cdc) == len(set(cdc)) >= 300
    versions = metadata_by_id(traffic)
    orders = sorted(
        (v["lineage"]["tableVersion"], sid)
        for sid, v in versions.items()
        if v["lineage"]["table"] == "ORDERS"
    )
    assert [v for v, _ in orders] == [1, 2]
    assert "CHANNEL" in versions[orders[1][1]]["tableStructure"]["tableColumns"]
    v2 = [m for m in produced if schema_id_of(m) == orders[1][1]]
    first_v2 = min(body(m)["headers"]["changeSequence"] for m in v2)
    v1_cdc = [body(m)["headers"]["changeSequence"] for m in produced if schema_id_of(m) == orders[0][1]]
    assert v2 and max(s for s in v1_cdc if s) < first_v2
    assert all("CHANNEL" in body(m)["data"] for m in v2)
    refresh = [m for m in produced if body(m)["headers"]["operation"] == "REFRESH"]
    assert len(refresh) == traffic.refresh_rows and not any(schema_id_of(m) == orders[1][1] for m in refresh)


def test_some_data_is_delivered_before_its_metadata_and_some_messages_twice(traffic: Traffic) -> None:
    assert traffic.partitions is not None
    *early, late = traffic.partitions
    early_ids = {m["message"]["schemaId"] for p in early for m in p if m.get("type") == "MD"}
    waiting = [m for p in early for m in p if m.get("type") != "MD" and schema_id_of(m) not in early_ids]
    assert waiting  # pending after landing all partitions but the last
    assert any(m.get("type") == "MD" for m in late)
    copies = Counter(qm.dumps(m) for m in messages(traffic))
    assert sum(n - 1 for n in copies.values()) == traffic.redeliveries > 0
    assert traffic.messages == len(messages(traffic))


def replay(traffic: Traffic) -> dict[str, dict[str, dict[str, str | None]]]:
    """Apply the distinct data messages as a consumer does: REFRESH rows first, then by changeSequence;
    columns whose columnMask bit is clear keep their value; an update whose before image has another
    key moves the row."""
    versions = metadata_by_id(traffic)
    data = [m for m in distinct(traffic) if m.get("type") != "MD"]

    def order(message: dict[str, Any]) -> tuple[int, str]:
        head = body(message)["headers"]
        return (0 if head["operation"] == "REFRESH" else 1, head["changeSequence"])

    state: dict[str, dict[str, dict[str, str | None]]] = {}
    for message in sorted(data, key=order):
        version = versions[schema_id_of(message)]
        lineage, columns = version["lineage"], version["tableStructure"]["tableColumns"]
        types = {n: qm.Column(n, c["type"], scale=c["scale"]) for n, c in columns.items()}
        by_ordinal = {c["ordinal"]: n for n, c in columns.items()}
        key = sorted((c["primaryKeyPosition"], n) for n, c in columns.items() if c["primaryKeyPosition"])
        head = body(message)["headers"]
        sent = {by_ordinal[o] for o in qm.mask_ordinals(head["columnMask"])}

        def image(row: dict[str, Any] | None, types=types, sent=sent) -> dict[str, str | None] | None:
            if row is None:
                return None
            return {c: qm.value_text(types[c], v) for c, v in row.items() if c in sent}

        def key_of(row: dict[str, Any], key=key) -> str:
            return ",".join(f"{c}={row[c]}" for _, c in key)

        rows = state.setdefault(f"{lineage['schema']}.{lineage['table']}".lower(), {})
        after, before = image(body(message)["data"]), image(body(message)["beforeData"])
        if head["operation"] == "DELETE":
            del rows[key_of(after)]
        elif head["operation"] in ("REFRESH", "INSERT"):
            assert key_of(after) not in rows
            rows[key_of(after)] = after
        elif before is not None and key_of(before) != key_of(after):
            del rows[key_of(before)]
            rows[key_of(after)] = after
        else:
            rows[key_of(after)] = {**rows[key_of(after)], **after}
    return state


def test_expected_rows_follow_from_the_messages(traffic: Traffic) -> None:
    assert replay(traffic) == traffic.expected_current
    orders = traffic.expected_current["sales.orders"].values()
    assert any("CHANNEL" in r for r in orders) and any("CHANNEL" not in r for r in orders)
    assert traffic.key_changes > 0
    values = [
        v for table in traffic.expected_current.values() for row in table.values() for v in row.values()
    ]
    assert None in values and "true" in values and any(v and v.endswith(".00") for v in values)
