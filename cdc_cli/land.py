"""`land`: append the messages of files, or of Kafka topics, to bronze (docs/landing.md)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from cdc_cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Interrupted,
    catch_interrupts,
    interrupted,
    interruptible,
    kafka_connector_jars,
    landing_options,
    open_lakehouse,
    with_jars,
)
from python_ingest.bronze import FORMATS, bronze_table
from python_ingest.containers import CONTAINERS
from python_ingest.landing import AUTO, FileSource


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `land` subcommand's arguments."""
    land = commands.add_parser(
        "land",
        help="append the messages of files to bronze.raw_<format>",
        description=(
            "Append every message of the given files (directories are read recursively; names "
            "starting with _ or . are skipped) to bronze.raw_<FORMAT>, exactly as received. Landing "
            "the same file again adds nothing; a file that has grown, or whose landing was "
            "interrupted, adds only the messages not landed yet."
        ),
    )
    land.add_argument(
        "--format",
        choices=(*FORMATS, AUTO),
        help=(
            "producer format: names the bronze table; auto recognises each message's producer by its "
            "shape and lands what it cannot recognise in bronze.raw_unknown"
        ),
    )
    land.add_argument(
        "--container", choices=CONTAINERS, help="how messages are stored in the files (not with --kafka)"
    )
    land.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="files or directories")
    landing_options(land)
    land.add_argument(
        "--watch",
        action="store_true",
        help=(
            "keep landing what arrives (new files and the new lines of grown files, or new Kafka "
            "records) until stopped with SIGTERM or Ctrl-C, which commits what was read and exits 0"
        ),
    )
    kafka = land.add_argument_group(
        "straight from Kafka (instead of --container and PATH; docs/landing.md, 'Landing from Kafka')"
    )
    kafka.add_argument("--kafka", metavar="HOST:PORT", help="the broker(s) to read from (bootstrap servers)")
    kafka.add_argument(
        "--topic", action="append", default=[], metavar="TOPIC", help="a topic to land (repeat for more)"
    )
    kafka.add_argument(
        "--topic-pattern",
        metavar="REGEX",
        help="also every topic whose whole name matches, looked up on each pass (e.g. 'pg\\..*')",
    )
    kafka.add_argument(
        "--kafka-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Kafka client setting, e.g. security.protocol=SASL_SSL (repeat for more)",
    )
    kafka.add_argument(
        "--kafka-config",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="Kafka client settings as name=value lines (keeps secrets off the command line)",
    )
    land.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    problem = _land_usage(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.kafka:
        return land_kafka_command(args)
    # Imported here so that `--help` and argument errors answer without Spark.
    from dbt.adapters.spark_embedded.api import LakehouseConfigError, active_session

    from python_ingest.landing import KILL_ENV, KillSwitch, LandingError
    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    sources = file_sources(args)
    try:
        KillSwitch(os.environ.get(KILL_ENV))  # the crash tests' hook, checked before Spark starts
        for source in sources:
            source.files()  # every path exists
        params = target_spark_parameters(args.target)
        home = lakehouse_dir(args.target)
        if home is None:
            raise ProfileError("the target has no lakehouse_dir to keep landing checkpoints in")
        open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    landers: list = []
    with interruptible():
        try:
            spark = active_session(params)
            catch_interrupts()  # again: pyspark's context installs a SIGINT handler of its own
            return _land_files(args, sources, spark, home, landers)
        except (Interrupted, KeyboardInterrupt):
            return interrupted(landers)


def _land_usage(args: argparse.Namespace) -> str | None:
    """Why the land options do not fit together, or None."""
    if args.interval <= 0:
        return "--interval must be more than 0 seconds"
    if args.kafka:
        if not args.format:
            return "--kafka needs --format: the topics' producer format"
        if args.container or args.paths or args.source:
            return "--kafka lands topics: give --topic, not --container, --source or paths"
        if not args.topic and not args.topic_pattern:
            return "--kafka needs at least one --topic (or a --topic-pattern)"
        if args.topic_pattern:
            try:
                re.compile(args.topic_pattern)
            except re.error as exc:
                return f"--topic-pattern {args.topic_pattern!r} is not a regular expression: {exc}"
        if args.format == AUTO:
            return "--kafka needs the topics' producer format (--format auto reads files only)"
        return None
    if args.topic or args.topic_pattern or args.kafka_option or args.kafka_config:
        return "--topic, --topic-pattern, --kafka-option and --kafka-config go with --kafka HOST:PORT"
    named = args.format or args.container or args.paths
    if (named or not args.source) and not (args.format and args.container and args.paths):
        return (
            "give --format, --container and at least one PATH (or --source FORMAT:CONTAINER:PATH, "
            "or --kafka HOST:PORT --topic TOPIC)"
        )
    return None


def file_sources(args: argparse.Namespace) -> list[FileSource]:
    """The file sources of a land command: --format, --container and the paths, then each --source."""
    named = [FileSource(args.format, args.container, tuple(args.paths))] if args.paths else []
    return [*named, *args.source]


def _land_files(args: argparse.Namespace, sources: list[FileSource], spark, home: Path, landers: list) -> int:
    """The landing of a `land` run from files (every --source), once or, with --watch, pass
    after pass (python_ingest/sources.py); each Lander made is appended to `landers`."""
    from python_ingest.landing import StopFlag
    from python_ingest.sources import SourcesLanding

    # After Spark starts: pyspark's context installs a SIGINT handler of its own.
    stop = StopFlag() if args.watch else None
    landing = SourcesLanding(
        spark,
        sources,
        home,
        args.chunk_size,
        args.max_message_bytes,
        force=args.force,
        watch_interval=args.interval if args.watch else None,
        stop=stop,
        announce=not args.watch,
    )
    landing.landers = landers
    if args.watch:
        paths = ", ".join(f"{s.format}:{s.container}:{p}" for s in sources for p in s.paths)
        print(f"watching {paths} every {args.interval:g}s (stop: Ctrl-C or SIGTERM)", flush=True)
    while True:
        started = time.monotonic()
        landing.land_pass()
        if stop is None:
            for error in landing.errors:
                print(f"error: {error}", file=sys.stderr)
            # A refused file was named in one line when it was found; the others landed.
            return EXIT_FAILED if landing.errors or landing.refused else EXIT_OK
        if not stop.stopped:
            stop.sleep(args.interval - (time.monotonic() - started))
        if stop.stopped:
            print(f"stopped watching {paths}", flush=True)
            return EXIT_OK


def land_kafka_command(args: argparse.Namespace) -> int:
    from dbt.adapters.spark_embedded.api import (
        JarsNotResolvedError,
        LakehouseConfigError,
        active_session,
    )

    from python_ingest.checkpoints import CheckpointStore
    from python_ingest.kafka import KafkaLander, KafkaSource, read_settings
    from python_ingest.landing import KILL_ENV, KillSwitch, Lander, LandingError, StopFlag
    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    try:
        KillSwitch(os.environ.get(KILL_ENV))
        settings = read_settings(args.kafka_option, args.kafka_config)
        source = KafkaSource(args.kafka, tuple(dict.fromkeys(args.topic)), settings, args.topic_pattern)
        params = target_spark_parameters(args.target)
        home = lakehouse_dir(args.target)
        kafka_jars = kafka_connector_jars()
        if home is None:
            raise ProfileError("the target has no lakehouse_dir to keep landing checkpoints in")
        open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError, JarsNotResolvedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    params = with_jars(params, kafka_jars)
    table = bronze_table(args.format)
    topics = source.describe()
    print(f"landing topic(s) {topics} from {source.bootstrap} into {table.qualified_name}", flush=True)
    landers: list[Lander] = []
    with interruptible():
        try:
            spark = active_session(params, warm=False)  # Kafka's reader runs in this JVM
            catch_interrupts()  # again: pyspark's context installs a SIGINT handler of its own
            # With --watch, StopFlag takes the signals over: they stop the watch (exit 0).
            stop = StopFlag() if args.watch else None
            checkpoints = CheckpointStore(home / "ingest_checkpoints", table.name)
            while True:
                started = time.monotonic()
                lander = Lander(
                    spark,
                    table,
                    checkpoints,
                    chunk_size=args.chunk_size,
                    max_message_bytes=args.max_message_bytes,
                )
                landers.append(lander)
                try:
                    landed = KafkaLander(lander, source, sys.stdout).land_once()
                except LandingError as exc:
                    print(f"error: {exc}", file=sys.stderr)
                    return EXIT_FAILED
                if stop is None or landed:
                    print(
                        f"{table.qualified_name}: landed {landed} record(s) from {topics} "
                        f"(batch {lander.report.batch_id}) in {time.monotonic() - started:.1f}s",
                        flush=True,
                    )
                if stop is None:
                    return EXIT_OK
                if not landed:
                    stop.sleep(args.interval)
                if stop.stopped:
                    print(f"stopped watching {topics}", flush=True)
                    return EXIT_OK
        except (Interrupted, KeyboardInterrupt):
            return interrupted(landers)
