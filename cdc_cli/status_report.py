"""`python -m python_ingest status`: what the lakehouse holds and what runs for it
(docs/operations.md, "Status of a lakehouse").

Per producer: the messages landed in bronze, what became of those a build has decided
(silver.cdc_message_outcomes: applied, duplicate, control, pending, quarantined), those no build
has decided yet, and the last landing. Per source table: its changes, live rows, last commit
and how far behind that is now (gold.cdc_producer_freshness, gold.cdc_current). Then the last
build that committed to gold, and the lakehouse's services (metastore, SQL endpoint). A table a
first build has not made yet is reported as such, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from python_ingest.bronze import BRONZE_FORMATS

OUTCOMES = ("change", "duplicate", "control", "pending", "quarantined")
OUTCOME_TITLES = {"change": "applied"}  # the other outcomes are shown under their own name


@dataclass
class ProducerStatus:
    landed: int = 0
    last_landing: datetime | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    tables: list[dict[str, Any]] = field(default_factory=list)

    @property
    def undecided(self) -> int:
        """Landed messages no build has decided yet (staged by the next build)."""
        return max(self.landed - sum(self.outcomes.values()), 0)


@dataclass
class LakehouseStatus:
    home: Path
    producers: dict[str, ProducerStatus]
    last_build: datetime | None
    services: list[str]
    built: bool  # whether silver and gold exist (a build has run)


def _rows(spark, sql: str) -> list[Any]:
    return spark.sql(sql).collect()


def read_status(spark, home: Path, services: list[str]) -> LakehouseStatus:
    """What the lakehouse at `home` holds, read with `spark` (its session)."""
    exists = spark.catalog.tableExists
    producers: dict[str, ProducerStatus] = {}
    for source_format in BRONZE_FORMATS:
        table = f"bronze.raw_{source_format}"
        if not exists(table):
            continue
        [row] = _rows(spark, f"select count(distinct message_id), max(ingested_at) from {table}")
        if row[0]:
            producers[source_format] = ProducerStatus(landed=row[0], last_landing=row[1])
    built = exists("silver.cdc_message_outcomes") and exists("gold.cdc_producer_freshness")
    last_build = None
    if built:
        for row in _rows(
            spark,
            "select source_format, outcome, count(*) from silver.cdc_message_outcomes "
            "group by source_format, outcome",
        ):
            producers.setdefault(row[0], ProducerStatus()).outcomes[row[1]] = row[2]
        live = {
            row[0]: row[1]
            for row in _rows(spark, "select table_id, count(*) from gold.cdc_current group by table_id")
        }
        for row in _rows(
            spark,
            "select source_format, table_id, changes, last_commit_ts, last_change_ingested_at "
            "from gold.cdc_producer_freshness where table_id is not null order by source_format, table_id",
        ):
            producers.setdefault(row[0], ProducerStatus()).tables.append(
                {
                    "table_id": row[1],
                    "changes": row[2] or 0,
                    "live_rows": live.get(row[1], 0),
                    "last_commit": row[3],
                    "last_change_landed": row[4],
                }
            )
        if exists("gold.cdc_history"):
            [row] = _rows(spark, "select max(committed_at) from gold.cdc_history.snapshots")
            last_build = row[0]
    return LakehouseStatus(home, producers, last_build, services, built)


def service_lines(home: Path) -> list[str]:
    """Which of this lakehouse's services run (their state files, and whether the process lives)."""
    from dbt.adapters.spark_embedded import api as services

    found = []
    for name, state in (
        ("metastore", services.metastore_state(home)),
        ("SQL endpoint", services.sql_endpoint_state(home)),
    ):
        if state is not None and services.is_alive(int(state["pid"])):
            engine = ""
            if state.get("connect_port"):  # the SQL endpoint's Spark is the warm engine too
                engine = f", warm engine on {services.LOOPBACK}:{state['connect_port']}"
            found.append(f"{name} on {services.LOOPBACK}:{state['port']}{engine} (pid {state['pid']})")
        else:
            found.append(f"{name} not running")
    return found


def _time(moment: datetime | None) -> str:
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")


def _behind(moment: datetime | None, now: datetime) -> str:
    """How long ago `moment` (a UTC time without zone, as Spark returns it) was: `2 h 5 min`."""
    if moment is None:
        return "-"
    seconds = int((now - moment.replace(tzinfo=UTC)).total_seconds())
    if seconds < 120:
        return f"{max(seconds, 0)} s"
    minutes = seconds // 60
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h" if hours < 48 else f"{hours // 24} d"


def render(status: LakehouseStatus, now: datetime | None = None) -> str:
    """The status as the command prints it."""
    now = now or datetime.now(UTC)
    lines = [f"lakehouse {status.home}", "services: " + "; ".join(status.services)]
    if not status.built:
        lines.append("last build: none yet (run: dbt build)")
    else:
        lines.append(f"last build: {_time(status.last_build)} UTC ({_behind(status.last_build, now)} ago)")
    if not status.producers:
        lines.append("nothing landed yet (python -m python_ingest land ...)")
        return "\n".join(lines)
    columns = ("landed", *(OUTCOME_TITLES.get(o, o) for o in OUTCOMES), "not built", "last landing (UTC)")
    lines.append("")
    lines.append(f"{'producer':<12}" + "".join(f"{c:>12}" for c in columns[:-1]) + f"  {columns[-1]}")
    quarantined = 0
    for name in sorted(status.producers):
        producer = status.producers[name]
        counts = [producer.landed, *(producer.outcomes.get(o, 0) for o in OUTCOMES), producer.undecided]
        quarantined += producer.outcomes.get("quarantined", 0)
        lines.append(
            f"{name:<12}" + "".join(f"{n:>12}" for n in counts) + f"  {_time(producer.last_landing)}"
        )
    tables = [(name, t) for name in sorted(status.producers) for t in status.producers[name].tables]
    if tables:
        lines.append("")
        lines.append(
            f"{'producer':<12}{'table':<36}{'changes':>10}{'live rows':>11}  {'last commit (UTC)':<20}behind"
        )
        for name, table in tables:
            lines.append(
                f"{name:<12}{table['table_id']:<36}{table['changes']:>10}{table['live_rows']:>11}  "
                f"{_time(table['last_commit']):<20}{_behind(table['last_commit'], now)}"
            )
    if quarantined:
        lines.append("")
        lines.append(f"{quarantined} message(s) quarantined: read silver.cdc_quarantine for each reason")
    return "\n".join(lines)
