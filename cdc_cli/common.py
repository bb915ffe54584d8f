"""What the subcommands share: exit codes, Ctrl-C and SIGTERM, argument types, the options of
`land` and `pipeline`, and opening the lakehouse that `land` creates."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from pathlib import Path

from python_ingest.bronze import FORMATS
from python_ingest.containers import DEFAULT_MAX_MESSAGE_BYTES, LARGEST_MAX_MESSAGE_BYTES
from python_ingest.landing import FileSource

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C


class Interrupted(Exception):  # noqa: N818 - a signal, not an error
    """Ctrl-C or SIGTERM on `land` (without --watch, which stops on them by itself)."""


def interrupt(*_: object) -> None:
    # Once: further signals wait until the chunk being committed is committed.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted


def catch_interrupts() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupt)


@contextlib.contextmanager
def interruptible():
    """Ctrl-C and SIGTERM raise Interrupted in the block; the handlers before it come back after
    (`land` also runs inside the tests' process)."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    catch_interrupts()
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def landing_options(parser: argparse.ArgumentParser) -> None:
    """The options `land` and `pipeline` share: sources, target, chunks, message size, --force, --interval."""
    parser.add_argument(
        "--target", default=None, help="dbt target whose Spark settings to use (default: the profile's)"
    )
    parser.add_argument(
        "--chunk-size",
        type=positive_int,
        default=50_000,
        help="messages per Iceberg commit; bounds driver memory (default 50000)",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=message_bytes,
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
        type=file_source,
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


def whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}")
    return value


def positive_int(text: str) -> int:
    return whole_number(text, 1)


def message_bytes(text: str) -> int:
    value = whole_number(text, 1)
    if value > LARGEST_MAX_MESSAGE_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most {LARGEST_MAX_MESSAGE_BYTES} (1 GiB)")
    return value


def port_number(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError("must be at most 65535")
    return value


def non_negative_int(text: str) -> int:
    return whole_number(text, 0)


def kafka_topic(text: str) -> tuple[str, str]:
    source_format, _, topic = text.partition(":")
    if source_format not in FORMATS or not topic:
        raise argparse.ArgumentTypeError(f"expected FORMAT:TOPIC with FORMAT one of {', '.join(FORMATS)}")
    return source_format, topic


def file_source(text: str) -> FileSource:
    try:
        return FileSource.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def interrupted(landers: list) -> int:
    """Ctrl-C or SIGTERM stopped a land run: say what its landers committed, in one line."""
    committed = sum(lander.report.landed for lander in landers)
    print(
        f"interrupted: {committed:,} messages committed; run the same command again to resume",
        file=sys.stderr,
        flush=True,
    )
    return EXIT_INTERRUPTED


def kafka_connector_jars() -> list[str]:
    """The jars of Spark's Kafka source beyond pyspark's own, from the jar cache (raises
    JarsNotResolvedError, one line, when set-up has not resolved them)."""
    from dbt.adapters.spark_embedded.api import beyond_spark, jar_paths, spark_jars_dir

    return beyond_spark(jar_paths("kafka"), spark_jars_dir())


def with_jars(params: dict[str, str], jars: list[str]) -> dict[str, str]:
    """Spark parameters `params` with `jars` added to its `spark.jars`."""
    return {**params, "spark.jars": ",".join(j for j in [params.get("spark.jars", ""), *jars] if j)}


def open_lakehouse(home: Path) -> None:
    """Make sure `land` can write the lakehouse at `home`: it is the one command that creates
    a lakehouse, and it says so. Raises LakehouseConfigError (one line) if it cannot."""
    from dbt.adapters.spark_embedded.api import check_lakehouse

    if check_lakehouse(home, create=True):
        print(f"new lakehouse at {home}", flush=True)


def target_of_existing_lakehouse(target: str | None) -> tuple[Path | None, dict[str, str]] | None:
    """The lakehouse directory (none on a target without one, the cluster's) and the Spark
    parameters of dbt target `target`, for a command that reads a lakehouse: only `land`
    creates one. None, after one line on stderr, when the profile or the directory is wrong."""
    from dbt.adapters.spark_embedded.api import LakehouseConfigError, check_lakehouse

    from python_ingest.profile import ProfileError, lakehouse_dir, target_spark_parameters

    try:
        home = lakehouse_dir(target)
        params = target_spark_parameters(target)
        if home is not None:
            check_lakehouse(home)
    except (ProfileError, LakehouseConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return home, params
