"""The peer of the project's pipeline: Apache Spark 4.3's own AUTO CDC (Spark Declarative
Pipelines, `pyspark.pipelines`) applying raw Debezium messages as SCD type 2 history.

    bash benchmarks/peer/setup.sh                                  # once: its own venv and jars
    benchmarks/peer/.venv/bin/python benchmarks/peer_auto_cdc.py \
        --input DIR [--more DIR] [--workdir DIR] [--format inmemory|delta|iceberg|parquet] \
        [--producer debezium|goldengate|canal|ces|dataworks]

DIR is what `python -m python_ingest generate --format debezium` writes (kcat/ and jsonl/).
The pipeline itself is benchmarks/peer/pipeline/debezium_auto_cdc.py (read its docstring):
per table topic, a streaming view that parses the messages with `from_json` and an
`create_auto_cdc_flow(..., stored_as_scd_type=2)` into a streaming table. With `--producer
goldengate`, `canal`, `ces` or `dataworks`, DIR is what `generate --format <producer>` writes,
and the pipeline is benchmarks/peer/pipeline/<producer>_auto_cdc.py (goldengate_auto_cdc.py,
canal_auto_cdc.py, ces_auto_cdc.py, dataworks_auto_cdc.py): the same shape, per source table.

It runs the way `spark-pipelines run --spec WORKDIR/spark-pipeline.yml` runs it, with one
difference: the CLI starts its local Spark Connect server on the fixed port 15002, which the
project's own warm engine may hold, so this script starts that server itself (the same thing
the CLI does: a Spark session with the Spark Connect plugin), on 127.0.0.1 and a port of its
own (--port), and then calls the CLI's own `run` against it. One JVM in all.

--more DIR: after the first run, the files of DIR are copied into the input as new files
(`<name>.more.kcat.jsonl`, `<name>.more.json`: DIR is laid out as the input, as the `more/` of
benchmarks/pipeline.py's split) and the pipeline runs again, incrementally, in the same server
(the in-memory target of --format inmemory lives only as long as its JVM).

Phases (time.perf_counter): spark start-up (server), pipeline run (graph registration and the
flows, as the CLI runs them), pipeline run (+more), and, outside the pipeline, the export of
every history table to WORKDIR/history/<target>.parquet (for a per-key diff) with its counts.
Prints a table of phases and history counts and writes WORKDIR/results.json.

Table formats (--format; the jars come from benchmarks/peer/setup.sh's cache):
    inmemory   Spark's own DSv2 row-level test catalog (SharedTablesInMemoryRowLevelOperation-
               TableCatalog from spark-catalyst 4.2.0's test jar): not durable, but it supports
               the row-level operations AUTO CDC needs. The one that works with Spark 4.3.0 here.
    delta      Delta Lake 4.4.0 (built for Spark 4.2): fails on Spark 4.3.0
               (benchmarks/peer/README.md says how).
    iceberg    Iceberg 1.12.0, Spark 4.1 runtime: fails on Spark 4.3.0 (same README).
    parquet    the session catalog's default tables (no row-level operations).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEER = HERE / "peer"
DEFINITIONS = PEER / "pipeline" / "debezium_auto_cdc.py"
# --producer: the pipeline definitions of each producer's traffic (what `generate --format NAME`
# writes), each file's docstring saying what it applies and what it leaves out.
PRODUCERS = {
    name: PEER / "pipeline" / f"{name}_auto_cdc.py"
    for name in ("debezium", "goldengate", "canal", "ces", "dataworks")
}
JAR_CACHE = Path(os.environ.get("PEER_JARS_CACHE", Path.home() / ".cache" / "cdc-lakehouse" / "peer-jars"))

FORMATS = {
    # format: (jar file names in the cache, server configuration, target `format`, catalog)
    "inmemory": (
        ["spark-catalyst_2.13-4.2.0-tests.jar"],
        {
            "spark.sql.catalog.peer": (
                "org.apache.spark.sql.connector.catalog.SharedTablesInMemoryRowLevelOperationTableCatalog"
            )
        },
        None,
        "peer",
    ),
    "delta": (
        ["delta-spark_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"],
        {
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        },
        "delta",
        "spark_catalog",
    ),
    "iceberg": (
        ["iceberg-spark-runtime-4.1_2.13-1.12.0.jar"],
        {
            "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            "spark.sql.catalog.peer": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.peer.type": "hadoop",
            "spark.sql.catalog.peer.warehouse": "{workdir}/iceberg",
        },
        None,
        "peer",
    ),
    "parquet": ([], {}, None, "spark_catalog"),
}


class Tee(io.TextIOBase):
    """Echo the CLI's output and keep each line with the time it arrived."""

    def __init__(self, start: float) -> None:
        self.start, self.lines, self.partial = start, [], ""

    def write(self, text: str) -> int:
        sys.__stdout__.write(text)
        sys.__stdout__.flush()
        self.partial += text
        *done, self.partial = self.partial.split("\n")
        now = time.perf_counter() - self.start
        self.lines.extend((now, line) for line in done if line)
        return len(text)


