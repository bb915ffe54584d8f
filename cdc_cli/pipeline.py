"""`pipeline --once | --continuous`: land and build in one warm process (package `cdc_pipeline`,
docs/pipeline.md)."""

from __future__ import annotations

import argparse
import os
import sys

from cdc_cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Interrupted,
    interruptible,
    kafka_connector_jars,
    kafka_topic,
    landing_options,
    open_lakehouse,
    with_jars,
)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `pipeline` subcommand's arguments."""
    pipeline = commands.add_parser(
        "pipeline",
        help="land and build in one warm process: once, or continuously",
        description=(
            "Land what the sources hold (files as land --watch reads them, Kafka topics as land "
            "--kafka does) and run `dbt build` on the same Spark session, through dbt's own runner "
            "with the project parsed once; each cycle prints one line (docs/pipeline.md)."
        ),
    )
    mode = pipeline.add_mutually_exclusive_group(required=True)
    mode.add_argument("--once", action="store_true", help="land and build once, then exit")
    mode.add_argument(
        "--continuous",
        action="store_true",
        help=(
            "cycle every --interval seconds until SIGTERM or Ctrl-C (which finish the cycle and exit "
            "0): land what arrived, build when anything new is in bronze"
        ),
    )
    landing_options(pipeline)
    pipeline.add_argument("--kafka", metavar="HOST:PORT", help="the broker(s) of the --topic sources")
    pipeline.add_argument(
        "--topic",
        action="append",
        default=[],
        type=kafka_topic,
        metavar="FORMAT:TOPIC",
        help="land the Kafka topic TOPIC of producer FORMAT from --kafka (repeat for more)",
    )
    pipeline.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """`pipeline --once | --continuous`: land and build in one warm process (cdc_pipeline/__init__.py)."""
    if args.interval <= 0:
        print("error: --interval must be more than 0 seconds", file=sys.stderr)
        return EXIT_USAGE
    if bool(args.kafka) != bool(args.topic):
        print("error: --kafka HOST:PORT and --topic FORMAT:TOPIC go together", file=sys.stderr)
        return EXIT_USAGE
    from dbt.adapters.spark_embedded import api as services
    from dbt.adapters.spark_embedded.api import (
        JarsNotResolvedError,
        LakehouseConfigError,
        active_session,
    )

    from cdc_pipeline import KILL_ENV as PIPELINE_KILL_ENV
    from cdc_pipeline import KafkaTopics, KillPoint, Pipeline, PipelineError
    from python_ingest.kafka import KafkaSource
    from python_ingest.landing import KILL_ENV, KillSwitch, LandingError, StopFlag
    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters
    from python_ingest.sources import SourcesLanding

    try:
        KillSwitch(os.environ.get(KILL_ENV))  # the crash tests' hooks, checked before Spark starts
        KillPoint(os.environ.get(PIPELINE_KILL_ENV))
        for source in args.source:
            source.files()  # every path exists
        params = target_spark_parameters(args.target)
        home = lakehouse_dir(args.target)
        if home is None:
            raise ProfileError("the target has no lakehouse_dir to keep landing checkpoints in")
        kafka_jars = kafka_connector_jars() if args.kafka else []
        open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError, JarsNotResolvedError, PipelineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    params = with_jars(params, kafka_jars)
    by_format: dict[str, list[str]] = {}
    for source_format, topic in args.topic:
        by_format.setdefault(source_format, []).append(topic)
    kafka = [
        (KafkaTopics(f, args.kafka, tuple(t)), KafkaSource(args.kafka, tuple(dict.fromkeys(t))))
        for f, t in by_format.items()
    ]
    with interruptible():
        try:
            # The pipeline is a warm engine of its own; its dbt builds run on it too.
            spark = active_session(params, warm=False)
        except (Interrupted, KeyboardInterrupt):
            return EXIT_INTERRUPTED
    # SIGTERM and Ctrl-C finish the cycle (its landing commits what it read, its build runs).
    stop = StopFlag()
    log = open(services.services_dir(home) / "pipeline-landing.log", "a", encoding="utf-8")  # noqa: SIM115
    files = (
        SourcesLanding(
            spark,
            args.source,
            home,
            args.chunk_size,
            args.max_message_bytes,
            force=args.force,
            watch_interval=args.interval if args.continuous else None,
            stop=stop,
            out=log,
            announce=False,
        )
        if args.source
        else None
    )
    pipeline = Pipeline(spark, home, args.target, files, kafka, stop, landing_log=log)
    try:
        pipeline.parse()
        what = ", ".join(
            [f"{s.format}:{s.container}:{p}" for s in args.source for p in s.paths]
            + [f"{f}:{args.kafka}/{t}" for f, t in args.topic]
        )
        if args.continuous:
            print(
                f"pipeline: {what or 'bronze'} every {args.interval:g}s (stop: SIGTERM or Ctrl-C)", flush=True
            )
        code = pipeline.run(args.once, args.interval)
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        log.close()
    for error in files.errors if files is not None else []:
        print(f"error: {error}", file=sys.stderr)
    return code
