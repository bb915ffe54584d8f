"""`status`: what the lakehouse holds, per producer and table (docs/operations.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cdc_cli.common import EXIT_OK, EXIT_USAGE, target_of_existing_lakehouse


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `status` subcommand's arguments."""
    status = commands.add_parser(
        "status",
        help="what the lakehouse holds: per producer and table, messages and their outcomes, freshness",
        description=(
            "Per producer: messages landed, applied, duplicate, control, pending, quarantined and not "
            "built yet, and the last landing; per source table: changes, live rows, last commit and how "
            "far behind that is; the last build; which services run for this lakehouse "
            "(docs/operations.md, 'Status of a lakehouse')."
        ),
    )
    status.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )
    status.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from dbt.adapters.spark_embedded.api import active_session

    from cdc_cli import status_report

    found = target_of_existing_lakehouse(args.target)
    if found is None:
        return EXIT_USAGE
    home, params = found
    services = status_report.service_lines(home) if home is not None else ["run by the cluster"]
    report = status_report.read_status(active_session(params), home or Path("."), services)
    print(status_report.render(report))
    return EXIT_OK
