"""`lakehouse start | stop | status`: the lakehouse's SQL endpoint and metastore service."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdc_cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, port_number


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `lakehouse` subcommand's arguments."""
    lakehouse = commands.add_parser(
        "lakehouse",
        help="start, stop or show the lakehouse's services: its SQL endpoint and metastore",
        description=(
            "start: the SQL endpoint (Spark's Thrift Server, HiveServer2 binary protocol, no password) "
            "on 127.0.0.1:$CDC_SQL_PORT (default 10000) over $CDC_LAKEHOUSE_DIR, and the metastore "
            "service it shares with land and dbt; returns once it answers queries. status: exits 0 "
            "and prints the addresses while the endpoint runs, 1 otherwise. stop: stops both."
        ),
    )
    lakehouse.add_argument("action", choices=("start", "stop", "status"))
    lakehouse.add_argument(
        "--port",
        type=port_number,
        default=None,
        help="start: the SQL endpoint's port on 127.0.0.1 (default $CDC_SQL_PORT, else 10000)",
    )
    lakehouse.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )
    lakehouse.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from dbt.adapters.spark_embedded import api as services
    from dbt.adapters.spark_embedded.api import LakehouseConfigError, check_lakehouse

    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    try:
        home = lakehouse_dir(args.target)
        params = target_spark_parameters(args.target)
    except (ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if home is None:
        print("error: the target has no lakehouse_dir whose services to run", file=sys.stderr)
        return EXIT_USAGE
    if args.action != "start" and not home.exists():  # nothing runs there; and nothing to create
        print(f"nothing runs for {home}: there is no lakehouse there")
        return EXIT_OK if args.action == "stop" else EXIT_FAILED
    try:
        check_lakehouse(home)  # only land creates a lakehouse
    except LakehouseConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.action == "stop":
            stopped = services.stop_services(home)
            print(f"stopped: {', '.join(stopped)}" if stopped else f"nothing was running for {home}")
            return EXIT_OK
        if args.action == "start":
            services.start_sql_endpoint(home, params, args.port)
        endpoint, metastore = services.sql_endpoint_state(home), services.metastore_state(home)
    except services.ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if endpoint is None:
        print(
            f"the SQL endpoint of {home} is not running (start it: python -m python_ingest lakehouse start)"
        )
        return EXIT_FAILED
    port = endpoint["port"]
    address = f"{services.LOOPBACK}:{port}"
    print(f"SQL endpoint: {address} (HiveServer2, binary transport, no password), pid {endpoint['pid']}")
    print(f"JDBC URL: {services.jdbc_url(port)}")
    venv_bin = Path(sys.executable).parent
    print(f'beeline: PATH="{venv_bin}:$PATH" beeline -u {services.jdbc_url(port)} -n "$USER"')
    if endpoint.get("connect_port"):
        print(
            f"warm engine: sc://{services.LOOPBACK}:{endpoint['connect_port']} (Spark Connect; "
            "land and dbt build of the local target run here)"
        )
    if metastore is not None:
        print(f"metastore: thrift://{services.LOOPBACK}:{metastore['port']}, pid {metastore['pid']}")
    return EXIT_OK
