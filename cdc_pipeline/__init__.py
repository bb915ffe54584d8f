"""`python -m python_ingest pipeline`: land and build in one warm process (docs/pipeline.md).

One process keeps one Spark session and dbt's parsed project. Each cycle lands what arrived
(files as `land --watch` reads them, Kafka topics as `land --kafka` does), then, when anything
new is in bronze (landed by this cycle or by any other process since the last build), runs a
real `dbt build` of the project through dbt's programmatic runner (dbtRunner, the manifest
parsed once) on that session, and prints one line: what the cycle landed, what its build
decided, its seconds and the lag.

The build lock (one build at a time per lakehouse) is held only while a cycle builds, so a
`dbt build` run by hand between two cycles runs, and a cycle that finds one running waits for
the next. Nothing is kept between cycles that a restart would need: landing resumes from its
checkpoints and every model from its own tables, so a `kill -9` anywhere loses and duplicates
nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from python_ingest.bronze import bronze_table
from python_ingest.landing import StopFlag

KILL_ENV = "CDC_PIPELINE_KILL_AT"  # fault injection for the crash tests (KillPoint)
OUTCOME_MODEL = "__message_outcomes"  # the producers' outcome models: int_<producer>__message_outcomes
PIPELINE_LABEL = "the pipeline's build"


class PipelineError(RuntimeError):
    """The pipeline cannot start or go on; the message says why, in one line."""


class KillPoint:
    """Fault injection for the crash tests: ``$CDC_PIPELINE_KILL_AT=<point>:<n>`` makes the
    process SIGKILL itself the n-th time it reaches ``point``: ``landed`` (a cycle's landing
    committed, its build not started), ``model`` (a model of a build committed: the build is
    half done) or ``built`` (a build finished, its line not printed). Landing's own points are
    ``$CDC_LAND_KILL_AT``'s (python_ingest/landing.py, KillSwitch)."""

    POINTS = ("landed", "model", "built")

    def __init__(self, spec: str | None) -> None:
        self.point, self.at, self.count = None, 0, 0
        if not spec:
            return
        point, _, n = spec.partition(":")
        if point not in self.POINTS or not n.isdigit() or int(n) < 1:
            raise PipelineError(
                f"{KILL_ENV}={spec!r}: expected <point>:<n>, point one of {', '.join(self.POINTS)}"
            )
        self.point, self.at = point, int(n)

    def reached(self, point: str) -> None:
        if point == self.point:
            self.count += 1
            if self.count == self.at:
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class KafkaTopics:
    """The topics of one producer format on one broker (`--kafka HOST:PORT --topic FORMAT:TOPIC`)."""

    source_format: str
    bootstrap: str
    topics: tuple[str, ...]


@dataclass
class Cycle:
    """What one cycle did, for its line."""

    number: int
    landed: int = 0
    built: bool = False
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    lag_seconds: float = 0.0
    note: str = ""

    def line(self) -> str:
        """The cycle's line: messages landed; changes applied, duplicates, quarantined and
        pending; seconds; lag."""
        text = f"cycle {self.number}: landed {self.landed:,}; "
        if self.built:
            count = self.outcomes.get
            text += (
                f"applied {count('change', 0):,}, duplicates {count('duplicate', 0):,}, "
                f"quarantined {count('quarantined', 0):,}, pending {count('pending', 0):,}"
            )
            if count("control", 0):
                text += f", control {count('control', 0):,}"
        else:
            text += "no build" if self.note else "no build (nothing new)"
        text += f"; {self.seconds:.1f} s; lag {self.lag_seconds:.1f} s"
        return text + (f"; {self.note}" if self.note else "")


