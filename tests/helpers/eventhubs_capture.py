"""Write Azure Event Hubs Capture Avro files (schema EventData) for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastavro

EVENT_DATA_SCHEMA = {
    "type": "record",
    "name": "EventData",
    "namespace": "Microsoft.ServiceBus.Messaging",
    "fields": [
        {"name": "SequenceNumber", "type": "long"},
        {"name": "Offset", "type": "string"},
        {"name": "EnqueuedTimeUtc", "type": "string"},
        {
            "name": "SystemProperties",
            "type": {"type": "map", "values": ["long", "double", "string", "bytes"]},
        },
        {
            "name": "Properties",
            "type": {"type": "map", "values": ["long", "double", "string", "bytes", "null"]},
        },
        {"name": "Body", "type": ["null", "bytes"]},
    ],
}


def write_capture_file(path: Path, events: list[dict[str, Any]], append: bool = False) -> Path:
    """A capture file holding `events` (an empty list gives a header-only file); with
    `append`, `events` are added as a new block at the end of an existing capture file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [
        {
            "SequenceNumber": event.get("SequenceNumber", index),
            "Offset": str(event.get("Offset", index * 100)),
            "EnqueuedTimeUtc": event.get("EnqueuedTimeUtc", "3/14/2025 4:45:01 PM"),
            "SystemProperties": event.get("SystemProperties", {}),
            "Properties": event.get("Properties", {}),
            "Body": event.get("Body"),
        }
        for index, event in enumerate(events)
    ]
    with path.open("a+b" if append else "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(EVENT_DATA_SCHEMA), records)
    return path
