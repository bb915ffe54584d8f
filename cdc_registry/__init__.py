"""The producer registry, as declared in dbt_project.yml (`vars: cdc_producers`).

One line there per producer is the only shared declaration a producer needs
(docs/adding-a-producer.md): landing's `--format` choices, the bronze tables,
`land --format auto`, the traffic generators, the tests and the dbt models all follow it.
This package sits at the bottom: it imports nothing of the project, and landing
(`python_ingest`) and the tools (`cdc_tools`) read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

PROJECT_FILE = Path(__file__).resolve().parents[1] / "dbt_project.yml"
REGISTRY_VAR = "cdc_producers"
_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Names the project uses itself: bronze.raw_unknown holds what no producer claims, and
# models/silver/staging/landed/ holds every landed message (stg_landed__messages).
RESERVED = ("unknown", "landed")


@dataclass(frozen=True)
class Producer:
    name: str  # the `source_format`; bronze.raw_<name>; `land --format <name>`
    title: str
    tombstones: bool = False  # a null Kafka value with a key is this producer's


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
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name in RESERVED:
            raise RegistryError(
                f"{project_file}: vars.{REGISTRY_VAR}: {entry!r} needs a `name` of lower-case letters, "
                "digits and underscores (not `unknown` nor `landed`)"
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
