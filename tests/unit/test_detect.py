"""land --format auto: each producer's messages are recognised by their shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_ingest.containers import RawMessage, ResumePoint
from python_ingest.detect import detect_format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def raw(value: str | None, key: str | None = None, headers: dict | None = None) -> RawMessage:
    return RawMessage("id", "file:///x", None, 1, key, value, headers, None, ResumePoint())


def sample_values(relative: str) -> list[str | None]:
    lines = (SAMPLES / relative).read_text(encoding="utf-8").splitlines()
    if "/kcat/" in relative:
        return [json.loads(line)["payload"] for line in lines]
    return lines


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("ces/jsonl/reference_purchases.jsonl", "ces"),
        ("debezium/jsonl/sqlserver_reference.jsonl", "debezium"),
        ("debezium/kcat/postgresql_reference.jsonl", "debezium"),
        ("dataworks/jsonl/reference_examples.jsonl", "dataworks"),
        ("qlik/jsonl/reference_examples.jsonl", "qlik"),
    ],
)
def test_every_reference_message_is_recognised(relative: str, expected: str) -> None:
    for value in sample_values(relative):
        key = '{"id": 1}' if value is None else None  # a Debezium tombstone has a key
        assert detect_format(raw(value, key)) == expected, value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"op": "c", "before": null, "after": {"a": 1}, "source": {"connector": "mysql"}}', "debezium"),
        ('{"data": {"A": "1"}, "beforeData": null, "headers": {"operation": "INSERT"}}', "qlik"),
        ('{"payload": {"op": "INSERT", "sequenceId": "1"}, "schema": {"dataColumn": []}}', "dataworks"),
        ('{"hello": "world"}', "unknown"),
        ("[1, 2, 3]", "unknown"),
        ("not json", "unknown"),
        ('{"op": "x", "source": {}}', "unknown"),
    ],
)
def test_shapes(value: str, expected: str) -> None:
    assert detect_format(raw(value)) == expected


def test_undecodable_or_keyless_null_messages_are_unknown() -> None:
    assert detect_format(raw("AAEC", headers={"x-cdc-encoding": "base64"})) == "unknown"
    assert detect_format(raw(None)) == "unknown"


def test_odd_values_and_deep_nesting_are_unknown_not_an_error() -> None:
    deep = "[" * 5000 + "]" * 5000
    for value in ('{"op": [1], "source": {}}', '{"payload": {"op": {"x": 1}, "source": {}}}', deep):
        assert detect_format(raw(value)) == "unknown"
