"""Recognise a message's producer from its shape, for `land --format auto`.

Each producer's messages have a shape no other producer's have; each
producer's detector (`python_ingest/producers/<name>.py`, its `matches`) says
whether a parsed message is its own, and they are tried in the order of the
producer registry (dbt_project.yml, `cdc_producers`). Anything no detector
claims is `unknown`: it lands in bronze.raw_unknown and is reported in
quarantine, never dropped.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from cdc_registry import registry
from python_ingest.containers import ENCODING_HEADER, INGEST_ERROR_HEADER, RawMessage
from python_ingest.producers import Detector, detector

UNKNOWN = "unknown"


def _object(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return value if isinstance(value, dict) else None


@cache
def _detectors() -> tuple[tuple[str, Detector], ...]:
    """(name, matches) of each producer that has a detector, in registry order: looked up
    once per process, not once per message."""
    return tuple((p.name, matches) for p in registry() if (matches := detector(p.name)) is not None)


@cache
def _tombstone_format() -> str:
    return next((p.name for p in registry() if p.tombstones), UNKNOWN)


def detect_shape(value: dict[str, Any]) -> str:
    """The producer format of a parsed message value (a JSON object)."""
    for name, matches in _detectors():
        if matches(value):
            return name
    return UNKNOWN


def detect_format(message: RawMessage) -> str:
    """The producer of a landed message, or `unknown`. A tombstone (null value with a key) is
    the producer's that the registry marks `tombstones` (Debezium: the only one here that
    sends them)."""
    headers = message.headers or {}
    if ENCODING_HEADER in headers or INGEST_ERROR_HEADER in headers:
        return UNKNOWN
    if message.message_value is None:
        if message.message_key is None:
            return UNKNOWN
        return _tombstone_format()
    value = _object(message.message_value)
    if value is None:
        return UNKNOWN
    try:
        return detect_shape(value)
    except TypeError:  # a field of an odd type (an `op` that is a list): no producer's shape
        return UNKNOWN
