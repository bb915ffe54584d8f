"""`cluster start | stop | status DIR`: a Spark standalone cluster on 127.0.0.1 for the cluster
target (package `cdc_cluster`, docs/lakehouse.md, "Running on a cluster")."""

from __future__ import annotations

import argparse
from pathlib import Path

from cdc_cli.common import positive_int


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `cluster` subcommand's arguments."""
    cluster = commands.add_parser(
        "cluster",
        help="start, stop or show a Spark standalone cluster on 127.0.0.1 for the cluster target",
        description=(
            "start: PostgreSQL, the metastore service on it, a Spark standalone master and workers "
            "from the pyspark installation, everything on 127.0.0.1 under DIR; prints the environment "
            'of the cluster target (eval "$(... cluster start DIR)"). status: exits 0 and prints it '
            "while every server runs. stop: stops them all (docs/lakehouse.md, 'Running on a cluster')."
        ),
    )
    cluster.add_argument("action", choices=("start", "stop", "status"))
    cluster.add_argument(
        "directory", type=Path, metavar="DIR", help="where the cluster's servers and data live"
    )
    cluster.add_argument("--workers", type=positive_int, default=1, help="workers to start (default 1)")
    cluster.add_argument(
        "--worker-cores", type=positive_int, default=1, help="cores of each worker (default 1)"
    )
    cluster.add_argument(
        "--worker-memory", default="2g", help="memory of each worker for its executors (default 2g)"
    )
    cluster.add_argument(
        "--warehouse",
        metavar="URI",
        help=(
            "start: the warehouse on an object store, s3a://BUCKET/PREFIX, reached with the endpoint "
            "$CDC_S3_ENDPOINT and the credentials of the environment (default: DIR/warehouse; "
            "docs/lakehouse.md, 'A cluster on an object store')"
        ),
    )
    cluster.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cdc_cluster import standalone

    return standalone.command(
        args.action, args.directory, args.workers, args.worker_cores, args.worker_memory, args.warehouse
    )
