"""The command line, ``python -m python_ingest COMMAND`` (the contract's name for it): one
module here per subcommand, each with its `add_parser` and its `run`.

- ``land`` (cdc_cli/land.py): files or Kafka topics into bronze (package `python_ingest`);
- ``pipeline`` (cdc_cli/pipeline.py): land and build in one warm process (package `cdc_pipeline`);
- ``generate`` (cdc_cli/generate.py) and ``scaffold`` (cdc_cli/scaffold.py): the tools of
  package `cdc_tools`;
- ``lakehouse`` (cdc_cli/lakehouse.py) and ``status`` (cdc_cli/status.py): the lakehouse's
  services, and what it holds;
- ``cluster`` (cdc_cli/cluster.py): a Spark standalone cluster on 127.0.0.1 (package `cdc_cluster`).

This package is the top of the project's Python: it may import every other package, and none
imports it (tests/unit/test_imports.py). Each subcommand imports Spark only when it runs, so
``--help`` and argument errors answer at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from cdc_cli import cluster, generate, lakehouse, land, pipeline, scaffold, status
from cdc_cli.common import EXIT_USAGE

SUBCOMMANDS = (land, pipeline, generate, lakehouse, status, cluster, scaffold)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m python_ingest",
        description="Land raw CDC messages into the bronze tables of the lakehouse.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for subcommand in SUBCOMMANDS:
        subcommand.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run = getattr(args, "run", None)
    return run(args) if run is not None else EXIT_USAGE
