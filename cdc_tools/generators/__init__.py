"""Generated change traffic of each producer, for tests, demos and benchmarks.

Each producer of the registry (dbt_project.yml, `cdc_producers`) that has generated
traffic has a module `cdc_tools/generators/<name>_traffic.py` with:

- `LANDINGS`: the (container, sub-directory) pairs of what it writes, for `land`;
- `write_traffic(out, options) -> str`: write the message files and
  `_expected_current.json` (the live rows the traffic leaves) to `out`, and say
  what was written in one line.

and, for the hostile-input test (tests/helpers/hostile_run.py, which mutates the
messages of every producer here):

- `generate_named(changes, seed, partitions, namespace, keep_declared=False) -> Traffic`:
  traffic whose source database / schema names carry `namespace`, so that the traffics
  of two namespaces never share a table; with `keep_declared`, the tables whose columns
  the seeds declare (seeds/cdc_declared_columns.csv) keep their declared names instead.
  The traffic has `write(directory)` (as `write_traffic` writes) and `expected_current`
  (table id -> key -> live row);
- `message_body(value) -> dict`: the part of a parsed message that carries its fields
  (a Debezium `payload`, a Qlik `message`; the message itself where there is no envelope);
- `fresh_identity(body, n)`: set in that body what identifies the message (and makes a
  copy a duplicate) to values no other message has, the `n`-th such, so that a mutant of
  it is parsed all the way;
- `PARSED_FIELDS`: the names of the fields the models parse, order by or look things up
  with, where the mutants aim; `MASK_FIELDS`: those among them that hold hex bit masks
  (empty if none).

`python -m python_ingest generate`, benchmarks/pipeline.py and the hostile-input test
find the module by the producer's name (docs/adding-a-producer.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from cdc_registry import producer_names


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
    return tuple(name for name in producer_names() if traffic_module(name) is not None)


def landings(producer: str, root: Path) -> list[tuple[str, Path]]:
    """(container, directory) of each part of the traffic its generator wrote under
    `root/<producer>/`, per its LANDINGS."""
    directory = root / producer
    return [
        (container, directory / sub if sub else directory)
        for container, sub in traffic_module(producer).LANDINGS
    ]


def land_sources(root: Path) -> list[str]:
    """`land` options (`--source FORMAT:CONTAINER:PATH`) for the traffic written under
    `root/<producer>/` by each producer's generator, per its LANDINGS."""
    sources = []
    for name in generated_producers():
        for container, directory in landings(name, root):
            files = directory.rglob("*") if directory.is_dir() else ()
            if any(p.is_file() and not p.name.startswith("_") for p in files):
                sources += ["--source", f"{name}:{container}:{directory}"]
    return sources
