"""Alibaba Cloud DataWorks: a `schema` with `dataColumn` and a `payload`, or a payload with
`sequenceId` and an upper-case `op` (heartbeats and transaction markers carry no
`dataColumn`; docs/producers/dataworks.md)."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any]) -> bool:
    schema, payload = value.get("schema"), value.get("payload")
    if not isinstance(payload, dict):
        return False
    if isinstance(schema, dict) and "dataColumn" in schema:
        return True
    op = payload.get("op")
    return "sequenceId" in payload and isinstance(op, str) and op.isupper()
