"""What each node of a dbt build reads: the rows Spark's table scans returned, per node and table.

Issue 38 asks that an incremental build cost what its new data costs. A node whose scans return
about a whole table's rows for an increment of a few thousand messages still reads stored data
whole; this script finds those nodes. It runs a dbt command in this process (Spark in it too:
`CDC_WARM_ENGINE=off`) with Spark's event log on, and labels every statement dbt sends with the
node it belongs to (read from the query comment dbt puts first, `"node_id": ...`), as the job
description of the thread that runs it, which Spark records with each SQL execution. Then it
reads the event log: for every SQL execution, the tasks' updates of the "number of output rows"
metric of each table scan in its plans (the first plan and the adaptive ones), summed per node
and table.

    .venv/bin/python benchmarks/rows_read.py [--event-logs DIR] [--top 25] [--stages] -- \
        build --exclude-resource-type unit_test
    .venv/bin/python benchmarks/rows_read.py --report EVENT_LOG [--top 25] [--stages]

`--stages` adds the nodes that ran the most Spark stages: their jobs, stages, the stages' seconds
(which overlap), and how many of the stages scan an Iceberg metadata table (`entries`,
`snapshots`, ...). A build is bound by its queries' count and shape more than by the rows they
read (docs/benchmarks.md, "The accounting test: its bounds as literals"), and this shows which
nodes make the most of them.

The arguments after `--` are dbt's (`dbt build ...` without `dbt`), against the lakehouse of
`$CDC_LAKEHOUSE_DIR` as usual. A scan's rows are those it returned after Iceberg skipped whole
files by their column bounds and before Spark's own filters; a statement that no query comment
names (a hook's, the adapter's own reads through Iceberg's API) counts under the last node its
thread ran, or under `(none)`.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
from pathlib import Path

NODE_ID = re.compile(r'"node_id":\s*"([^"]+)"')
SCAN = re.compile(r"^(?:BatchScan|Scan)\b")
OUTPUT_ROWS = "number of output rows"
EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
ADAPTIVE_UPDATE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
EXECUTION_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"
NONE = "(none)"
# Iceberg's metadata tables, as the last part of a scanned table's name (`bronze.raw_ces.entries`).
METADATA_TABLES = frozenset(
    ("entries", "snapshots", "files", "data_files", "delete_files", "manifests", "metadata_log_entries")
    + ("history", "partitions", "refs", "position_deletes", "all_data_files", "all_entries", "all_manifests")
)


def scan_metrics(plan: dict, found: dict[int, str]) -> None:
    """Into `found`: the accumulator id of each table scan's output rows in `plan` (a
    sparkPlanInfo), with the scanned table's name."""
    if SCAN.match(plan.get("nodeName", "")):
        for metric in plan.get("metrics", []):
            if metric.get("name") == OUTPUT_ROWS:
                found[metric["accumulatorId"]] = table_name(plan)
    for child in plan.get("children", []):
        scan_metrics(child, found)


def table_name(plan: dict) -> str:
    """The table a scan node reads, from its name (`BatchScan spark_catalog.silver.t`) or its
    description; a metadata table keeps its suffix (`....entries`)."""
    words = plan.get("nodeName", "").split()
    if len(words) > 1:
        return words[1].removeprefix("spark_catalog.")
    text = plan.get("simpleString", "")
    match = re.search(r"(?:spark_catalog\.)?([\w]+\.[\w]+(?:\.[\w]+)?)", text)
    return match[1] if match else text[:60]


def event_lines(path: Path):
    """The events of a Spark event log: a file, or the directory of a rolling log (Spark 4's
    default, `eventlog_v2_<app>/events_<n>_<app>`), its files in their order."""
    if not path.is_dir():
        files = [path]
    else:
        files = sorted(path.glob("events_*"), key=lambda f: int(f.name.split("_")[1]))
    for file in files:
        with file.open(encoding="utf-8") as log:
            yield from log


