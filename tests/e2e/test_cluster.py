"""The `cluster` target on a real Spark standalone cluster of two workers over an object store
(docs/lakehouse.md, "Running on a cluster" and "A cluster on an object store"): an S3-compatible
object store (SeaweedFS, cdc_cluster/object_store.py) on 127.0.0.1; `python -m python_ingest
cluster start DIR --warehouse s3a://…` starts PostgreSQL, the metastore service on it, a master
and two workers (one core each, each with work and local directories of its own) on 127.0.0.1
(cdc_cluster/standalone.py), with the object store's credentials in their environment only. The
repository's sample messages and the generated traffic of every producer are landed with `land
--target cluster` and the whole `dbt build --target cluster` (Python models included) runs
against it, each in a process of its own, as a user runs them. The same commands with the
local target build a lakehouse on a local warehouse (tests/conftest.py's `local_reference`, which
tests/e2e/test_object_store.py compares with too). Then:

- gold is the same in both: every column of every row of ``gold.cdc_history``, of
  ``gold.cdc_current`` and of the published typed history views;
- the warehouse is in the bucket: the tables' data and metadata files are objects there, and
  no table file is anywhere under the cluster's directory (the workers share no disk but the
  object store);
- the SQL endpoint of the cluster target (`lakehouse start --target cluster`) answers from it;
- the cluster's work ran on its executors: every application of the cluster had an executor
  (a JVM of a worker's) that finished tasks, the build's executors on both workers finished
  tasks, and the Python models' UDFs ran on their Python workers;
- every listener of the cluster's processes, the drivers' and the object store's included, is
  on 127.0.0.1;
- `cluster stop` leaves no process of the cluster behind.

Kept cheap (the suite's time): the sample data and the generated traffic of the shared
generated-traffic tests (about 4,700 messages), one land and one build per target, one cluster.
`land` killed and run again against the object store is tests/e2e/test_object_store.py's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded.services import METASTORE_SOURCE

from cdc_cluster.object_store import ObjectStore
from cdc_cluster.servers import free_port
from cdc_cluster.standalone import exported
from tests.helpers.generated_traffic import write_all
from tests.helpers.lakehouse_query import ROOT, endpoint_rows, queries
from tests.helpers.processes import kill_group, start_in_group
from tests.helpers.real_servers import require_cluster_servers

pytestmark = pytest.mark.services

DBT = str(Path(sys.executable).parent / "dbt")
SAMPLES = ROOT / "sample_data"
GOLD = {
    "gold.cdc_history": "select * from gold.cdc_history",
    "gold.cdc_current": "select * from gold.cdc_current",
    "gold.employees_history": "select * from gold.employees_history",
    "gold.purchases_history": "select * from gold.purchases_history",
}


def generated_sources(root: Path) -> list[str]:
    """The `land` arguments of the generated traffic of every producer
    (tests/helpers/generated_traffic.py's files, written under `root`), its late files after the
    others. Both lakehouses compared land the same files: a message's id is made of its file's
    path, and it decides which of two copies landed in one chunk counts as the first (the copy
    whose source offset a PostgreSQL change's `sequence` carries)."""
    _, landings = write_all(root)
    return [
        f"--source={landing.fmt}:{landing.container}:{path}"
        for run in ("first", "late")
        for landing in landings
        for path in getattr(landing, run)
    ]


def pipeline(target: str, work: Path, generated: list[str]) -> list[list[str]]:
    """The commands that land the sample messages of every producer and the `generated` sources
    (:func:`generated_sources`), and build, for `target`."""
    land = [sys.executable, "-m", "python_ingest", "land", "--target", target]
    for container in ("jsonl", "kcat"):  # one land process (one Spark application) for all
        for directory in sorted(SAMPLES.glob(f"*/{container}")):
            land += ["--source", f"auto:{container}:{directory}"]
    land += generated
    return [
        land,
        # The dbt unit tests run once per suite (tests/e2e/test_dbt_project.py), not per target.
        [DBT, "build", "--exclude-resource-type", "unit_test", "--target", target]
        + ["--target-path", str(work / "target"), "--log-path", str(work)],
    ]


def listeners_of(groups: set[int]) -> set[tuple[str, str]]:
    """(local address, process) of every listening TCP socket of the process groups `groups`."""
    listing = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in listing.splitlines():
        fields = line.split()
        for pid in re.findall(r"pid=(\d+)", " ".join(fields[5:])):
            try:
                group = os.getpgid(int(pid))
            except ProcessLookupError:
                continue
            if group in groups:
                found.add((fields[3], f"{open_cmdline(int(pid))} (pid {pid})"))
    return found


def open_cmdline(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    metastore = METASTORE_SOURCE.stem.encode()  # the metastore service runs as its class
    mains = [w.decode() for w in words if w.startswith(b"org.apache.") or w == metastore]
    return Path(mains[0]).name if mains else Path(words[0].decode() or "?").name


def run_watched(
    command: list[str], lakehouse: Path, environment: dict[str, str], groups: set[int], seen: set
) -> str:
    """Run `command` in a process group of its own; meanwhile, every half second, add the
    listeners of that group and of `groups` to `seen`. Returns the output; fails on exit != 0."""
    env = {**os.environ, **environment, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    process = start_in_group(command, env)
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(process.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 900
        while process.poll() is None and time.monotonic() < deadline:
            seen |= listeners_of({*groups, process.pid})
            time.sleep(0.5)
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        kill_group(process.pid)
        reader.join(timeout=30)
    output = "".join(chunks)
    assert process.returncode == 0, f"{' '.join(command[:6])} ... failed:\n{output[-4000:]}"
    return output


# Columns each lakehouse sets at its own time (landing, build), left out of the comparisons.
TIMES_OF_OWN = frozenset(("ingested_at", "written_at"))


def normalized(rows: list[dict]) -> list[str]:
    """The rows as sorted JSON texts, without `ingested_at` and `written_at`: each lakehouse
    landed and built the messages at its own time."""
    return sorted(
        json.dumps({k: v for k, v in row.items() if k not in TIMES_OF_OWN}, sort_keys=True, default=str)
        for row in rows
    )


WORKERS = 2
BUCKET_PREFIX = "cluster"  # the cluster's warehouse: s3a://<bucket>/cluster


class Cluster:
    def __init__(self, directory: Path, store: ObjectStore) -> None:
        self.directory = directory
        self.store = store
        self.environment: dict[str, str] = {}
        self.master_ui = ""

    def cli(self, action: str, *options: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "python_ingest", "cluster", action, str(self.directory), *options],
            env={**os.environ, **self.store.environment()},  # the credentials: environment only
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def groups(self) -> set[int]:
        """The process groups of the cluster's servers (each server leads its own)."""
        return {int(json.loads(path.read_text())["pid"]) for path in self.directory.glob("*/server.json")}

    def master(self) -> dict:
        from cdc_cluster.standalone import master_json

        return master_json(int(self.master_ui.rsplit(":", 1)[1].strip("/")))


@pytest.fixture(scope="module")
def cluster(object_store: ObjectStore, tmp_path_factory) -> Iterator[Cluster]:
    require_cluster_servers()
    home = Cluster(tmp_path_factory.mktemp("cluster"), object_store)
    started = time.monotonic()
    # Two workers of one core: the build's four dbt threads overlap on two executors (with one
    # worker of one core the cluster's build took about 1.4 times the local one).
    warehouse = f"s3a://{object_store.bucket}/{BUCKET_PREFIX}"
    result = home.cli("start", "--workers", str(WORKERS), "--worker-cores", "1", "--warehouse", warehouse)
    groups = home.groups()
    try:
        assert result.returncode == 0, result.stderr[-4000:]
        home.environment = exported(result.stdout)
        for line in result.stdout.splitlines():
            if "web UI:" in line:
                home.master_ui = line.split("web UI:")[1].strip()
        print(f"cluster started in {time.monotonic() - started:.1f}s: {home.environment}")
        status = home.cli("status")
        assert status.returncode == 0 and status.stdout.count("running") == 3 + WORKERS, status.stdout
        assert home.environment["CDC_WAREHOUSE_URI"] == warehouse, home.environment
        yield home
    finally:
        stopped = home.cli("stop")
        left = [g for g in groups if _group_alive(g)]
        assert stopped.returncode == 0 and not left, (stopped.stdout, stopped.stderr, left)
        assert "stopped: worker-1, worker-2, master, metastore, postgres" in stopped.stdout, stopped.stdout


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def runs(cluster: Cluster, local_reference, tmp_path_factory) -> dict:
    """Land and build on the cluster the messages of the local build (tests/conftest.py's
    `local_reference`, built before: side by side, on two cores, they took longer); gold of both,
    and every listener of the cluster's processes seen meanwhile."""
    work = tmp_path_factory.mktemp("cluster-run")
    environment = {
        **cluster.store.environment(),  # the drivers' credentials
        **cluster.environment,
        "CDC_DBT_THREADS": "4",
        "CDC_SHUFFLE_PARTITIONS": "2",
    }
    lakehouse = Path(cluster.environment["CDC_LAKEHOUSE_DIR"])
    groups = {*cluster.groups(), cluster.store.process.pid}
    seen = listeners_of(groups)
    started = time.monotonic()
    for command in pipeline("cluster", work, local_reference.generated):
        run_watched(command, lakehouse, environment, groups, seen)
    on_cluster = queries(lakehouse, list(GOLD.values()), environment={**environment, "DBT_TARGET": "cluster"})
    print(f"cluster: land, build and query in {time.monotonic() - started:.1f}s")
    return {
        "cluster": dict(zip(GOLD, on_cluster, strict=True)),
        "endpoint_counts": endpoint_answers(lakehouse, environment, groups, seen),
        "local": local_reference.gold,
        "listeners": seen,
    }


def endpoint_answers(lakehouse: Path, environment: dict[str, str], groups: set[int], seen: set) -> dict:
    """Start the SQL endpoint of the cluster target (`lakehouse start --target cluster`: a Spark
    Thrift Server whose queries run on the cluster's executors), count each gold table's rows
    through it with a SQL client, and stop it; its listeners are added to `seen`."""
    port = free_port()
    command = [sys.executable, "-m", "python_ingest", "lakehouse"]
    start = [*command, "start", "--target", "cluster", "--port", str(port)]
    run_watched(start, lakehouse, environment, groups, seen)
    try:
        state = json.loads((lakehouse / "services" / "sql-endpoint.json").read_text())
        seen |= listeners_of({*groups, int(state["pid"])})
        counts = {table: endpoint_rows(port, f"select count(*) from {table}")[0][0] for table in GOLD}
    finally:
        run_watched([*command, "stop", "--target", "cluster"], lakehouse, environment, set(), set())
    return counts


def test_gold_on_the_cluster_equals_gold_of_the_local_target(runs) -> None:
    for table, rows in runs["local"].items():
        assert rows, f"{table} is empty: the sample data should give it rows"
        assert normalized(runs["cluster"][table]) == normalized(rows), table


def assert_tables_are_objects(store: ObjectStore, prefix: str) -> None:
    """Bronze's and gold's tables of the warehouse s3a://<bucket>/<prefix> have their metadata
    files (and, but for the view gold.cdc_current, data files) as objects in the bucket."""
    keys = store.client().list_keys(store.bucket, f"{prefix}/")
    tables = ("bronze.db/raw_ces", "bronze.db/raw_debezium", "gold.db/cdc_history", "gold.db/cdc_current")
    for table in tables:
        files = [k for k in keys if k.startswith(f"{prefix}/{table}/")]
        assert any(k.endswith(".metadata.json") and "/metadata/" in k for k in files), (table, files[:20])
        if table != "gold.db/cdc_current":  # an Iceberg view: its metadata only
            assert any(k.endswith(".parquet") and "/data/" in k for k in files), (table, files[:20])


def test_the_sql_endpoint_answers_from_gold_on_the_cluster(runs) -> None:
    counts = {table: len(rows) for table, rows in runs["cluster"].items()}
    assert runs["endpoint_counts"] == counts


def test_the_warehouse_is_in_the_bucket_and_on_no_disk_of_the_cluster(cluster: Cluster, runs) -> None:
    assert_tables_are_objects(cluster.store, BUCKET_PREFIX)
    # No table file on the machine's disk: not under the workers, the metastore or the lakehouse
    # directory (landing's checkpoints and the build lock only).
    table_files = [
        p
        for p in cluster.directory.rglob("*")
        if p.is_file() and (p.suffix in (".parquet", ".avro") or p.name.endswith(".metadata.json"))
    ]
    assert table_files == [], table_files[:20]
    assert not (cluster.directory / "warehouse").exists()
    assert sorted((cluster.directory / "lakehouse" / "ingest_checkpoints").glob("*.json"))


def test_the_cluster_ran_the_work_on_its_executors(cluster: Cluster, runs) -> None:
    deadline = time.monotonic() + 60
    while len(apps := cluster.master()["completedapps"]) < 4 and time.monotonic() < deadline:
        time.sleep(1)
    apps = sorted(apps, key=lambda app: app["starttime"])
    # land, dbt build, a query, the SQL endpoint
    assert [app["name"] for app in apps] == ["cdc-lakehouse"] * 3 + ["cdc-lakehouse-sql-endpoint"], apps
    assert not cluster.master()["activeapps"]
    workers = [cluster.directory / f"worker-{n}" / "work" for n in range(1, WORKERS + 1)]
    logs = {app["id"]: {w: sorted((w / app["id"]).glob("*/stderr")) for w in workers} for app in apps}
    for app, by_worker in logs.items():
        files = [f for found in by_worker.values() for f in found]
        assert files, f"application {app} had no executor on a worker"
        assert "Finished task" in "".join(f.read_text() for f in files), f"no task ran on {app}'s executors"
    build = {w: "".join(f.read_text() for f in found) for w, found in logs[apps[1]["id"]].items()}
    for worker, text in build.items():  # the build's tasks ran on both workers
        assert len(re.findall("Finished task", text)) > 20, f"the build's executor on {worker.parent.name}"
    assert len(re.findall("Finished task", "".join(build.values()))) > 100
    # The Python models' UDFs ran in Python workers of an executor (spark.pyspark.python).
    assert re.search(r"Python\w*Runner: Times", "".join(build.values())), "no Python UDF ran on an executor"


def test_every_listener_of_the_cluster_and_its_drivers_is_on_loopback(cluster: Cluster, runs) -> None:
    seen = runs["listeners"]
    programs = {program.split(" (pid")[0] for _, program in seen}
    # Seen: PostgreSQL, the metastore, master, workers, executors, the drivers (dbt, land) and
    # the object store.
    for expected in (
        cluster.store.binary.name,
        "postgres",
        METASTORE_SOURCE.stem,
        "org.apache.spark.deploy.master.Master",
        "org.apache.spark.deploy.worker.Worker",
        "org.apache.spark.executor.CoarseGrainedExecutorBackend",
        "org.apache.spark.deploy.SparkSubmit",
    ):
        assert expected in programs, (expected, sorted(programs))
    outside = [
        (address, program)
        for address, program in seen
        if not re.search(r"^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]|\[::1\]):\d+$", address)
    ]
    assert outside == [], outside
