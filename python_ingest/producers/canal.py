"""Alibaba Canal: a flat message with a boolean `isDdl`, a `type`, the `database` and `table`,
and its rows in `data` (docs/producers/canal.md)."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any]) -> bool:
    if not isinstance(value.get("isDdl"), bool) or not isinstance(value.get("type"), str):
        return False
    return "database" in value and "table" in value and ("data" in value or "sql" in value)