def read_event_log(path: Path) -> dict[str, dict]:
    """Per dbt node (the job description of its SQL executions): executions, seconds in them,
    and rows returned by the scans of each table."""
    metric_table: dict[int, str] = {}
    metric_execution: dict[int, int] = {}
    execution_node: dict[int, str] = {}
    execution_times: dict[int, list[float]] = {}
    rows: collections.Counter = collections.Counter()  # accumulator id -> rows
    job_executions: list[int | None] = []  # the SQL execution of each job (None: no SQL)
    stage_execution: dict[int, int | None] = {}
    # (execution, seconds, whether it scans a metadata table) of each stage run
    stages: list[tuple[int | None, float, bool]] = []
    for line in event_lines(path):
        event = json.loads(line)
        kind = event.get("Event")
        if kind in (EXECUTION_START, ADAPTIVE_UPDATE):
            execution = event["executionId"]
            if kind == EXECUTION_START:
                execution_node[execution] = event.get("description") or NONE
                # A statement's executions nest (a merge's or a CTAS's query is an execution of
                # its own under the command's): only the outermost one's time counts.
                if event.get("rootExecutionId", execution) == execution:
                    execution_times[execution] = [event.get("time", 0) / 1000, event.get("time", 0) / 1000]
            found: dict[int, str] = {}
            scan_metrics(event["sparkPlanInfo"], found)
            metric_table.update(found)
            metric_execution.update(dict.fromkeys(found, execution))
        elif kind == EXECUTION_END and event["executionId"] in execution_times:
            execution_times[event["executionId"]][1] = event.get("time", 0) / 1000
        elif kind == "SparkListenerTaskEnd":
            for accumulable in (event.get("Task Info") or {}).get("Accumulables", []):
                if accumulable.get("ID") in metric_table:
                    rows[accumulable["ID"]] += int(accumulable.get("Update") or 0)
        elif kind == "SparkListenerJobStart":
            found = (event.get("Properties") or {}).get("spark.sql.execution.id")
            execution = int(found) if found is not None else None
            job_executions.append(execution)
            stage_execution.update(dict.fromkeys(event.get("Stage IDs", []), execution))
        elif kind == "SparkListenerStageCompleted":
            stage = event["Stage Info"]
            if "Submission Time" in stage and "Completion Time" in stage:  # skipped stages have neither
                stages.append(
                    (
                        stage_execution.get(stage["Stage ID"]),
                        (stage["Completion Time"] - stage["Submission Time"]) / 1000,
                        scans_metadata(stage),
                    )
                )
    nodes: dict[str, dict] = {}

    def entry_of(execution: int | None) -> dict:
        node = node_of(execution_node.get(execution, NONE)) if execution is not None else NONE
        return nodes.setdefault(
            node,
            {
                "executions": 0,
                "seconds": 0.0,
                "tables": collections.Counter(),
                "jobs": 0,
                "stages": 0,
                "stage_seconds": 0.0,
                "metadata_stages": 0,
            },
        )

    for execution in execution_node:
        entry = entry_of(execution)
        entry["executions"] += 1
        start, end = execution_times.get(execution, (0.0, 0.0))
        entry["seconds"] += max(0.0, end - start)
    for execution in job_executions:
        entry_of(execution)["jobs"] += 1
    for execution, seconds, metadata in stages:
        entry = entry_of(execution)
        entry["stages"] += 1
        entry["stage_seconds"] += seconds
        entry["metadata_stages"] += metadata
    for accumulator, count in rows.items():
        node = node_of(execution_node.get(metric_execution[accumulator], NONE))
        nodes[node]["tables"][metric_table[accumulator]] += count
    return nodes


def scans_metadata(stage: dict) -> bool:
    """Whether a stage (a `Stage Info` of the event log) scans an Iceberg metadata table, read
    from its RDDs' operator scopes (`BatchScan spark_catalog.bronze.raw_ces.entries`)."""
    for rdd in stage.get("RDD Info", []):
        try:
            name = json.loads(rdd.get("Scope") or "{}").get("name", "")
        except ValueError:
            continue
        if SCAN.match(name) and name.split()[-1].rsplit(".", 1)[-1] in METADATA_TABLES:
            return True
    return False


