"""Command line: ``python -m python_ingest land ...`` (docs/landing.md, "Landing"), ``lakehouse``
(start / stop / status of the SQL endpoint and metastore), ``generate``, ``scaffold``,
``cluster`` (a Spark standalone cluster on 127.0.0.1, docs/lakehouse.md, "Running on a cluster").
``generate`` and ``scaffold`` run tooling of the sibling package ``cdc_tools``, imported only
when those commands run."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from python_ingest.bronze import FORMATS, bronze_table
from python_ingest.containers import CONTAINERS, DEFAULT_MAX_MESSAGE_BYTES, LARGEST_MAX_MESSAGE_BYTES
from python_ingest.landing import AUTO, FileSource

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C


class Interrupted(Exception):  # noqa: N818 - a signal, not an error
    """Ctrl-C or SIGTERM on `land` (without --watch, which stops on them by itself)."""


def _interrupt(*_: object) -> None:
    # Once: further signals wait until the chunk being committed is committed.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted


def _catch_interrupts() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)


@contextlib.contextmanager
def _interruptible():
    """Ctrl-C and SIGTERM raise Interrupted in the block; the handlers before it come back after
    (`land` also runs inside the tests' process)."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    _catch_interrupts()
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m python_ingest",
        description="Land raw CDC messages into the bronze tables of the lakehouse.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
    _landing_options(land)
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
    _landing_options(pipeline)
    pipeline.add_argument("--kafka", metavar="HOST:PORT", help="the broker(s) of the --topic sources")
    pipeline.add_argument(
        "--topic",
        action="append",
        default=[],
        type=_kafka_topic,
        metavar="FORMAT:TOPIC",
        help="land the Kafka topic TOPIC of producer FORMAT from --kafka (repeat for more)",
    )

    generate = commands.add_parser(
        "generate",
        help="write realistic generated CDC traffic for tests, demos and benchmarks",
        description=(
            "Write generated change messages of one producer, with redeliveries, plus "
            "_expected_current.json (the live rows the traffic leaves). What each producer's traffic "
            "holds, and in which containers: cdc_tools/generators/<format>_traffic.py."
        ),
    )
    generate.add_argument("--format", required=True, choices=FORMATS, help="producer format")
    generate.add_argument("--changes", type=_positive_int, default=200, help="row changes to simulate")
    generate.add_argument(
        "--partitions", type=_positive_int, default=3, help="partitions (per topic for debezium)"
    )
    generate.add_argument("--seed", type=int, default=7, help="random seed (same seed, same files)")
    generate.add_argument("--database", default="gendb", help="source database name of the tables")
    generate.add_argument(
        "--large-every",
        type=_non_negative_int,
        default=25,
        help="ces: one change in this many carries a 300 KB text and a 200 KB binary value, so its "
        "event is split into segments (0: none; default 25)",
    )
    generate.add_argument("out", type=Path, metavar="DIR", help="output directory")

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
        type=_port,
        default=None,
        help="start: the SQL endpoint's port on 127.0.0.1 (default $CDC_SQL_PORT, else 10000)",
    )
    lakehouse.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )

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
    cluster.add_argument("--workers", type=_positive_int, default=1, help="workers to start (default 1)")
    cluster.add_argument(
        "--worker-cores", type=_positive_int, default=1, help="cores of each worker (default 1)"
    )
    cluster.add_argument(
        "--worker-memory", default="2g", help="memory of each worker for its executors (default 2g)"
    )

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
    return parser


def _landing_options(parser: argparse.ArgumentParser) -> None:
    """The options `land` and `pipeline` share: sources, target, chunks, message size, --force, --interval."""
    parser.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )
    parser.add_argument(
        "--chunk-size",
        type=_positive_int,
        default=50_000,
        help="messages per Iceberg commit; bounds driver memory (default 50000)",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_message_bytes,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        help=(
            "the longest record landed whole; a longer one lands cut to this size, marked, and is "
            f"quarantined by dbt (default {DEFAULT_MAX_MESSAGE_BYTES}: bounds landing's memory)"
        ),
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=(
            "land files that look wrong for their --format: not text, or another producer's "
            "messages (refused without it; dbt quarantines what it cannot parse)"
        ),
    )
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        type=_file_source,
        metavar="FORMAT:CONTAINER:PATH",
        help=(
            "also land PATH's files of FORMAT in CONTAINER, e.g. debezium:kcat:dumps/ (repeat for "
            "more): one process, one Spark start, for several bronze tables"
        ),
    )
    parser.add_argument(
        "--interval",
        "--poll-seconds",
        dest="interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --watch or --continuous: seconds from the start of one pass to the next (default 5)",
    )


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}")
    return value


def _positive_int(text: str) -> int:
    return _whole_number(text, 1)


def _message_bytes(text: str) -> int:
    value = _whole_number(text, 1)
    if value > LARGEST_MAX_MESSAGE_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most {LARGEST_MAX_MESSAGE_BYTES} (1 GiB)")
    return value


def _port(text: str) -> int:
    value = _positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError("must be at most 65535")
    return value


def _non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def _kafka_topic(text: str) -> tuple[str, str]:
    source_format, _, topic = text.partition(":")
    if source_format not in FORMATS or not topic:
        raise argparse.ArgumentTypeError(f"expected FORMAT:TOPIC with FORMAT one of {', '.join(FORMATS)}")
    return source_format, topic


def _file_source(text: str) -> FileSource:
    try:
        return FileSource.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


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


