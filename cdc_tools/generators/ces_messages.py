"""Build SQL Server 2025 Change Event Streaming (CES) messages: CloudEvents
envelopes whose `data` is a JSON string, whole or split into segments."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

GUID = "9c8d4ad2-bf54-4f10-a96f-038af496997f"


def ces_event(
    table: tuple[str, str, str],
    operation: str,
    columns: Sequence[tuple[str, str]],
    key: Mapping[str, str],
    old: Mapping[str, str | None] | None,
    current: Mapping[str, str | None] | None,
    commit_lsn: str,
    sequence_number: int,
    commit_time: str,
    event_id: str | None = None,
) -> dict[str, Any]:
    """One unsplit CES event (envelope with `data` as a JSON string)."""
    db, schema, tbl = table
    data = {
        "eventsource": {
            "db": db,
            "schema": schema,
            "tbl": tbl,
            "cols": [{"name": n, "type": t, "index": i} for i, (n, t) in enumerate(columns)],
            "pkkey": [{"columnname": k, "value": v} for k, v in key.items()],
            "transaction": {
                "commitlsn": commit_lsn,
                "beginlsn": commit_lsn,
                "sequencenumber": sequence_number,
                "committime": commit_time,
            },
        },
        "eventrow": {"old": json.dumps(old or {}), "current": json.dumps(current or {})},
    }
    return {
        "specversion": "1.0",
        "type": "com.microsoft.SQL.CES.DML.V1",
        "source": "/",
        "id": event_id or str(uuid.uuid4()),
        "logicalid": f"{GUID}:{commit_lsn.replace(':', '').removeprefix('0x')}:{sequence_number:020d}",
        "time": commit_time.replace(" ", "T") + "Z",
        "datacontenttype": "application/json",
        "operation": operation,
        "segmentindex": 1,
        "finalsegment": True,
        "data": json.dumps(data),
    }


def split_event(
    event: Mapping[str, Any],
    parts: int,
    first_index: int = 1,
    spelling: str = "segment",
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> list[dict[str, Any]]:
    """The event cut into `parts` segments sharing its logicalid: newer spelling
    (`segmentindex` + `finalsegment`) or older (`splitindex` + `splittotalcnt`)."""
    data = event["data"]
    size = -(-len(data) // parts)
    base = {k: v for k, v in event.items() if k not in ("segmentindex", "finalsegment")}
    segments = []
    for i in range(parts):
        segment = {**base, "id": new_id(), "data": data[i * size : (i + 1) * size]}
        if spelling == "segment":
            segment.update(segmentindex=first_index + i, finalsegment=i == parts - 1)
        else:
            segment.update(splitindex=first_index + i, splittotalcnt=parts)
        segments.append(segment)
    return segments


def line(message: Mapping[str, Any] | str) -> str:
    """A message as a line of a JSON-lines file (a string is taken as it is)."""
    return message if isinstance(message, str) else json.dumps(message)


def jsonl(messages: Sequence[Mapping[str, Any] | str]) -> str:
    return "".join(line(m) + "\n" for m in messages)