class Pipeline:
    """Lands and builds, cycle after cycle, in this process's Spark session."""

    def __init__(
        self,
        spark,
        home: Path,
        target: str | None,
        files: Any | None,
        kafka: Sequence[Any],
        stop: StopFlag | None,
        out: TextIO = sys.stdout,
        landing_log: TextIO | None = None,
        project_dir: Path | None = None,
    ) -> None:
        self.spark = spark
        self.home = home
        self.target = target
        self.files = files  # a sources.SourcesLanding, or None
        self.kafka = list(kafka)  # (KafkaTopics, kafka.KafkaSource)
        self.stop = stop
        self.out = out
        self.landing_log = landing_log or open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
        self.project_dir = project_dir or Path.cwd()
        self.kill = KillPoint(os.environ.get(KILL_ENV))
        self.manifest: Any = None
        # Each bronze table's last sequence number when the last build started (None: no build
        # yet): its data files committed since hold what that build may not have read.
        self.built_from: dict[str, int] | None = None
        self.build_due = True  # a first cycle builds whatever an earlier run left unbuilt
        self.oldest_pending: datetime | None = None

    # -- landing ------------------------------------------------------------------
    def land(self) -> int:
        landed = self.files.land_pass() if self.files is not None else 0
        for topics, source in self.kafka:
            landed += self._land_kafka(topics, source)
        return landed

    def _land_kafka(self, topics: KafkaTopics, source: Any) -> int:
        from python_ingest.checkpoints import CheckpointStore
        from python_ingest.kafka import KafkaLander
        from python_ingest.landing import Lander

        table = bronze_table(topics.source_format)
        lander = Lander(
            self.spark,
            table,
            CheckpointStore(self.home / "ingest_checkpoints", table.name),
            out=self.landing_log,
        )
        # Kafka landing sets a session setting of its own; the build after it runs with the
        # session's settings as the profile gave them.
        saved = self.spark.conf.get("spark.sql.mapKeyDedupPolicy", None)
        try:
            return KafkaLander(lander, source, self.landing_log).land_once()
        finally:
            if saved is None:
                self.spark.conf.unset("spark.sql.mapKeyDedupPolicy")
            else:
                self.spark.conf.set("spark.sql.mapKeyDedupPolicy", saved)

    # -- building -----------------------------------------------------------------
    def _dbt_args(self, command: str) -> list[str]:
        args = [command, "--project-dir", str(self.project_dir), "--quiet"]
        return [*args, "--target", self.target] if self.target else args

    def parse(self) -> None:
        """Parse the project once: every cycle's build reuses the manifest."""
        from dbt.cli.main import dbtRunner

        result = dbtRunner().invoke(self._dbt_args("parse"))
        if not result.success:
            raise PipelineError(f"dbt parse failed: {result.exception or 'see logs/dbt.log'}")
        self.manifest = result.result

    def bronze_positions(self) -> dict[str, int]:
        """The last sequence number of each bronze table that exists, from its Iceberg metadata
        (no Spark job): every data file committed after it was read carries a higher one."""
        from dbt.adapters.spark_embedded.api import iceberg_table

        return {
            name: iceberg_table(name).operations().current().lastSequenceNumber()
            for name in self.bronze_tables()
            if self.spark.catalog.tableExists(name)
        }

    def bronze_unbuilt(self) -> dict[str, int]:
        """The bronze tables with a commit since the last build started (every one that exists,
        before the first build), each with its sequence number then (0: none, read it all)."""
        read = self.built_from
        return {
            name: (read.get(name, 0) if read is not None else 0)
            for name, position in self.bronze_positions().items()
            if read is None or position > read.get(name, 0)
        }

    @staticmethod
    def bronze_tables() -> list[str]:
        """The bronze tables' names, one per producer's format (python_ingest/bronze.py)."""
        from python_ingest.bronze import BRONZE_FORMATS

        return [bronze_table(format_).qualified_name for format_ in BRONZE_FORMATS]

    def build(self, cycle: Cycle) -> bool:
        """Run `dbt build` on the warm session; whether it ran to the end (tests included)."""
        from dbt.adapters.spark_embedded.api import ServiceError, acquire_build_lock, release_build_lock
        from dbt.cli.main import dbtRunner

        try:
            acquire_build_lock(self.home, "build", PIPELINE_LABEL)
        except ServiceError as exc:  # a `dbt build` run by hand: build at the next cycle
            cycle.note = f"waiting: {exc}".split(": one build at a time")[0]
            return False
        started = time.time()
        built_from = self.bronze_positions()  # before the build reads bronze
        try:
            runner = dbtRunner(manifest=self.manifest, callbacks=[self._on_event])
            result = runner.invoke(self._dbt_args("build"))
        finally:
            release_build_lock(self.home)
        self.built_from = built_from
        cycle.built = True
        if not result.success:
            failed = [
                f"{r.node.name}: {r.status}"
                for r in getattr(result.result, "results", None) or []
                if str(r.status) in ("error", "fail", "runtime error")
            ]
            cycle.note = "build failed: " + (", ".join(failed[:5]) or str(result.exception))
        cycle.outcomes = self.outcomes_since(started)
        self.kill.reached("built")
        return result.success

    def _on_event(self, event: Any) -> None:
        """dbt's event callback: counts committed models for the `model` kill point."""
        if self.kill.point != "model" or event.info.name != "NodeFinished":
            return
        node = event.data.node_info
        if node.resource_type == "model" and node.node_status == "success":
            self.kill.reached("model")

    def outcome_tables(self) -> list[str]:
        """The producers' outcome tables that exist, as the manifest names them."""
        names = []
        for node in self.manifest.nodes.values():
            if node.resource_type == "model" and node.name.endswith(OUTCOME_MODEL):
                name = f"{node.schema}.{node.alias or node.name}"
                if self.spark.catalog.tableExists(name):
                    names.append(name)
        return sorted(names)

    def outcomes_since(self, moment: float) -> dict[str, int]:
        """How many messages the build that started at `moment` decided, per outcome (the rows
        of the outcome tables it staged: Iceberg prunes the files of earlier builds by their
        staged_at bounds), and, kept for the lag, the landing time of the oldest message still
        pending."""
        tables = self.outcome_tables()
        if not tables:
            return {}
        since = _timestamp(moment)
        rows = " union all ".join(f"select outcome from {name} where staged_at >= {since}" for name in tables)
        counts = {
            row[0]: row[1]
            for row in self.spark.sql(
                f"select outcome, count(*) from ({rows}) as decided group by outcome"
            ).collect()
        }
        pending = " union all ".join(
            f"select ingested_at from {name} where outcome = 'pending'" for name in tables
        )
        self.oldest_pending = self.spark.sql(f"select min(ingested_at) from ({pending}) as waiting").first()[
            0
        ]
        return counts

    def lag_seconds(self, now: float) -> float:
        """The age at `now` of the oldest message landed but not yet in gold: a message still
        pending (half of a pair, a segment of an event), or one committed to bronze after the last
        build started (by this cycle if it could not build, or by another process), however long
        before that its landing began. 0 when there is none."""
        oldest: list[float] = []
        if self.oldest_pending is not None:
            oldest.append(self.oldest_pending.replace(tzinfo=UTC).timestamp())
        # Only the tables with a commit since (none, in a cycle after which nobody landed).
        for name, after in self.bronze_unbuilt().items():
            first = self.oldest_landed_after(name, after)
            if first is not None:
                oldest.append(first.replace(tzinfo=UTC).timestamp())
        return max(now - min(oldest), 0.0) if oldest else 0.0

    def oldest_landed_after(self, name: str, after: int) -> datetime | None:
        """The smallest `ingested_at` in the data files of the bronze table `name` committed with
        a sequence number above `after`: from the files' column statistics in its `entries`
        metadata table, or, for files written without them, from their rows. A land that began
        before a build and committed after it has `ingested_at` before the build's start: only the
        commit tells that the build did not read it."""
        # The condition of macro iceberg_new_files_filter (macros/platform/iceberg_read_position.sql),
        # by which the build's tests find the same files: keep the two in step.
        files = f"{name}.entries where status <> 2 and data_file.content = 0 and sequence_number > {after}"
        count, first = self.spark.sql(
            f"select count(*), min(readable_metrics.ingested_at.lower_bound) from {files}"
        ).first()
        if count and first is None:  # no statistics: read those files' rows
            first = self.spark.sql(
                f"select min(ingested_at) from {name} as landed left semi join "
                f"(select data_file.file_path from {files}) as new on landed._file = new.file_path"
            ).first()[0]
        return first

    # -- cycles -------------------------------------------------------------------
    def cycle(self, number: int) -> Cycle:
        started = time.monotonic()
        cycle = Cycle(number)
        cycle.landed = self.land()
        self.kill.reached("landed")
        due = self.build_due or cycle.landed > 0
        if not due and self.built_from is not None:
            due = bool(self.bronze_unbuilt())
        if due:
            self.build(cycle)
            self.build_due = not cycle.built  # another build held the lock: build at the next cycle
        # The lag is the cycle's last step: its queries of bronze count in the cycle's seconds, so
        # that a cycle's line minus its seconds is when the cycle started (benchmarks/warm.py
        # times cycles so: at 1M the queries took about a second, which the line's seconds left out).
        cycle.lag_seconds = self.lag_seconds(time.time())
        cycle.seconds = time.monotonic() - started
        return cycle

    def run(self, once: bool, interval: float, report: Callable[[Cycle], None] | None = None) -> int:
        """Cycle until stopped (or once); exit status 0 unless a build failed in `--once`."""
        report = report or (lambda cycle: print(cycle.line(), file=self.out, flush=True))
        number = 0
        while True:
            number += 1
            started = time.monotonic()
            cycle = self.cycle(number)
            report(cycle)
            if once:
                return 0 if cycle.built and not cycle.note else 1
            if self.stop is not None and self.stop.stopped:
                return 0
            if self.stop is not None:
                self.stop.sleep(interval - (time.monotonic() - started))
                if self.stop.stopped:
                    return 0


def _timestamp(moment: float) -> str:
    """A Spark SQL timestamp literal (UTC) of epoch seconds `moment`."""
    text = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return f"timestamp'{text}'"
