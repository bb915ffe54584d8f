"""benchmarks/rows_read.py: the rows each dbt node's table scans returned, read from a Spark event
log (its own run of dbt against a lakehouse is measured by hand: docs/benchmarks.md)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import rows_read

START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
ADAPTIVE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"


def scan(table: str, accumulator: int) -> dict:
    return {
        "nodeName": f"BatchScan spark_catalog.{table}",
        "simpleString": f"BatchScan spark_catalog.{table}[key_hash#1] (branch=null)",
        "children": [],
        "metrics": [
            {"name": "number of output rows", "accumulatorId": accumulator, "metricType": "sum"},
            {"name": "scan time", "accumulatorId": accumulator + 1000, "metricType": "timing"},
        ],
    }


def plan(*children: dict) -> dict:
    return {
        "nodeName": "HashAggregate",
        "simpleString": "HashAggregate",
        "children": list(children),
        "metrics": [],
    }


def task_end(*updates: tuple[int, int]) -> dict:
    return {
        "Event": "SparkListenerTaskEnd",
        "Task Info": {
            "Accumulables": [{"ID": i, "Name": "x", "Update": str(n), "Value": str(n)} for i, n in updates]
        },
    }


def start(execution: int, description: str, at: int, *scans: dict, root: int | None = None) -> dict:
    """An SQL execution's start event, its plan reading `scans`."""
    event = {"Event": START, "executionId": execution, "description": description, "time": at}
    if root is not None:
        event["rootExecutionId"] = root
    return {**event, "sparkPlanInfo": plan(*scans)}


def write_log(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    return path


def test_rows_of_each_scan_are_summed_per_node_and_table(tmp_path: Path) -> None:
    history = "model.cdc_lakehouse.cdc_history"
    events = [
        start(1, history, 1_000, scan("gold.cdc_history", 10)),
        # The adaptive plan adds a scan of its own (a new accumulator).
        {
            "Event": ADAPTIVE,
            "executionId": 1,
            "sparkPlanInfo": plan(scan("gold.cdc_history", 10), scan("silver.cdc_changes", 11)),
        },
        task_end((10, 400), (1010, 99)),
        # The merge's query: an execution nested in the statement's, its time in the outer one's.
        start(4, history, 1_500, scan("gold.cdc_history", 40), root=1),
        task_end((10, 600), (11, 50), (40, 5)),
        {"Event": END, "executionId": 4, "time": 3_000},
        {"Event": END, "executionId": 1, "time": 3_500},
        start(2, "test.cdc_lakehouse.grain_x.5431b581a4", 4_000, scan("silver.cdc_changes", 20)),
        task_end((20, 7)),
        {"Event": END, "executionId": 2, "time": 4_250},
        # A statement no query comment named: Spark's own call site as its description.
        start(3, "sql at NativeMethodAccessorImpl.java:0", 5_000, scan("bronze.raw_ces.entries", 30)),
        task_end((30, 3)),
        {"Event": END, "executionId": 3, "time": 5_100},
    ]
    nodes = rows_read.read_event_log(write_log(tmp_path / "events", events))

    assert nodes[history]["tables"] == {"gold.cdc_history": 1005, "silver.cdc_changes": 50}
    assert nodes[history]["executions"] == 2 and nodes[history]["seconds"] == 2.5
    assert nodes["test.cdc_lakehouse.grain_x.5431b581a4"]["tables"] == {"silver.cdc_changes": 7}
    assert nodes[rows_read.NONE]["tables"] == {"bronze.raw_ces.entries": 3}

    text = rows_read.report(nodes, top=2)
    lines = text.splitlines()
    assert lines[0] == "3 nodes, 4 SQL executions, 1,065 rows returned by table scans"
    history_line = "| model cdc_history | 2 | 2.5 | 1,055 | gold.cdc_history 1,005, silver.cdc_changes 50 |"
    assert lines[4] == history_line
    assert lines[5] == "| test grain_x | 1 | 0.2 | 7 | silver.cdc_changes 7 |"  # without dbt's hash
    assert len(lines) == 6  # the two nodes that read the most


def test_the_node_of_a_statement_comes_from_dbts_query_comment() -> None:
    comment = (
        '/* {"app": "dbt", "dbt_version": "1.11.2", "node_id": "model.cdc_lakehouse.cdc_changes"} */\n'
        "select 1"
    )
    assert rows_read.NODE_ID.search(comment)[1] == "model.cdc_lakehouse.cdc_changes"
    assert rows_read.node_of("model.cdc_lakehouse.cdc_changes") == "model.cdc_lakehouse.cdc_changes"
    assert rows_read.node_of("collect at /x.py:3") == rows_read.NONE


def stage_completed(stage: int, seconds: float, *scopes: str) -> dict:
    """A stage's end event, its RDDs under the operator scopes `scopes`."""
    rdds = [{"Scope": json.dumps({"id": str(n), "name": name})} for n, name in enumerate(scopes)]
    info = {"Stage ID": stage, "Submission Time": 10_000, "Completion Time": 10_000 + int(seconds * 1000)}
    return {"Event": "SparkListenerStageCompleted", "Stage Info": {**info, "RDD Info": rdds}}


def test_stages_are_counted_per_node_with_those_that_scan_metadata_tables(tmp_path: Path) -> None:
    accounting = "test.cdc_lakehouse.assert_every_bronze_message_has_one_outcome"
    events = [
        start(1, accounting, 1_000, scan("bronze.raw_ces", 10)),
        {
            "Event": "SparkListenerJobStart",
            "Job ID": 0,
            "Stage IDs": [0, 1],
            "Properties": {"spark.sql.execution.id": "1"},
        },
        stage_completed(0, 0.5, "BatchScan spark_catalog.bronze.raw_ces.entries", "BroadcastExchange"),
        stage_completed(1, 1.5, "BatchScan spark_catalog.bronze.raw_ces", "Exchange"),
        # A job of its own for a stage the first one computed: skipped, so no completion.
        {
            "Event": "SparkListenerJobStart",
            "Job ID": 1,
            "Stage IDs": [2],
            "Properties": {"spark.sql.execution.id": "1"},
        },
        {"Event": END, "executionId": 1, "time": 3_000},
        # A job outside any SQL execution (a collect of Iceberg's own).
        {"Event": "SparkListenerJobStart", "Job ID": 2, "Stage IDs": [3], "Properties": {}},
        stage_completed(3, 0.25, "mapPartitions"),
    ]
    nodes = rows_read.read_event_log(write_log(tmp_path / "events", events))
    entry = nodes[accounting]
    assert (entry["jobs"], entry["stages"], entry["stage_seconds"], entry["metadata_stages"]) == (
        2,
        2,
        2.0,
        1,
    )
    assert (nodes[rows_read.NONE]["jobs"], nodes[rows_read.NONE]["stages"]) == (1, 1)

    lines = rows_read.stages_report(nodes, top=1).splitlines()
    assert lines[0] == "3 Spark jobs, 3 stages run, 1 of them scanning metadata tables"
    assert lines[4] == "| test assert_every_bronze_message_has_one_outcome | 1 | 2 | 2 | 2.0 | 1 |"
    assert len(lines) == 5