def stages_report(nodes: dict[str, dict], top: int) -> str:
    """The nodes that ran the most Spark stages."""
    ranked = sorted(nodes.items(), key=lambda item: -item[1]["stages"])
    lines = [
        f"{sum(e['jobs'] for e in nodes.values())} Spark jobs, "
        f"{sum(e['stages'] for e in nodes.values())} stages run, "
        f"{sum(e['metadata_stages'] for e in nodes.values())} of them scanning metadata tables",
        "",
        "| node | SQL executions | jobs | stages | stages' seconds | stages scanning metadata tables |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for node, entry in ranked[:top]:
        lines.append(
            f"| {node_name(node)} | {entry['executions']} | {entry['jobs']} | {entry['stages']} | "
            f"{entry['stage_seconds']:.1f} | {entry['metadata_stages']} |"
        )
    return "\n".join(lines)


def node_of(description: str) -> str:
    """The node a job description names (the script labels them with dbt's node ids)."""
    return description if description.startswith(("model.", "test.", "seed.", "operation.")) else NONE


def node_name(node: str) -> str:
    """`model cdc_history` for `model.cdc_lakehouse.cdc_history`; a generic test's name without
    the hash dbt appends to its id (`test.project.<name>.<hash>`), cut at 70 characters."""
    if node == NONE:
        return node
    kind, _project, rest = node.split(".", 2)
    if kind == "test" and "." in rest:
        rest = rest.rsplit(".", 1)[0]
    return f"{kind} {rest[:70]}"


def report(nodes: dict[str, dict], top: int) -> str:
    """The nodes whose scans returned the most rows, with each table's share."""
    ranked = sorted(nodes.items(), key=lambda item: -sum(item[1]["tables"].values()))
    total = sum(sum(entry["tables"].values()) for entry in nodes.values())
    lines = [
        f"{len(nodes)} nodes, {sum(e['executions'] for e in nodes.values())} SQL executions, "
        f"{total:,} rows returned by table scans",
        "",
        "| node | SQL executions | seconds in them | rows scanned | of which, by table |",
        "|---|---:|---:|---:|---|",
    ]
    for node, entry in ranked[:top]:
        tables = ", ".join(f"{table} {count:,}" for table, count in entry["tables"].most_common(4))
        name = node_name(node)
        scanned = sum(entry["tables"].values())
        lines.append(f"| {name} | {entry['executions']} | {entry['seconds']:.1f} | {scanned:,} | {tables} |")
    return "\n".join(lines)


def label_statements() -> None:
    """Make dbt-spark's session cursor name each statement's node as its thread's job description."""
    from dbt.adapters.spark import session
    from pyspark import SparkContext

    execute = session.Cursor.execute

    def labelled(self, sql: str, *parameters):
        found = NODE_ID.search(sql[:2000])
        context = SparkContext._active_spark_context
        if found and context is not None:
            context.setLocalProperty("spark.job.description", found[1])
        return execute(self, sql, *parameters)

    session.Cursor.execute = labelled


def run_dbt(arguments: list[str], event_logs: Path | None) -> Path:
    """Run dbt with `arguments` here, the event log into `event_logs` (None: a new temporary
    directory); the log it wrote."""
    event_logs = event_logs or Path(tempfile.mkdtemp(prefix="rows-read-"))
    event_logs.mkdir(parents=True, exist_ok=True)
    before = set(event_logs.iterdir())
    os.environ["CDC_WARM_ENGINE"] = "off"  # Spark in this process: its statements are labelled
    os.environ["PYSPARK_SUBMIT_ARGS"] = (
        f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir={event_logs.resolve().as_uri()} "
        "--conf spark.eventLog.compress=false pyspark-shell"
    )
    label_statements()
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(arguments)
    if not result.success:
        print(f"dbt {' '.join(arguments)} did not succeed; the report covers what ran.", file=sys.stderr)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()  # the event log is complete once the application ends
    written = sorted(set(event_logs.iterdir()) - before, key=lambda p: p.stat().st_mtime)
    if not written:
        raise SystemExit(f"no event log was written into {event_logs}")
    return written[-1]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    dbt_arguments = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--report", type=Path, help="read this event log instead of running dbt")
    parser.add_argument("--event-logs", type=Path, default=None, help="where Spark writes its event log")
    parser.add_argument("--top", type=int, default=25, help="how many nodes to list")
    parser.add_argument("--stages", action="store_true", help="also the nodes that ran the most Spark stages")
    args = parser.parse_args(own)
    if args.report is None and not dbt_arguments:
        parser.error("give dbt's arguments after --, or --report EVENT_LOG")
    path = args.report or run_dbt(dbt_arguments, args.event_logs)
    print(f"event log: {path}")
    nodes = read_event_log(path)
    print(report(nodes, args.top))
    if args.stages:
        print()
        print(stages_report(nodes, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
