"""Qlik Replicate: the `atMSG` envelope (metadata and data messages), or a bare data message
with `data` and `headers.operation` (docs/producers/qlik.md)."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any]) -> bool:
    if value.get("magic") == "atMSG":
        return True
    return "data" in value and isinstance(value.get("headers"), dict) and "operation" in value["headers"]
