"""`scaffold`: declare the tables found in silver and write the typed gold models
(`cdc_tools/scaffold.py`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdc_cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, target_of_existing_lakehouse


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `scaffold` subcommand's arguments."""
    scaffold = commands.add_parser(
        "scaffold",
        help="declare the tables found in silver and write the typed gold models of the published ones",
        description=(
            "Append a row to seeds/cdc_tables.csv for every table of silver.cdc_table_columns not "
            "declared yet (existing rows are kept as they are), then write models/gold/published/: "
            "gold.<publish_as> (live rows) and gold.<publish_as>_history (SCD versions) for every row "
            "with a publish_as, typed from silver.cdc_table_columns. Run dbt build first; run dbt "
            "build after. The same input gives the same files."
        ),
    )
    scaffold.add_argument(
        "--publish-all",
        action="store_true",
        help="publish every table added to the seed now (default: only the tables named)",
    )
    scaffold.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )
    scaffold.add_argument(
        "--project-dir", type=Path, default=Path("."), help="the dbt project to write to (default: .)"
    )
    scaffold.add_argument(
        "tables",
        nargs="*",
        metavar="TABLE_ID",
        help="tables to publish (e.g. salesdb.dbo.orders): one without a publish_as gets one",
    )
    scaffold.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cdc_tools import scaffold

    project = args.project_dir
    if not (project / "dbt_project.yml").is_file():
        print(f"error: {project.resolve()} is not a dbt project (no dbt_project.yml)", file=sys.stderr)
        return EXIT_USAGE
    try:
        for table_id in args.tables:
            scaffold.validate_table_id(table_id)
    except scaffold.ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    from dbt.adapters.spark_embedded.api import active_session

    found = target_of_existing_lakehouse(args.target)
    if found is None:
        return EXIT_USAGE
    spark = active_session(found[1])
    try:
        result, changes = scaffold.run(spark, project, args.tables, args.publish_all)
    except scaffold.RegistryMissingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except scaffold.ScaffoldError as exc:  # a bad table id or declaration
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for change in changes:
        print(change)
    added = f"{len(result.added_tables)} table(s) added to {scaffold.SEED_PATH}"
    print(
        f"{added}; {len(result.published)} table(s) published; "
        f"{len(changes) or 'no'} file change(s){'' if changes else ' (already up to date)'}"
    )
    return EXIT_OK
