"""Generated change traffic of each producer, for tests, demos and benchmarks.

Each producer of the registry (dbt_project.yml, `cdc_producers`) that has generated
traffic has a module `cdc_tools/generators/<name>_traffic.py` with:

- `LANDINGS`: the (container, sub-directory) pairs of what it writes, for `land`;
- `write_traffic(out, options) -> str`: write the message files and
  `_expected_current.json` (the live rows the traffic leaves) to `out`, and say
  what was written in one line.

`python -m python_ingest generate` and benchmarks/pipeline.py find the module by the
producer's name (docs/adding-a-producer.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class GenerateOptions:
    changes: int = 200  # row changes to simulate
    seed: int = 7  # same seed, same files
    partitions: int = 3
    database: str = "gendb"  # source database of the tables, where a generator names one
    large_every: int = 25  # one change in this many carries large values (where a generator has them)


def traffic_module(producer: str) -> ModuleType | None:
    """The producer's generator module (`cdc_tools.generators.<producer>_traffic`), or None."""
    name = f"{__name__}.{producer}_traffic"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


class NoGeneratorError(ValueError):
    """The producer has no traffic generator."""


def write_traffic(producer: str, out: Path, options: GenerateOptions) -> str:
    """Write the producer's generated traffic to `out`; one line saying what was written."""
    module = traffic_module(producer)
    if module is None:
        raise NoGeneratorError(
            f"{producer} has no traffic generator (cdc_tools/generators/{producer}_traffic.py)"
        )
    return module.write_traffic(out, options)


def generated_producers() -> tuple[str, ...]:
    """The registry's producers that have a traffic generator, in registry order."""
    from python_ingest.producers import producer_names

    return tuple(name for name in producer_names() if traffic_module(name) is not None)


def land_sources(root: Path) -> list[str]:
    """`land` options (`--source FORMAT:CONTAINER:PATH`) for the traffic written under
    `root/<producer>/` by each producer's generator, per its LANDINGS."""
    sources = []
    for name in generated_producers():
        for container, sub in traffic_module(name).LANDINGS:
            directory = root / name / sub if sub else root / name
            files = directory.rglob("*") if directory.is_dir() else ()
            if any(p.is_file() and not p.name.startswith("_") for p in files):
                sources += ["--source", f"{name}:{container}:{directory}"]
    return sources
