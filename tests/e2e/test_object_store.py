"""The lakehouse with its warehouse on a real S3-compatible object store (docs/lakehouse.md, "The
warehouse on an object store"): SeaweedFS on 127.0.0.1 under the test's directory
(cdc_cluster/object_store.py), a bucket created at start, credentials generated for the run
and passed by environment only.

- Every producer's sample messages and generated traffic (tests/e2e/test_cluster.py's
  `pipeline`) are landed (`land`, one process) and the whole `dbt build`
  runs with the local target and ``CDC_LAKEHOUSE_WAREHOUSE=s3a://…``, each in a process of its
  own, as a user runs them; the same commands build a lakehouse on a local warehouse
  (tests/conftest.py's `local_reference`, which tests/e2e/test_cluster.py compares with too).
  Gold is the same in both, row for row; the tables' data and metadata files are objects in the
  bucket, and none is in the lakehouse directory, which keeps only the metastore's database,
  the services' files and landing's checkpoints.
- `land` killed with SIGKILL at each point of a chunk's life and run again
  (tests/e2e/test_landing_crashes.py's sequence) lands every message once into a bronze table
  on the object store.
- Every listener of the object store, the metastore service and the drivers is on 127.0.0.1.
"""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_cluster.object_store import ObjectStore
from tests.e2e.test_cluster import (
    GOLD,
    assert_tables_are_objects,
    listeners_of,
    normalized,
    pipeline,
    run_watched,
)
from tests.e2e.test_landing_crashes import CONTAINERS, FORMAT, land_killed_then_again
from tests.helpers.lakehouse_query import queries
from tests.helpers.real_servers import require_object_store
from tests.helpers.services import stop_services

pytestmark = pytest.mark.services

LOOPBACK_ADDRESS = r"^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):\d+$"


@pytest.fixture(scope="module")
def store(object_store: ObjectStore) -> ObjectStore:
    """The module's object store (tests/conftest.py's fixture `object_store`)."""
    return object_store


def on_store(store: ObjectStore, prefix: str) -> dict[str, str]:
    """The variables that put a lakehouse's warehouse under `prefix` of the store's bucket."""
    return {**store.environment(), "CDC_LAKEHOUSE_WAREHOUSE": f"s3a://{store.bucket}/{prefix}"}


@pytest.fixture(scope="module")
def runs(store: ObjectStore, local_reference, tmp_path_factory) -> Iterator[dict]:
    """Land and build on the object store the messages of the local build (tests/conftest.py's
    `local_reference`); gold of both, and every listener seen meanwhile."""
    groups = {store.process.pid}
    seen = listeners_of(groups)
    environment = {**on_store(store, "warehouse"), "CDC_SHUFFLE_PARTITIONS": "2"}
    work = tmp_path_factory.mktemp("object-store-run")
    on_object_store = work / "lakehouse"
    try:
        for command in pipeline("local", work, local_reference.generated):
            run_watched(command, on_object_store, environment, groups, seen)
        gold = queries(on_object_store, list(GOLD.values()), environment=environment)
        yield {
            "lakehouse": on_object_store,
            "object_store": dict(zip(GOLD, gold, strict=True)),
            "local": local_reference.gold,
            "listeners": seen,
        }
    finally:
        stop_services(on_object_store)


def test_gold_on_the_object_store_equals_gold_on_a_local_warehouse(runs) -> None:
    for table, rows in runs["local"].items():
        assert rows, f"{table} is empty: the sample data should give it rows"
        assert normalized(runs["object_store"][table]) == normalized(rows), table


def test_the_tables_data_and_metadata_are_objects_in_the_bucket(store: ObjectStore, runs) -> None:
    assert_tables_are_objects(store, "warehouse")
    lakehouse: Path = runs["lakehouse"]
    written = {p.suffix for p in lakehouse.rglob("*") if p.is_file() and "metastore_db" not in p.parts}
    assert not written & {".parquet", ".avro"}, sorted(written)  # no table file stays on this machine
    assert not (lakehouse / "warehouse").exists()
    assert sorted(p.name for p in (lakehouse / "ingest_checkpoints").glob("*.json"))  # landing's, local


def test_land_killed_at_every_point_then_run_again_lands_exactly_into_the_object_store(
    store: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = "jsonl"  # one container: the checkpoints do not depend on it (test_landing_crashes.py)
    for name, value in on_store(store, f"crashes-{container}").items():
        monkeypatch.setenv(name, value)  # the landing runs and the query are subprocesses
    write, grow = CONTAINERS[container]
    lakehouse = tmp_path / "lakehouse"
    try:
        land_killed_then_again(container, lakehouse, write(tmp_path / "in"), grow)
    finally:
        stop_services(lakehouse)
    keys = store.client().list_keys(store.bucket, f"crashes-{container}/bronze.db/raw_{FORMAT[container]}/")
    assert any(k.endswith(".parquet") for k in keys), keys


def test_every_listener_of_the_object_store_and_the_lakehouse_is_on_loopback(
    store: ObjectStore, runs
) -> None:
    seen = runs["listeners"]  # of the object store's and the drivers' process groups
    programs = {program.split(" (pid")[0] for _, program in seen}
    # The metastore service runs in a session of its own (LoopbackMetastore.java binds 127.0.0.1).
    assert {"org.apache.spark.deploy.SparkSubmit", store.binary.name} <= programs, programs
    store_ports = {f":{port}" for port in store.ports.values()}
    listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    of_store = [line.split()[3] for line in listening.splitlines() if f"pid={store.process.pid}," in line]
    assert {address[address.rfind(":") :] for address in of_store} >= store_ports, of_store
    outside = [a for a in of_store if not re.search(LOOPBACK_ADDRESS, a)]
    outside += [(a, p) for a, p in seen if not re.search(LOOPBACK_ADDRESS, a)]
    assert outside == [], outside


def test_an_object_store_whose_port_was_taken_before_it_bound_it_starts_on_new_ports(tmp_path: Path) -> None:
    """A port that `free_port` found free can be taken before the server binds it (an outgoing
    connection gets one of the same range): the server stops at its start, and starts again."""
    require_object_store()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        server = ObjectStore(tmp_path)
        taken = server.ports["volume"] = holder.getsockname()[1]
        with server:
            assert server.ports["volume"] != taken
            assert server.client().list_keys(server.bucket) == []
            first_start = server.log_file.read_text(encoding="utf-8", errors="replace")
            assert f"{taken}: bind: address already in use" in first_start
    assert not server.running
