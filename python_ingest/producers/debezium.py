"""Debezium: a payload with a lower-case `op` and a `source` block (or a logical decoding
`message`), inside a JsonConverter `schema` + `payload` envelope or bare (docs/producers/debezium.md)."""

from __future__ import annotations

from typing import Any

OPERATIONS = {"c", "u", "d", "r", "t", "m"}


def matches(value: dict[str, Any]) -> bool:
    payload = value.get("payload")
    in_payload = isinstance(payload, dict) and payload.get("op") in OPERATIONS
    if in_payload and ("source" in payload or "message" in payload):
        return True
    return value.get("op") in OPERATIONS and "source" in value
