"""Processes side by side on one lakehouse (docs/lakehouse.md, "One lakehouse, many processes"), as users
run them: real `land`, `dbt build` and `lakehouse` processes against a lakehouse of this
module's own, its metastore service started on demand by whichever process comes first, and
a SQL client (PyHive) of the endpoint.

- four `land` runs at once into one bronze table: each exits 0, bronze holds every message once;
- a `dbt build` while `land --watch` lands files arriving in its inbox: both exit 0 (the watch
  on SIGTERM), and the next build picks the messages up;
- a second `dbt build` while one runs: exits non-zero within seconds, in one line naming the
  running build, and changes nothing;
- `lakehouse start | status | stop` (the endpoint started in one test serves the next, then
  stops), a port already in use, queries of gold while a build and a
  land run, a query after a build seeing that build, `dbt build --target thrift` (the SQL models
  through the endpoint; a Debezium change waits, pending, for the next local build to decode it);
- while the endpoint runs, `land`, `dbt build` and `status` run on its Spark (the warm engine,
  Spark Connect) without a Java of their own; an append a killed `land` left running there is
  interrupted and waited for before the next run looks for it (python_ingest/engine_writes.py);
- no process of the project listens outside 127.0.0.1 at any point checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.lakehouse_query import ROOT, endpoint_rows, query
from tests.helpers.processes import Watch
from tests.helpers.services import stop_services

pytestmark = pytest.mark.services
# The dbt unit tests run once per suite (tests/e2e/test_dbt_project.py), not in every build here.
BUILD = ("dbt", "build", "--exclude-resource-type", "unit_test")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Lakehouse:
    """A lakehouse directory and the project's commands run against it."""

    def __init__(self, path: Path, port: int) -> None:
        self.path, self.port = path, port
        self.env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(path), "CDC_SQL_PORT": str(port)}

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        command = (
            [sys.executable, "-m", "python_ingest", *args]
            if args[0] != "dbt"
            else [str(Path(sys.executable).parent / "dbt"), *args[1:]]
        )
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, *args: str, timeout: float = 900, env: dict[str, str] | None = None) -> tuple[int, str]:
        process = self.start(*args, env=env)
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output

    def sql(self, statement: str) -> list[tuple]:
        return endpoint_rows(self.port, statement)


@pytest.fixture(scope="module")
def lakehouse(tmp_path_factory) -> Lakehouse:
    home = Lakehouse(tmp_path_factory.mktemp("shared") / "lakehouse", free_port())
    yield home
    stop_services(home.path)


