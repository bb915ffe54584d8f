"""The producer registry, as declared in dbt_project.yml (`vars: cdc_producers`).

One line there per producer is the only shared declaration a producer needs
(docs/adding-a-producer.md): landing's `--format` choices, the bronze tables,
`land --format auto` and the dbt models all follow it. A producer's own Python
is one module here, `python_ingest/producers/<name>.py`, whose `matches(value)`
tells `land --format auto` whether a parsed message is the producer's.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import yaml

PROJECT_FILE = Path(__file__).resolve().parents[2] / "dbt_project.yml"
REGISTRY_VAR = "cdc_producers"
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Detector(Protocol):
    def __call__(self, value: dict[str, Any]) -> bool: ...


@dataclass(frozen=True)
class Producer:
    name: str  # the `source_format`; bronze.raw_<name>; `land --format <name>`
    title: str
    tombstones: bool = False  # a null Kafka value with a key is this producer's

    @property
    def matches(self) -> Detector | None:
        """The producer's detector (`python_ingest/producers/<name>.py`), if it has one."""
        try:
            module = importlib.import_module(f"{__name__}.{self.name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{self.name}":
                raise
            return None
        return module.matches


class RegistryError(ValueError):
    """The registry in dbt_project.yml is missing or malformed."""


def read_registry(project_file: Path = PROJECT_FILE) -> tuple[Producer, ...]:
    """The producers declared in a dbt project file, in their declared order."""
    project = yaml.safe_load(project_file.read_text(encoding="utf-8")) or {}
    entries = (project.get("vars") or {}).get(REGISTRY_VAR)
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"{project_file}: vars.{REGISTRY_VAR} must list the producers")
    producers = []
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "unknown":
            raise RegistryError(
                f"{project_file}: vars.{REGISTRY_VAR}: {entry!r} needs a `name` of lower-case letters, "
                "digits and underscores (not `unknown`)"
            )
        title, tombstones = str(entry.get("title") or name), bool(entry.get("tombstones"))
        producers.append(Producer(name=name, title=title, tombstones=tombstones))
    names = [p.name for p in producers]
    if len(set(names)) != len(names):
        raise RegistryError(f"{project_file}: vars.{REGISTRY_VAR} names a producer twice: {names}")
    return tuple(producers)


@cache
def registry() -> tuple[Producer, ...]:
    """The project's producers (read once per process)."""
    return read_registry()


def producer_names() -> tuple[str, ...]:
    return tuple(p.name for p in registry())