def start_server(workdir: Path, port: int, fmt: str, memory: str):
    """The local Spark Connect server the CLI would start, on 127.0.0.1:`port`."""
    from pyspark.sql import SparkSession

    jars, conf, _, _ = FORMATS[fmt]
    paths = [JAR_CACHE / "maven" / name for name in jars]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        sys.exit(f"missing jars (run benchmarks/peer/setup.sh): {', '.join(missing)}")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("peer_auto_cdc")
        .config("spark.driver.memory", memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.connect.grpc.binding.port", str(port))
        .config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        # Generous timeouts: on a busy machine a niced JVM can miss heartbeats for minutes.
        .config("spark.network.timeout", "900s")
        .config("spark.executor.heartbeatInterval", "60s")
    )
    if paths:
        builder = builder.config("spark.jars", ",".join(str(p) for p in paths))
    for key, value in conf.items():
        builder = builder.config(key, value.format(workdir=workdir))
    return builder.getOrCreate()


def write_spec(workdir: Path, fmt: str, definitions: Path = DEFINITIONS) -> Path:
    """WORKDIR/spark-pipeline.yml, with the definitions file linked under transformations/."""
    _, _, _, catalog = FORMATS[fmt]
    transformations = workdir / "transformations"
    transformations.mkdir(parents=True, exist_ok=True)
    link = transformations / definitions.name
    if not link.exists():
        link.symlink_to(definitions)
    spec = workdir / "spark-pipeline.yml"
    spec.write_text(
        "name: peer_auto_cdc\n"
        f"storage: file://{workdir / 'storage'}\n"
        f"catalog: {catalog}\n"
        "database: peer\n"
        "libraries:\n"
        "  - glob:\n"
        "      include: transformations/**\n",
        encoding="utf-8",
    )
    return spec


def cli_run(spec_path: Path, url: str, after=None) -> None:
    """`pyspark.pipelines.cli.run` (the body of `spark-pipelines run`), with the Spark Connect
    session made for `url`: the CLI's own builder refuses a remote session in a process that
    already runs the server's regular session, and would look for the server on port 15002.
    Before the run, the spec's database is created if missing (the CLI leaves that to the user);
    after it, `after(session)` runs in the same session (an in-memory catalog is per session)."""
    from pyspark.pipelines import cli
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    # What the builder sets for a remote session: pyspark.sql.functions then makes Spark Connect
    # columns (in this process the server's regular session would make it make classic ones).
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    # The definitions end with the flow of peer/pipeline/scd2.py, which they import.
    if str(PEER / "pipeline") not in sys.path:
        sys.path.insert(0, str(PEER / "pipeline"))
    cli.log_with_curr_timestamp(f"Loading pipeline spec from {spec_path}...")
    spec = cli.load_pipeline_spec(spec_path)
    cli.log_with_curr_timestamp("Creating Spark session...")
    builder = RemoteSparkSession.builder.remote(url)
    builder = builder.config("spark.sql.connect.serverStacktrace.enabled", "false")
    for key, value in spec.configuration.items():
        builder = builder.config(key, value)
    spark = builder.create()
    try:
        spark.sql(f"create namespace if not exists {spec.catalog}.{spec.database}")
        cli.log_with_curr_timestamp("Creating dataflow graph...")
        graph = cli.create_dataflow_graph(
            spark, default_catalog=spec.catalog, default_database=spec.database, sql_conf=spec.configuration
        )
        cli.log_with_curr_timestamp("Registering graph elements...")
        registry = cli.SparkConnectGraphElementRegistry(spark, graph)
        cli.register_definitions(spec_path, registry, spec, spark, graph)
        cli.log_with_curr_timestamp("Starting run...")
        events = cli.start_run(
            spark, graph, full_refresh=[], full_refresh_all=False, refresh=[], dry=False, storage=spec.storage
        )
        cli.handle_pipeline_events(events)
        if after is not None:
            after(spark)
    finally:
        spark.stop()


def run_pipeline(
    spec: Path, port: int, label: str, after=None
) -> tuple[float, list[tuple[float, str]], str | None]:
    """Run the pipeline as the CLI does; return seconds, the output lines and the error."""
    start = time.perf_counter()
    tee = Tee(start)
    error = None
    print(f"== {label}", flush=True)
    with contextlib.redirect_stdout(tee):
        try:
            cli_run(spec, f"sc://127.0.0.1:{port}", after)
        except Exception as exc:  # noqa: BLE001 (reported, not hidden)
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            traceback.print_exc(file=sys.stderr)
    return time.perf_counter() - start, tee.lines, error


def flow_times(lines: list[tuple[float, str]]) -> dict[str, float]:
    """Seconds from each flow's RUNNING event to its COMPLETED one (as the events arrived)."""
    started, times = {}, {}
    for at, line in lines:
        words = line.split()
        if "Flow" in words and ("RUNNING." in words or "COMPLETED." in words or "FAILED." in words):
            flow = words[words.index("Flow") + 1].strip("'`")
            if "RUNNING." in words:
                started[flow] = at
            elif flow in started:
                times[flow] = round(at - started[flow], 2)
    return times


