"""SQL Server 2025 Change Event Streaming: a CloudEvents envelope whose `type` is
com.microsoft.SQL.CES.<operation>.v1 (docs/producers/ces.md)."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any]) -> bool:
    kind = value.get("type")
    return isinstance(kind, str) and kind.startswith("com.microsoft.SQL.CES.")
