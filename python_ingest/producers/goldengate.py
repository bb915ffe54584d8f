"""Oracle GoldenGate (JSON formatter, operation modelled): a `table` name, an `op_type`
(I, U, D, T) and a `pos`, beside `op_ts`; or a JSON schema document of the Kafka handler's
schema topic, whose row definition GoldenGate names `row` (docs/producers/goldengate.md)."""

from __future__ import annotations

from typing import Any

OPERATIONS = {"I", "U", "D", "T"}


def matches(value: dict[str, Any]) -> bool:
    if value.get("op_type") in OPERATIONS:
        return isinstance(value.get("table"), str) and "pos" in value and "op_ts" in value
    definitions = value.get("definitions")
    return (
        "$schema" in value
        and isinstance(value.get("title"), str)
        and isinstance(definitions, dict)
        and "row" in definitions
        and "op_type" in (value.get("properties") or {})
    )
