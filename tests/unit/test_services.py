"""The lakehouse services' bookkeeping, without starting a service: the build lock, state files,
the metastore service's command, and the SQL endpoint's class path (checked in a plain JVM)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded import services
from dbt.adapters.spark_embedded.jars import CACHE_ENV, artifact_jar

ROOT = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time\n"
    "from dbt.adapters.spark_embedded.services import acquire_build_lock\n"
    "acquire_build_lock(sys.argv[1], 'build')\n"
    "print('held', flush=True)\n"
    "time.sleep(60)\n"
)


def test_a_second_build_is_refused_at_once_naming_the_running_one(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(services.ServiceError) as refused:
            services._acquire_build_lock(tmp_path, "build")
        assert time.monotonic() - started < 1
        message = str(refused.value)
        assert f"`dbt build` (pid {holder.pid}, started " in message and "one build at a time" in message
        assert "\n" not in message
    finally:
        holder.kill()
        holder.wait()
    # The lock goes with the process that held it, however it ended (here: SIGKILL).
    services._acquire_build_lock(tmp_path, "run")
    state = json.loads((tmp_path / "services" / "build.json").read_text())
    assert state["pid"] == os.getpid() and state["command"] == "run"


def test_a_service_is_running_only_if_its_process_lives_and_its_port_answers(tmp_path: Path) -> None:
    state = tmp_path / "metastore.json"
    assert services.read_state(state) is None  # never started
    state.write_text(json.dumps({"pid": 2**22 + 12345, "port": 9}))
    assert services.read_state(state) is None  # no such process
    state.write_text(json.dumps({"pid": os.getpid(), "port": 1}))
    assert services.read_state(state) is None  # alive, but nothing listens there
    assert services.stop(tmp_path / "nothing.json") is False


def test_the_metastore_service_runs_from_its_jar_compiled_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """LoopbackMetastore.java is compiled into the jar cache (set-up, or the first start), and
    the service's command runs the compiled class, not the source file (which the `java`
    launcher would compile again at every start)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    command = services.metastore_command({"hive.metastore.warehouse.dir": "/w"}, 9083, 5)
    assert command[-3:] == ["LoopbackMetastore", "9083", "5"]
    assert set(services.METASTORE_JVM_OPTIONS) <= set(command)  # the quick compiler alone
    jar = Path(services.metastore_jar())
    assert jar.parent == tmp_path / "metastore" and jar.name.startswith("cdc-metastore-")
    assert command[command.index("-cp") + 1].split(os.pathsep)[0] == str(jar)
    with zipfile.ZipFile(jar) as archive:
        assert "LoopbackMetastore.class" in archive.namelist()
    built = jar.stat().st_mtime_ns
    services.metastore_command({})
    assert jar.stat().st_mtime_ns == built and list(jar.parent.iterdir()) == [jar]


def test_services_find_what_they_run_with() -> None:
    assert services.METASTORE_SOURCE.is_file()  # installed with the adapter plugin
    assert (services.spark_jars_dir() / "..").resolve().name == "pyspark"
    assert any(p.name.startswith("hive-metastore-2.3.") for p in services.spark_jars_dir().iterdir())
    assert Path(services.java_executable()).name == "java"


REGISTRY_CHECK = """
public class LoadsHiveFunctions {
    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hadoop.hive.ql.exec.FunctionRegistry");
        System.out.println("loaded");
    }
}
"""


