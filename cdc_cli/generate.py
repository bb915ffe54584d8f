"""`generate`: write a producer's generated traffic (package `cdc_tools.generators`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdc_cli.common import EXIT_OK, EXIT_USAGE, non_negative_int, positive_int
from cdc_registry import producer_names


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `generate` subcommand's arguments."""
    generate = commands.add_parser(
        "generate",
        help="write realistic generated CDC traffic for tests, demos and benchmarks",
        description=(
            "Write generated change messages of one producer, with redeliveries, plus "
            "_expected_current.json (the live rows the traffic leaves). What each producer's traffic "
            "holds, and in which containers: cdc_tools/generators/<format>_traffic.py."
        ),
    )
    generate.add_argument("--format", required=True, choices=producer_names(), help="producer format")
    generate.add_argument("--changes", type=positive_int, default=200, help="row changes to simulate")
    generate.add_argument(
        "--partitions", type=positive_int, default=3, help="partitions (per topic for debezium)"
    )
    generate.add_argument("--seed", type=int, default=7, help="random seed (same seed, same files)")
    generate.add_argument("--database", default="gendb", help="source database name of the tables")
    generate.add_argument(
        "--large-every",
        type=non_negative_int,
        default=25,
        help="ces: one change in this many carries a 300 KB text and a 200 KB binary value, so its "
        "event is split into segments (0: none; default 25)",
    )
    generate.add_argument("out", type=Path, metavar="DIR", help="output directory")
    generate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cdc_tools.generators import GenerateOptions, NoGeneratorError, write_traffic

    options = GenerateOptions(
        changes=args.changes,
        seed=args.seed,
        partitions=args.partitions,
        database=args.database,
        large_every=args.large_every,
    )
    try:
        print(write_traffic(args.format, args.out, options))
    except NoGeneratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