def land_command(args: argparse.Namespace) -> int:
    problem = _land_usage(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.kafka:
        return land_kafka_command(args)
    # Imported here so that `--help` and argument errors answer without Spark.
    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError
    from dbt.adapters.spark_embedded.python_submissions import active_session

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
        _open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    landers: list = []
    with _interruptible():
        try:
            spark = active_session(params)
            _catch_interrupts()  # again: pyspark's context installs a SIGINT handler of its own
            return _land_files(args, sources, spark, home, landers)
        except (Interrupted, KeyboardInterrupt):
            return _interrupted(landers)


def _interrupted(landers: list) -> int:
    """Ctrl-C or SIGTERM stopped a land run: say what its landers committed, in one line."""
    committed = sum(lander.report.landed for lander in landers)
    print(
        f"interrupted: {committed:,} messages committed; run the same command again to resume",
        file=sys.stderr,
        flush=True,
    )
    return EXIT_INTERRUPTED


def _open_lakehouse(home: Path) -> None:
    """Make sure `land` can write the lakehouse at `home`: it is the one command that creates
    a lakehouse, and it says so. Raises LakehouseConfigError (one line) if it cannot."""
    from dbt.adapters.spark_embedded.lakehouse import check_lakehouse

    if check_lakehouse(home, create=True):
        print(f"new lakehouse at {home}", flush=True)


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
    from dbt.adapters.spark_embedded import services
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError, beyond_spark, jar_paths
    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError
    from dbt.adapters.spark_embedded.python_submissions import active_session

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
        kafka_jars = beyond_spark(jar_paths("kafka"), services.spark_jars_dir())
        if home is None:
            raise ProfileError("the target has no lakehouse_dir to keep landing checkpoints in")
        _open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError, JarsNotResolvedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    params["spark.jars"] = ",".join(j for j in [params.get("spark.jars", ""), *kafka_jars] if j)
    table = bronze_table(args.format)
    topics = source.describe()
    print(f"landing topic(s) {topics} from {source.bootstrap} into {table.qualified_name}", flush=True)
    landers: list[Lander] = []
    with _interruptible():
        try:
            spark = active_session(params, warm=False)  # Kafka's reader runs in this JVM
            _catch_interrupts()  # again: pyspark's context installs a SIGINT handler of its own
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
            return _interrupted(landers)


def pipeline_command(args: argparse.Namespace) -> int:
    """`pipeline --once | --continuous`: land and build in one warm process (python_ingest/pipeline.py)."""
    if args.interval <= 0:
        print("error: --interval must be more than 0 seconds", file=sys.stderr)
        return EXIT_USAGE
    if bool(args.kafka) != bool(args.topic):
        print("error: --kafka HOST:PORT and --topic FORMAT:TOPIC go together", file=sys.stderr)
        return EXIT_USAGE
    from dbt.adapters.spark_embedded import services
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError, beyond_spark, jar_paths
    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError
    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest.kafka import KafkaSource
    from python_ingest.landing import KILL_ENV, KillSwitch, LandingError, StopFlag
    from python_ingest.pipeline import KILL_ENV as PIPELINE_KILL_ENV
    from python_ingest.pipeline import KafkaTopics, KillPoint, Pipeline, PipelineError
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
        kafka_jars = beyond_spark(jar_paths("kafka"), services.spark_jars_dir()) if args.kafka else []
        _open_lakehouse(home)
    except (LandingError, ProfileError, LakehouseConfigError, JarsNotResolvedError, PipelineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    params["spark.jars"] = ",".join(j for j in [params.get("spark.jars", ""), *kafka_jars] if j)
    by_format: dict[str, list[str]] = {}
    for source_format, topic in args.topic:
        by_format.setdefault(source_format, []).append(topic)
    kafka = [
        (KafkaTopics(f, args.kafka, tuple(t)), KafkaSource(args.kafka, tuple(dict.fromkeys(t))))
        for f, t in by_format.items()
    ]
    with _interruptible():
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


def generate_command(args: argparse.Namespace) -> int:
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


def scaffold_command(args: argparse.Namespace) -> int:
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

    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, check_lakehouse
    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    try:
        params = target_spark_parameters(args.target)
        home = lakehouse_dir(args.target)
        if home is not None:
            check_lakehouse(home)  # only land creates a lakehouse
    except (ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    spark = active_session(params)
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


def lakehouse_command(args: argparse.Namespace) -> int:
    from dbt.adapters.spark_embedded import services
    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, check_lakehouse

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


def status_command(args: argparse.Namespace) -> int:
    from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, check_lakehouse
    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest import status
    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    try:
        home = lakehouse_dir(args.target)
        params = target_spark_parameters(args.target)
        if home is not None:
            check_lakehouse(home)  # only land creates a lakehouse
    except (ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    services = status.service_lines(home) if home is not None else ["run by the cluster"]
    report = status.read_status(active_session(params), home or Path("."), services)
    print(status.render(report))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "lakehouse":
        return lakehouse_command(args)
    if args.command == "status":
        return status_command(args)
    if args.command == "land":
        return land_command(args)
    if args.command == "pipeline":
        return pipeline_command(args)
    if args.command == "generate":
        return generate_command(args)
    if args.command == "scaffold":
        return scaffold_command(args)
    if args.command == "cluster":
        from python_ingest import cluster

        return cluster.command(
            args.action, args.directory, args.workers, args.worker_cores, args.worker_memory
        )
    return EXIT_USAGE  # pragma: no cover - argparse requires a command
