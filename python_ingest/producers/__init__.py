"""Each producer's detector for `land --format auto`: one module here per producer,
`python_ingest/producers/<name>.py`, whose `matches(value)` tells whether a parsed message is
that producer's. The producers themselves are the registry's (package `cdc_registry`); a
producer without a module here lands with `--format <name>` only.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol


class Detector(Protocol):
    def __call__(self, value: dict[str, Any]) -> bool: ...


def detector(name: str) -> Detector | None:
    """The detector of the producer `name` (`python_ingest/producers/<name>.py`), if it has one."""
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        return None
    return module.matches