@pytest.fixture(scope="module")
def traffic(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("traffic")
    subprocess.run(
        [sys.executable, "-m", "python_ingest", "generate", "--format", "dataworks", "--changes", "800"]
        + ["--partitions", "4", "--seed", "5", str(out / "dataworks")],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    for fmt in ("qlik", "ces", "debezium"):
        subprocess.run(
            [sys.executable, "-m", "python_ingest", "generate", "--format", fmt, "--changes", "150"]
            + ["--seed", "5", str(out / fmt)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    return out


def project_sockets_outside_loopback() -> list[str]:
    """Listening TCP sockets of this machine's java and python processes that are not bound to
    127.0.0.1 / ::1 (the sandbox's own agent, not a project process, is left out)."""
    listing = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    outside = []
    for line in listing.splitlines():
        fields = line.split()
        local, process = fields[3], " ".join(fields[5:])
        if re.search(r"(127\.0\.0\.1|\[::1\]|\[::ffff:127\.0\.0\.1\]):\d+$", local):
            continue
        if '"java"' in process or '"python' in process:
            outside.append(line)
    return outside


def test_four_land_runs_at_once_into_one_table_lose_and_duplicate_nothing(lakehouse, traffic) -> None:
    files = sorted((traffic / "dataworks").glob("partition-*.jsonl"))
    runs = [
        lakehouse.start(
            "land", "--format", "dataworks", "--container", "jsonl", "--chunk-size", "300", str(f)
        )
        for f in files
    ]
    outputs = [run.communicate(timeout=900)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], outputs
    assert not any("Traceback" in output or "Exception" in output for output in outputs), outputs
    lines = sum(1 for f in files for line in f.read_text().splitlines() if line.strip())
    [counts] = query(
        lakehouse.path, "select count(*) as n, count(distinct message_id) as d from bronze.raw_dataworks"
    )
    assert counts == {"n": lines, "d": lines}
    assert project_sockets_outside_loopback() == []


def test_a_build_and_a_land_watch_run_side_by_side_and_a_second_build_is_refused(
    lakehouse, traffic, tmp_path
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    watch = Watch(lakehouse.path, [f"qlik:jsonl:{inbox}"], interval=1, chunk_size=50_000)
    build = lakehouse.start(*BUILD)
    lock = lakehouse.path / "services" / "build.json"
    deadline = time.monotonic() + 300
    while not lock.is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert lock.is_file(), "the build never took the build lock"

    second_started = time.monotonic()
    code, second = lakehouse.run(*BUILD)
    refused_after = time.monotonic() - second_started
    # Files arrive in the watched inbox while the build runs; the watch lands them.
    shutil.copytree(traffic / "qlik", inbox / "qlik")
    expected = sum(1 for p in (inbox / "qlik").glob("*.jsonl") for line in p.open() if line.strip())
    try:
        watch.wait_for("qlik landed", lambda: watch.committed().get("bronze.raw_qlik") == expected, 300)
        running_meanwhile = build.poll() is None
    finally:
        watched = watch.stop()
    landed = watch.output
    output, _ = build.communicate(timeout=900)

    assert build.returncode == 0, output[-3000:]
    assert watched == 0 and watch.lines[-1].startswith("stopped watching"), landed
    assert code != 0
    holder = json.loads(lock.read_text())
    refusals = [line for line in second.splitlines() if "is building this lakehouse" in line]
    assert len(refusals) == 1 and f"pid {holder['pid']}" in refusals[0], second
    assert refused_after < 60, f"the second build took {refused_after:.0f}s to give up"
    assert running_meanwhile, "the first build ended before the land run: nothing ran side by side"
    assert "Traceback" not in second and "Traceback" not in landed
    # The next build takes the messages landed meanwhile: the first build of the test below,
    # which checks that every one of them has its outcome.


def test_the_sql_endpoint_serves_gold_while_builds_and_landing_go_on(lakehouse, traffic, tmp_path) -> None:
    code, output = lakehouse.run("lakehouse", "status")
    assert code != 0 and "not running" in output

    started = time.monotonic()
    code, output = lakehouse.run("lakehouse", "start")
    assert code == 0, output
    assert f"jdbc:hive2://127.0.0.1:{lakehouse.port}/default" in output
    start_seconds = time.monotonic() - started
    again, output_again = lakehouse.run("lakehouse", "start")  # already running: says so, exits 0
    assert again == 0 and f"127.0.0.1:{lakehouse.port}" in output_again
    assert lakehouse.run("lakehouse", "status")[0] == 0
    assert project_sockets_outside_loopback() == []

    current = "select count(*) from gold.cdc_current"
    [(before,)] = lakehouse.sql(current)
    assert before > 0
    # SQL clients see the documentation: gold's column comments are in the catalog.
    described = {row[0]: row[2] for row in lakehouse.sql("describe gold.cdc_history")}
    assert described["is_active"].startswith("True on the live version of a key"), described
    assert all(described[c] for c in ("table_id", "primary_key", "row_data", "valid_to")), described
    described_current = {row[0]: row[2] for row in lakehouse.sql("describe gold.cdc_current")}
    assert all(described_current[c] for c in ("table_id", "row_data", "change_id")), described_current
    # "As of" in one line: the rows live now are the live rows.
    [(live_now,)] = lakehouse.sql(
        "select count(*) from gold.cdc_history where current_timestamp() between valid_from and live_until"
    )
    assert live_now == before
    build = lakehouse.start(*BUILD)
    land = lakehouse.start("land", "--format", "ces", "--container", "jsonl", str(traffic / "ces"))
    answered = 0
    while build.poll() is None or land.poll() is None:
        [(seen,)] = lakehouse.sql(current)  # never fails while the others write
        assert seen >= before
        answered += 1
        time.sleep(1)
    assert answered > 0
    assert land.returncode == 0, land.communicate()[0]
    assert build.returncode == 0, build.communicate()[0][-3000:]
    assert project_sockets_outside_loopback() == []
    # That build took the Qlik messages the watch of the test before landed while that test's
    # build ran: every one of them has its outcome.
    [(landed, outcomes)] = lakehouse.sql(
        "select (select count(distinct message_id) from bronze.raw_qlik), "
        "(select count(*) from silver.cdc_message_outcomes where source_format = 'qlik')"
    )
    assert landed == outcomes > 0
    # Every source table is typed by the builds alone: each generated view answers.
    typed = lakehouse.sql(
        "select relation_name, history_relation_name from gold.cdc_typed_tables where untyped_reason is null"
    )
    assert len(typed) >= 4, typed
    views = [name for pair in typed for name in pair]
    counts = lakehouse.sql(" union all ".join(f"select '{v}', count(*) from gold.`{v}`" for v in views))
    assert {name for name, _ in counts} == set(views), counts
    assert all(n > 0 for name, n in counts if name in dict(typed).values()), counts  # every history

    # The SQL models build through the endpoint (Python models need a session target): a Debezium
    # row change landed meanwhile waits, pending, for the decoder (a Python model) ...
    code, output = lakehouse.run(
        "land", "--format", "debezium", "--container", "kcat", traffic / "debezium" / "kcat"
    )
    assert code == 0, output
    code, output = lakehouse.run(*BUILD, "--target", "thrift", "--exclude", "tag:python")
    assert code == 0, output[-3000:]
    outcomes = (
        "select outcome, count(*) from silver.cdc_message_outcomes "
        "where source_format = 'debezium' group by outcome"
    )
    assert dict(lakehouse.sql(outcomes)).get("pending", 0) > 0

    # ... which the next local build decodes; and a query started after that build committed,
    # in the endpoint that has answered all along, sees it (no stale catalog cache).
    code, output = lakehouse.run(*BUILD)
    assert code == 0, output[-3000:]
    assert "pending" not in dict(lakehouse.sql(outcomes))
    [(after,)] = lakehouse.sql(current)
    [(expected,)] = [tuple(r.values()) for r in query(lakehouse.path, current)]
    assert after == expected > before
    tables = lakehouse.sql("select distinct table_id from gold.cdc_current where table_id like 'gendb.%'")
    assert len(tables) >= 4, "the CES and Debezium tables landed meanwhile are in gold"

    # A port another lakehouse's endpoint holds: one clear line naming that lakehouse, nothing started.
    other = Lakehouse(tmp_path / "other-lakehouse", lakehouse.port)
    other.path.mkdir()
    code, output = other.run("lakehouse", "start")
    assert code != 0
    assert (
        f"error: 127.0.0.1:{lakehouse.port} is held by the SQL endpoint of the lakehouse {lakehouse.path}"
        in output
    ), output
    stop_services(other.path)
    # The endpoint stays up for the next test (its engine warm); that test stops it.
    print(f"SQL endpoint started in {start_seconds:.1f}s")


# A landing run's append on the warm engine, left running by a kill -9: one that scans without
# end, in a session of the engine's landing user, under the tag of chunk "orphan:1".
ORPHAN_APPEND = """
import sys
from pyspark.sql import SparkSession
from dbt.adapters.spark_embedded.services import ENGINE_USER
from python_ingest.engine_writes import tagged

spark = SparkSession.builder.remote(f"{sys.argv[1]}/;user_id={ENGINE_USER}").create()
spark.sql("create database if not exists scratch")
spark.sql("create table if not exists scratch.orphan_probe (id bigint) using iceberg")
print(spark.session_id, flush=True)
with tagged(spark, "orphan:1"):
    spark.range(0, 10**13).where("sha2(cast(id as string), 256) = 'none'").writeTo(
        "scratch.orphan_probe"
    ).append()
"""


def test_land_and_build_run_on_the_warm_engine_and_a_killed_runs_append_is_settled(
    lakehouse, tmp_path
) -> None:
    from python_ingest import engine_writes

    lakehouse.path.mkdir(parents=True, exist_ok=True)  # when run alone
    code, output = lakehouse.run("lakehouse", "start")  # still running after the test before
    assert code == 0, output
    try:
        # No Java for the commands: they can only run on the engine.
        no_java = {"JAVA_HOME": str(tmp_path / "no-java")}
        inbox = tmp_path / "ces"
        subprocess.run(
            [sys.executable, "-m", "python_ingest", "generate", "--format", "ces", "--changes", "40"]
            + ["--seed", "11", str(inbox)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        lines = sum(len(f.read_text().splitlines()) for f in inbox.rglob("*.jsonl"))
        land = ("land", "--format", "ces", "--container", "jsonl", str(inbox))
        code, output = lakehouse.run(*land, env=no_java)
        assert code == 0, output
        assert f"landed {lines} message(s)" in output, output
        code, output = lakehouse.run(*BUILD, env=no_java)
        assert code == 0, output[-3000:]
        assert "Messages this build decided" in output, output[-3000:]
        # Nothing new: every incremental model is left as it is, its idle decision taken from
        # the engine's metadata tables (idle_models.sql, iceberg_last_commits_of).
        code, output = lakehouse.run(*BUILD, env=no_java)
        assert code == 0, output[-3000:]
        incremental = [
            line for line in output.splitlines() if "OK created" in line and "incremental model" in line
        ]
        assert incremental and all("IDLE" in line for line in incremental), output[-3000:]
        code, output = lakehouse.run("status", env=no_java)
        assert code == 0, output

        # kill -9 of a run whose append the engine carries on: settle interrupts it and
        # returns once it has ended, so that nothing commits after the next run has looked.
        state = json.loads((lakehouse.path / "services" / "sql-endpoint.json").read_text())
        url = f"sc://127.0.0.1:{state['connect_port']}"
        writer = subprocess.Popen(
            [sys.executable, "-c", ORPHAN_APPEND, url], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        session = writer.stdout.readline().strip()
        assert session, "the orphan's session did not start"
        time.sleep(3)  # its append runs on the engine
        writer.kill()
        writer.wait()
        settled: dict[str, list[str]] = {}
        engine = {"url": url, "session": session}
        thread = threading.Thread(
            target=lambda: settled.update(operations=engine_writes.settle(engine, "orphan:1")), daemon=True
        )
        thread.start()
        thread.join(180)
        assert not thread.is_alive(), "settle did not return: the killed run's append still runs"
        assert len(settled["operations"]) == 1, settled
        snapshots = "select count(*) from scratch.orphan_probe.snapshots"
        [(after_settle,)] = lakehouse.sql(snapshots)
        time.sleep(5)
        assert lakehouse.sql(snapshots) == [(after_settle,)] == [(0,)]
        assert engine_writes.settle(engine, "orphan:1") == []  # nothing left to settle

        code, output = lakehouse.run("lakehouse", "stop")
        assert code == 0 and "SQL endpoint" in output
        assert lakehouse.run("lakehouse", "status")[0] != 0
        assert lakehouse.run("lakehouse", "stop")[0] == 0  # nothing running: still fine
    finally:
        stop_services(lakehouse.path)
