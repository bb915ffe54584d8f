"""Recognise a message's producer from its shape, for `land --format auto`.

Each producer's messages have a shape no other producer's have (see
docs/producers.md): CES is a CloudEvents envelope of type com.microsoft.SQL.CES…;
Debezium a payload with a lower-case `op` and a `source` block (possibly in a
JsonConverter `schema` + `payload` envelope); DataWorks a `schema` with
`dataColumn` and a `payload` with an upper-case op; Qlik the `atMSG`
envelope, or a bare data message with `data` and `headers.operation`.
Anything else is `unknown`: it lands in bronze.raw_unknown and is reported
in quarantine, never dropped.
"""

from __future__ import annotations

import json
from typing import Any

from python_ingest.containers import ENCODING_HEADER, INGEST_ERROR_HEADER, RawMessage

UNKNOWN = "unknown"
DEBEZIUM_OPS = {"c", "u", "d", "r", "t", "m"}


def _object(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return value if isinstance(value, dict) else None


def detect_shape(value: dict[str, Any]) -> str:
    """The producer format of a parsed message value (a JSON object)."""
    kind = value.get("type")
    if isinstance(kind, str) and kind.startswith("com.microsoft.SQL.CES."):
        return "ces"
    if value.get("magic") == "atMSG":
        return "qlik"
    schema, payload = value.get("schema"), value.get("payload")
    if isinstance(payload, dict):
        if isinstance(schema, dict) and "dataColumn" in schema:
            return "dataworks"
        if "sequenceId" in payload and isinstance(payload.get("op"), str) and payload["op"].isupper():
            return "dataworks"
        if payload.get("op") in DEBEZIUM_OPS and ("source" in payload or "message" in payload):
            return "debezium"
    if value.get("op") in DEBEZIUM_OPS and "source" in value:
        return "debezium"
    headers = value.get("headers")
    if "data" in value and isinstance(headers, dict) and "operation" in headers:
        return "qlik"
    return UNKNOWN


def detect_format(message: RawMessage) -> str:
    """The producer of a landed message, or `unknown`. A tombstone (null value with a key) is
    Debezium's: it is the only producer here that sends them."""
    headers = message.headers or {}
    if ENCODING_HEADER in headers or INGEST_ERROR_HEADER in headers:
        return UNKNOWN
    if message.message_value is None:
        return "debezium" if message.message_key is not None else UNKNOWN
    value = _object(message.message_value)
    if value is None:
        return UNKNOWN
    try:
        return detect_shape(value)
    except TypeError:  # a field of an odd type (an `op` that is a list): no producer's shape
        return UNKNOWN