def test_the_sql_endpoint_class_path_lets_hive_load_its_function_registry(tmp_path: Path) -> None:
    """The SQL endpoint's Hive may load Hive's function registry when a session closes; with
    pyspark's jars alone that fails (NoClassDefFoundError LlapSigner$Signable: Spark 4 ships no
    hive-llap-common), with the jar the endpoint adds (jars.artifact_jar, resolved by set-up) it
    loads. Run in a plain JVM with the module openings Spark's launcher gives its own."""
    source = tmp_path / "LoadsHiveFunctions.java"
    source.write_text(REGISTRY_CHECK, encoding="utf-8")
    opens = [
        f"--add-opens=java.base/{package}=ALL-UNNAMED"
        for package in ("java.lang", "java.lang.invoke", "java.net", "java.nio", "java.util", "sun.nio.ch")
    ]
    spark = f"{services.spark_jars_dir()}/*"
    llap = artifact_jar("hive-llap-common")
    assert Path(llap).name == "org.apache.hive_hive-llap-common-2.3.10.jar"

    def load(classpath: str) -> str:
        command = [services.java_executable(), *opens, "-cp", classpath, str(source)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        return run.stdout + run.stderr

    assert "LlapSigner$Signable" in load(spark)
    assert load(os.pathsep.join([llap, spark])).strip().endswith("loaded")


TRY = (
    "import sys\n"
    "from dbt.adapters.spark_embedded.services import ServiceError, acquire_build_lock\n"
    "try:\n"
    "    acquire_build_lock(sys.argv[1], 'build')\n"
    "except ServiceError as exc:\n"
    "    print(exc)\n"
    "else:\n"
    "    print('acquired')\n"
)


def test_a_long_running_process_holds_the_build_lock_only_while_it_builds(tmp_path: Path) -> None:
    def other_build() -> str:
        command = [sys.executable, "-c", TRY, str(tmp_path)]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()

    services.acquire_build_lock(tmp_path, "build", "the pipeline's build")
    try:
        refused = other_build()
        assert refused.startswith(f"the pipeline's build (pid {os.getpid()}, started "), refused
    finally:
        services.release_build_lock(tmp_path)
    assert not (tmp_path / "services" / "build.json").exists()
    assert other_build() == "acquired"
    services.release_build_lock(tmp_path)  # not held: nothing to do


def test_the_warm_engine_is_used_only_while_its_endpoint_runs_and_answers(
    tmp_path: Path, monkeypatch
) -> None:
    from dbt.adapters.spark_embedded.python_submissions import warm_engine_for

    directory = services.services_dir(tmp_path)  # made by services_dir
    state = directory / f"{services.SQL_ENDPOINT}.json"
    assert services.warm_engine_url(tmp_path) is None  # never started
    state.write_text(json.dumps({"pid": 2**22 + 12345, "port": 9, "connect_port": 9}))
    assert services.warm_engine_url(tmp_path) is None  # its process is gone
    state.write_text(json.dumps({"pid": os.getpid(), "port": 9}))
    assert services.warm_engine_url(tmp_path) is None  # an endpoint of before the warm engine
    with socket.socket() as listener:  # a live process whose Connect port answers
        listener.bind((services.LOOPBACK, 0))
        listener.listen()
        port = listener.getsockname()[1]
        state.write_text(json.dumps({"pid": os.getpid(), "port": port, "connect_port": port}))
        assert services.warm_engine_url(tmp_path) == f"sc://127.0.0.1:{port}"
        local = {services.LAKEHOUSE_CONF: str(tmp_path), "spark.master": "local[2]"}
        # The cluster target's sessions are the cluster's; a process with a Spark of its own
        # (this one, when an earlier test of its started one) keeps it.
        assert warm_engine_for({**local, "spark.master": "spark://127.0.0.1:7077"}) is None
        from pyspark import SparkContext

        expected = None if SparkContext._active_spark_context is not None else f"sc://127.0.0.1:{port}"
        assert warm_engine_for(local) == expected
        monkeypatch.setenv(services.WARM_ENGINE_ENV, "off")
        assert services.warm_engine_url(tmp_path) is None


def test_a_pending_chunk_keeps_the_engine_session_that_appends_it(tmp_path: Path) -> None:
    from python_ingest import engine_writes
    from python_ingest.checkpoints import CheckpointStore

    store = CheckpointStore(tmp_path, "raw_ces")
    engine = {"url": "sc://127.0.0.1:1", "session": "0b5c6f0e-0000-4000-8000-000000000000"}
    store.begin("20261127T000000Z-abc:3", {}, engine=engine)
    assert CheckpointStore(tmp_path, "raw_ces").pending.engine == engine
    store.begin("20261127T000000Z-abc:4", {})
    assert CheckpointStore(tmp_path, "raw_ces").pending.engine == {}
    assert engine_writes.chunk_tag("20261127T000000Z-abc:3") == "cdc-chunk-20261127T000000Z-abc-3"
    # An engine that no longer answers has stopped, and its appends with it: nothing to wait for.
    assert engine_writes.settle(engine, "20261127T000000Z-abc:3") == []
    assert engine_writes.settle({}, "20261127T000000Z-abc:3") == []


def test_a_service_this_process_started_is_not_alive_once_it_exited() -> None:
    """Until its parent reaps it, an exited child is a zombie that signal 0 still finds: a stop
    of a service this process started would wait out its whole grace period."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child.pid}/stat").read_text().split()[2] != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)  # exited, not reaped: a zombie
    assert not services.is_alive(child.pid)
    assert not Path(f"/proc/{child.pid}").exists()  # reaped
    assert services.is_alive(os.getpid())