def export(spark, workdir: Path, fmt: str) -> dict[str, dict]:
    """Every history table of the run to WORKDIR/history/<target>.parquet, with its counts."""
    from pyspark.sql import functions as F

    _, _, _, catalog = FORMATS[fmt]
    out, counts = workdir / "history", {}
    tables = [r.tableName for r in spark.sql(f"show tables in {catalog}.peer").collect()]
    for table in sorted(tables):
        if table.startswith("__") or table.endswith("_changes"):
            continue
        history = spark.table(f"{catalog}.peer.{table}")
        columns = history.columns
        end = next((c for c in columns if c.upper() == "__END_AT"), None)
        row = history.agg(
            F.count(F.lit(1)).alias("rows"),
            (F.count_if(F.col(end).isNull()) if end else F.lit(None)).alias("open_rows"),
        ).first()
        counts[table] = {"history_rows": row["rows"], "open_rows": row["open_rows"], "columns": columns}
        history.write.mode("overwrite").parquet(str(out / f"{table}.parquet"))
    return counts


def more_name(relative: Path) -> Path:
    """Where a file of --more goes in the input: beside its base file, under a new name (the
    project's benchmark cuts every file in two, base/<path> and more/<path>; the file source
    would take a file replaced in place for one already read)."""
    name = relative.name
    for suffix in (".kcat.jsonl", ".jsonl", ".json"):
        if name.endswith(suffix):
            return relative.with_name(name[: -len(suffix)] + ".more" + suffix)
    return relative.with_name(name + ".more")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--input", type=Path, required=True, help="the traffic (Debezium: kcat/, jsonl/)")
    parser.add_argument(
        "--producer", choices=sorted(PRODUCERS), default="debezium", help="whose traffic --input holds"
    )
    parser.add_argument("--more", type=Path, help="more files of the same traffic, for an incremental run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/peer_auto_cdc"))
    parser.add_argument("--format", choices=sorted(FORMATS), default="inmemory")
    parser.add_argument("--port", type=int, default=15099, help="Spark Connect port on 127.0.0.1")
    parser.add_argument("--driver-memory", default="2g")
    args = parser.parse_args()

    workdir = args.workdir.resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    inbox = workdir / "input"
    shutil.copytree(args.input, inbox)
    messages = sum(1 for p in inbox.rglob("*.json*") if not p.name.startswith("_") for _ in p.open("rb"))
    os.environ["PEER_INPUT"] = str(inbox)
    _, _, target_format, catalog = FORMATS[args.format]
    os.environ["PEER_TARGET_FORMAT"] = target_format or ""
    spec = write_spec(workdir, args.format, PRODUCERS[args.producer])

    phases: list[dict] = []
    start = time.perf_counter()
    spark = start_server(workdir, args.port, args.format, args.driver_memory)
    phases.append({"phase": "spark start-up", "seconds": round(time.perf_counter() - start, 2)})

    counts: dict[str, dict] = {}

    def exported(session) -> None:
        """Export the histories in the run's own session; the seconds are kept apart."""
        began = time.perf_counter()
        counts.clear()
        counts.update(export(session, workdir, args.format))
        seconds = round(time.perf_counter() - began, 2)
        phases.append({"phase": "export history (not the peer's work)", "seconds": seconds})

    def run(label: str, messages: int) -> str | None:
        seconds, lines, error = run_pipeline(spec, args.port, label, exported)
        exporting = phases.pop()["seconds"] if phases[-1]["phase"].startswith("export") else 0.0
        phases.append(
            {
                "phase": label,
                "seconds": round(seconds - exporting, 2),
                "messages": messages,
                "flows": flow_times(lines),
                "error": error,
            }
        )
        if exporting:
            phases.append({"phase": "export history (not the peer's work)", "seconds": exporting})
        return error

    error = run("pipeline run (full)", messages)
    if args.more and error is None:
        added = 0
        for path in sorted(args.more.rglob("*")):
            if path.is_file() and not path.name.startswith("_"):
                target = inbox / more_name(path.relative_to(args.more))
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
                added += sum(1 for _ in path.open("rb"))
        run("pipeline run (+more)", added)
    spark.stop()

    print(f"\nproducer {args.producer}, format {args.format}, input {args.input} ({messages:,} messages)")
    print("| phase | seconds | messages | error |\n|---|---:|---:|---|")
    for p in phases:
        print(f"| {p['phase']} | {p['seconds']} | {p.get('messages', '')} | {p.get('error') or ''} |")
    if counts:
        print("\n| history table | rows | open rows (__END_AT null) |\n|---|---:|---:|")
        for table, c in counts.items():
            print(f"| {table} | {c['history_rows']} | {c['open_rows']} |")
    (workdir / "results.json").write_text(
        json.dumps(
            {
                "producer": args.producer,
                "format": args.format,
                "input": str(args.input),
                "phases": phases,
                "history": counts,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    sys.exit(1 if any(p.get("error") for p in phases) else 0)


if __name__ == "__main__":
    main()
