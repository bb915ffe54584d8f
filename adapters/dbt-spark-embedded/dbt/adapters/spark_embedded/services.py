"""The lakehouse's services: a Hive metastore every process shares, and the SQL endpoint.

Embedded Derby admits one JVM, so a metastore inside each process would lock every other
process out of the lakehouse. Instead one metastore service per lakehouse directory serves
them all: the Hive 2.3 metastore handler that ships with pyspark (its compare-and-swap table
update, HIVE-26882, lets Iceberg commit without locks), on 127.0.0.1 only
(`dbt/include/spark_embedded/services/LoopbackMetastore.java`, compiled into the jar cache
by set-up: :func:`metastore_jar`), its Derby database under
the lakehouse directory as before. A process that starts Spark for a lakehouse (dbt, land,
scaffold, the SQL endpoint) calls :func:`ensure_metastore` first: it starts the service if
none answers, under a file lock, so that processes racing to start it start one. The
service stops by itself after `$CDC_METASTORE_IDLE_MINUTES` (default 60) without a client,
or with `python -m python_ingest lakehouse stop`.

The SQL endpoint's Spark is also the lakehouse's warm engine: it serves Spark Connect on
127.0.0.1, and while it runs, `dbt build` and `land` of the local target use it instead of
starting a Spark of their own (:func:`warm_engine_url`).

Files, all under `<lakehouse>/services/`: `metastore.json` (pid, port), `metastore.log`,
`metastore.lock`; `sql-endpoint.json` (pid, port, Spark Connect port), `sql-endpoint.log`,
`sql-endpoint.lock`;
`build.lock` and `build.json`, held by the running `dbt build` (:func:`acquire_build_lock`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbt.adapters.spark_embedded.class_archive import METASTORE, java_binary, java_options
from dbt.adapters.spark_embedded.functions import JavaBuildError, java_jar
from dbt.adapters.spark_embedded.jars import (
    JarsNotResolvedError,
    artifact_jar,
    object_store_jars,
    spark_jars_dir,
)
from dbt.include import spark_embedded as include_package

LAKEHOUSE_CONF = "spark.cdc.lakehouseDir"  # names the lakehouse whose services a session needs
METASTORE_URIS = "spark.hadoop.hive.metastore.uris"
METASTORE_SOURCE = Path(include_package.PACKAGE_PATH) / "services" / "LoopbackMetastore.java"
LOG4J_CONFIG = os.path.join(include_package.PACKAGE_PATH, "log4j2.properties")
# The scheduler pools of the lakehouse's Spark sessions: the default pool shares the cores fairly
# among the jobs running at once (lakehouse.lakehouse_parameters; the file says why).
FAIR_SCHEDULER_POOLS = os.path.join(include_package.PACKAGE_PATH, "fair-scheduler.xml")

# Just-in-time compilation and garbage collection of the Spark JVMs the lakehouse
# starts: the Spark driver and a cluster's executors (lakehouse.lakehouse_parameters),
# processes whose work is many short queries.
# Every query is new code to the JVM (Spark generates classes per query), and
# HotSpot's optimizing compiler (C2) compiled it at its default thresholds: in
# one 1M-message full build on 2 cores it used 120 s of CPU beside 262 s of
# Spark tasks, and 40 s in a 100k-message incremental build. Tenfold thresholds
# leave short-lived code to the quick compiler (C1) and still optimize the loops
# that run over millions of rows (C1 alone made the 1M build 30 % slower). The
# parallel collector has no concurrent marking threads competing with the tasks
# for the cores. Measured in docs/benchmarks.md, "The JVMs' compilers and
# collector" (for the executors: "A cluster's executors compile as the driver
# does").
JVM_OPTIONS = (
    "-XX:Tier4InvocationThreshold=50000",
    "-XX:Tier4MinInvocationThreshold=6000",
    "-XX:Tier4CompileThreshold=150000",
    "-XX:Tier4BackEdgeThreshold=400000",
    "-XX:+UseParallelGC",
)
# The metastore service's own: its work is the catalog calls of the processes beside it, short
# and never a loop over data, so the quick compiler (C1) alone serves it, without the profiling
# and optimizing compilations that cost it more CPU than they saved. Measured in
# docs/benchmarks.md, "The metastore service on the quick compiler alone".
METASTORE_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC")
LOOPBACK = "127.0.0.1"
START_TIMEOUT_SECONDS = 180


class ServiceError(RuntimeError):
    """A lakehouse service that cannot be started or reached; the message says why, in one line."""


def services_dir(lakehouse_dir: str | Path) -> Path:
    path = Path(lakehouse_dir).resolve() / "services"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (waits for it), released when the block ends or the process dies."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _spawn(command: list[str], log: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start a service in the background, in a session of its own (it outlives its starter),
    its output going to `log`."""
    with log.open("w", encoding="utf-8") as output:
        return subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )


def is_alive(pid: int) -> bool:
    """Whether process `pid` runs. A service this process started and that has exited is
    reaped here: until then it is a zombie, which signal 0 still finds (and a stop would wait
    its whole grace period for it)."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def answers(port: int, host: str = LOOPBACK, timeout: float = 2.0) -> bool:
    """Whether something accepts connections on host:port."""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def read_state(path: Path) -> dict[str, Any] | None:
    """The recorded state of a service, if its process is alive and its port answers."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not is_alive(int(state.get("pid", 0))) or not answers(int(state.get("port") or 0)):
        return None
    return state


def _listening_pids(port: int) -> list[int]:
    """The processes listening on TCP `port` (Linux's /proc; empty where it cannot be read)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    pids = []
    for entry in Path("/proc").iterdir() if inodes else ():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if any(os.readlink(fd) in inodes for fd in (entry / "fd").iterdir()):
                    pids.append(int(entry.name))
    return pids


def port_holder(port: int) -> str:
    """Who holds `port` on 127.0.0.1, for a person: the SQL endpoint or metastore service of
    which lakehouse (read from the process's command line), or another program."""
    for pid in _listening_pids(port):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        for arg in argv:
            for prefix, what in (
                (f"{LAKEHOUSE_CONF}=", "the SQL endpoint"),
                ("-Dderby.system.home=", "the metastore service"),
            ):
                if arg.startswith(prefix):
                    other = arg[len(prefix) :]
                    return (
                        f"{what} of the lakehouse {other} (pid {pid}; stop it with "
                        f"CDC_LAKEHOUSE_DIR={other} python -m python_ingest lakehouse stop)"
                    )
        return f"another program (pid {pid}: {' '.join(argv)[:80].strip()})"
    return "another program"


def java_executable() -> str:
    found = java_binary()
    if found is None:
        raise ServiceError("Java 17 is needed to run the lakehouse's metastore service; no `java` was found.")
    return str(found)


def _listening_port(log: Path) -> int | None:
    found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text(encoding="utf-8", errors="replace"))
    return int(found.group(1)) if found else None


def _await_port(pid: int, log: Path, what: str) -> int:
    """The port the service `pid` listens on, once its log says so; raises if it dies or
    does not get there in time (a service another process started may still be starting)."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        port = _listening_port(log) if log.is_file() else None
        if port is not None and answers(port):
            return port
        if not is_alive(pid):
            break
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
    tail = [line for line in lines if line.strip()][-3:]
    raise ServiceError(f"the {what} did not start (see {log}): {' | '.join(tail) or 'no output'}")


def metastore_jar() -> str:
    """The jar of the metastore service's program (LoopbackMetastore.java), compiled against
    pyspark's jars into the jar cache by set-up, or here on first use. Compiled once rather
    than launched as a single source file, which compiled it in every service's JVM at every
    start (about a second of a core each time)."""
    try:
        return java_jar([METASTORE_SOURCE], "metastore", f"{spark_jars_dir()}/*")
    except JavaBuildError as exc:
        raise ServiceError(f"the metastore service cannot be built: {exc}") from exc


def metastore_command(
    properties: dict[str, str],
    port: int | str = 0,
    idle_minutes: int | str = 0,
    classpath: Sequence[str] = (),
    after_spark: Sequence[str] = (),
) -> list[str]:
    """The command that runs the metastore service (LoopbackMetastore.java) on 127.0.0.1:`port`
    (0: any free one), stopping after `idle_minutes` without a client (0: never). `properties`
    are its settings (the database's JDBC URL, the warehouse...); the schema is created in the
    database on first use. `classpath` goes before pyspark's jars (a JDBC driver, a folder
    with a hive-site.xml); `after_spark` after them (jars that must not shadow pyspark's)."""
    settings = {
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        # A pool whose jar ships with pyspark (HikariCP). Hive's default, BoneCP, does not, and
        # the handler of transactions that every `drop database` notifies builds its own pool
        # from this setting: with BoneCP every `drop schema` failed (NoClassDefFoundError in
        # metastore.log, NoSuchObjectException for the client).
        "datanucleus.connectionPoolingType": "HikariCP",
        "log4j2.configurationFile": LOG4J_CONFIG,
        **properties,
    }
    own = os.pathsep.join([metastore_jar(), *classpath])  # the class path beyond pyspark's jars
    return [
        java_executable(),
        "-Xmx768m",
        *METASTORE_JVM_OPTIONS,
        *java_options(METASTORE, own),
        "-cp",
        os.pathsep.join([own, f"{spark_jars_dir()}/*", *after_spark]),
        *(f"-D{key}={value}" for key, value in settings.items()),
        METASTORE_SOURCE.stem,
        str(port),
        str(idle_minutes),
    ]


OBJECT_STORE_SCHEME = "s3a://"
S3A_SETTINGS = "spark.hadoop.fs.s3a."  # the profile's S3A settings, which the metastore needs too


def hadoop_site(settings: dict[str, str]) -> str:
    """A Hadoop core-site.xml of `settings` (name -> value)."""
    from xml.sax.saxutils import escape

    properties = "".join(
        f"  <property><name>{escape(name)}</name><value>{escape(value)}</value></property>\n"
        for name, value in sorted(settings.items())
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{properties}</configuration>\n'


def object_store_classpath(directory: Path, warehouse: str, s3a: dict[str, str]) -> list[str]:
    """The metastore service's class path beyond pyspark's for a warehouse on an object store:
    a folder (`directory`/metastore-conf) with the core-site.xml of the S3A settings `s3a`
    (HiveConf reads only Hive's own settings from -D properties; Hive 2.3 checks and creates
    every database's and table's directory through Hadoop's file system), then the S3A
    connector's jars, which go after pyspark's (the AWS SDK bundle carries an slf4j 1.7 API).
    No credentials are written: S3A reads them from the service's environment, its starter's.
    The lakehouse's metastore service and a standalone cluster's (cdc_cluster/standalone.py)
    both use it."""
    try:
        jars = object_store_jars()
    except JarsNotResolvedError as exc:
        raise ServiceError(f"the metastore service of the warehouse {warehouse} cannot start: {exc}") from exc
    conf = directory / "metastore-conf"
    conf.mkdir(exist_ok=True)
    (conf / "core-site.xml").write_text(hadoop_site(s3a), encoding="utf-8")
    return [str(conf), *jars]


def ensure_metastore(
    lakehouse_dir: str | Path, warehouse: str | None = None, s3a: dict[str, str] | None = None
) -> str:
    """The URI of the lakehouse's metastore service, started first if none runs. The state
    file names the process as soon as it is started, so a process killed while it waited for
    the service to come up leaves one that the next process finds instead of starting another
    (which its Derby database would refuse). `warehouse`: the warehouse URI if it is not the
    lakehouse's `warehouse/` directory (an ``s3a://`` one, with the Hadoop settings `s3a`); a
    running service of another warehouse is refused."""
    root = Path(lakehouse_dir).resolve()
    directory = services_dir(root)
    state_path, log = directory / "metastore.json", directory / "metastore.log"
    warehouse = warehouse or str(root / "warehouse")
    with file_lock(directory / "metastore.lock"):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(state_path.read_text(encoding="utf-8"))
            if is_alive(int(state["pid"])):
                port = _await_port(int(state["pid"]), log, "metastore service")
                running = state.get("warehouse", str(root / "warehouse"))
                if running != warehouse:
                    raise ServiceError(
                        f"the metastore service of the lakehouse {root} (pid {state['pid']}) serves the "
                        f"warehouse {running}, not {warehouse}: one lakehouse directory has one warehouse; "
                        "use another CDC_LAKEHOUSE_DIR, or `python -m python_ingest lakehouse stop` first"
                    )
                return f"thrift://{LOOPBACK}:{port}"
        idle = os.environ.get("CDC_METASTORE_IDLE_MINUTES", "60")
        database = root / "metastore_db"
        properties = {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={database};create=true",
            "hive.metastore.warehouse.dir": warehouse,
            "derby.system.home": str(root),
            "derby.stream.error.file": str(root / "derby.log"),
        }
        classpath = (
            object_store_classpath(directory, warehouse, s3a or {})
            if warehouse.startswith(OBJECT_STORE_SCHEME)
            else []
        )
        port_setting = os.environ.get("CDC_METASTORE_PORT", "0").strip() or "0"
        if port_setting.isdigit() and int(port_setting) and answers(int(port_setting)):
            raise ServiceError(
                f"the metastore service's port {LOOPBACK}:{port_setting} (CDC_METASTORE_PORT) is held "
                f"by {port_holder(int(port_setting))}: set CDC_METASTORE_PORT to a free port, or unset it"
            )
        command = metastore_command(properties, port_setting, idle, classpath[:1], classpath[1:])
        process = _spawn(command, log, root)
        state = {"pid": process.pid, "started_at": _now(), "warehouse": warehouse}
        state_path.write_text(json.dumps(state), encoding="utf-8")
        port = _await_port(process.pid, log, "metastore service")
        state_path.write_text(json.dumps({**state, "port": port}), encoding="utf-8")
    return f"thrift://{LOOPBACK}:{port}"


def with_services(params: dict[str, str]) -> dict[str, str]:
    """Spark settings with the lakehouse's metastore service filled in (started if need be),
    for a session of a lakehouse directory that names no metastore of its own."""
    lakehouse = params.get(LAKEHOUSE_CONF)
    if not lakehouse or params.get(METASTORE_URIS):
        return params
    warehouse = params.get("spark.sql.warehouse.dir", "")
    if not warehouse.startswith(OBJECT_STORE_SCHEME):
        return {**params, METASTORE_URIS: ensure_metastore(lakehouse)}
    s3a = {k.removeprefix("spark.hadoop."): v for k, v in params.items() if k.startswith(S3A_SETTINGS) and v}
    return {**params, METASTORE_URIS: ensure_metastore(lakehouse, warehouse, s3a)}


def stop(pid_file: Path, grace_seconds: float = 20) -> bool:
    """Stop the process a state file names (SIGTERM, then SIGKILL); whether one was running."""
    try:
        state = json.loads(pid_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    pid = int(state.get("pid", 0))
    running = pid > 0 and is_alive(pid)
    if running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        while is_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return running


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# -- one dbt build at a time ---------------------------------------------------
_BUILD_LOCKS: dict[Path, Any] = {}  # lakehouse -> its open lock file, held for the process's life
_BUILD_LOCK_GUARD = threading.Lock()  # dbt opens its threads' connections at the same time


def acquire_build_lock(lakehouse_dir: str | Path, command: str, label: str | None = None) -> None:
    """Hold the lakehouse's build lock for the rest of this process (or until
    :func:`release_build_lock`), or raise at once with one line naming the build that holds it
    (`label`, default "`dbt <command>`"). The kernel releases it when the process ends, however."""
    with _BUILD_LOCK_GUARD:
        _acquire_build_lock(lakehouse_dir, command, label)


def release_build_lock(lakehouse_dir: str | Path) -> None:
    """Let go of the build lock this process holds on the lakehouse, if it holds it: a
    long-running process (the pipeline) holds it only while it builds."""
    with _BUILD_LOCK_GUARD:
        handle = _BUILD_LOCKS.pop(Path(lakehouse_dir).resolve(), None)
        if handle is None:
            return
        # The holder's record goes first: a process that takes the lock next writes its own.
        with contextlib.suppress(OSError):
            state = json.loads((services_dir(lakehouse_dir) / "build.json").read_text(encoding="utf-8"))
            if state.get("pid") == os.getpid():
                (services_dir(lakehouse_dir) / "build.json").unlink()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _acquire_build_lock(lakehouse_dir: str | Path, command: str, label: str | None = None) -> None:
    key = Path(lakehouse_dir).resolve()
    if key in _BUILD_LOCKS:
        return
    directory = services_dir(lakehouse_dir)
    handle = (directory / "build.lock").open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        try:
            holder = json.loads((directory / "build.json").read_text(encoding="utf-8"))
            what = holder.get("label") or f"`dbt {holder['command']}`"
            who = f"{what} (pid {holder['pid']}, started {holder['started_at']})"
        except (OSError, ValueError, KeyError):
            who = "another dbt process"
        raise ServiceError(
            f"{who} is building this lakehouse ({Path(lakehouse_dir).resolve()}): one build at a "
            "time; wait for it to finish, then run this one."
        ) from None
    _BUILD_LOCKS[key] = handle
    state = {"pid": os.getpid(), "command": command, "started_at": _now(), "argv": sys.argv[1:]}
    if label:
        state["label"] = label
    temporary = directory / f"build.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(state), encoding="utf-8")
    os.replace(temporary, directory / "build.json")


# -- the SQL endpoint ------------------------------------------------------------
SQL_PORT_ENV = "CDC_SQL_PORT"
CONNECT_PORT_ENV = "CDC_CONNECT_PORT"
WARM_ENGINE_ENV = "CDC_WARM_ENGINE"
CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
# The Spark Connect user of every session on the warm engine: a process can reach the session
# of another (dead) one by its id (python_ingest/engine_writes.py).
ENGINE_USER = "cdc-lakehouse"
SQL_ENDPOINT = "sql-endpoint"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def sql_port() -> int:
    return _port_setting(SQL_PORT_ENV, "10000")


def _port_setting(name: str, default: str) -> int:
    text = os.environ.get(name, default).strip()
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ServiceError(f"{name}={text!r} is not a port number")
    return int(text)


def connect_port() -> int:
    """The warm engine's Spark Connect port: $CDC_CONNECT_PORT, else a free one of 127.0.0.1
    (clients read it from the endpoint's state file)."""
    if os.environ.get(CONNECT_PORT_ENV, "").strip():
        return _port_setting(CONNECT_PORT_ENV, "")
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def warm_engine_url(lakehouse_dir: str | Path) -> str | None:
    """The Spark Connect address (`sc://127.0.0.1:PORT`) of the lakehouse's warm engine, the
    SQL endpoint's Spark, when it runs and answers; None otherwise, or when
    $CDC_WARM_ENGINE is `off`."""
    if os.environ.get(WARM_ENGINE_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    state = sql_endpoint_state(lakehouse_dir)  # its process lives and its SQL port answers
    if not state or not state.get("connect_port"):
        return None
    with contextlib.suppress(ValueError, TypeError):
        if answers(int(state["connect_port"])):
            return f"sc://{LOOPBACK}:{int(state['connect_port'])}"
    return None


def jdbc_url(port: int) -> str:
    return f"jdbc:hive2://{LOOPBACK}:{port}/default"


def query_answers(port: int, timeout: float = 30) -> bool:
    """Whether the HiveServer2 endpoint on `port` answers a query (PyHive, no password)."""
    from pyhive import hive

    try:
        connection = hive.connect(host=LOOPBACK, port=port, username="cdc")
        try:
            cursor = connection.cursor()
            cursor.execute("select 1")
            return cursor.fetchall() == [(1,)]
        finally:
            connection.close()
    except Exception:  # noqa: BLE001 - not up (yet): any failure means no
        return False


def sql_endpoint_state(lakehouse_dir: str | Path) -> dict[str, Any] | None:
    return read_state(services_dir(lakehouse_dir) / f"{SQL_ENDPOINT}.json")


def metastore_state(lakehouse_dir: str | Path) -> dict[str, Any] | None:
    return read_state(services_dir(lakehouse_dir) / "metastore.json")


def start_sql_endpoint(
    lakehouse_dir: str | Path, spark_params: dict[str, str], port: int | None = None
) -> dict[str, Any]:
    """The lakehouse's SQL endpoint (Spark's Thrift Server, HiveServer2 binary protocol) on
    127.0.0.1:`port` (default $CDC_SQL_PORT, else 10000), started in the background if it does
    not run yet; returns once it answers queries. `spark_params` are the Spark settings of the
    lakehouse's session target.

    Its Spark is also the lakehouse's warm engine: the same driver serves Spark Connect on
    127.0.0.1 (:func:`connect_port`), and `dbt build` and `land` of the local target run their
    queries there instead of starting a Spark of their own (:func:`warm_engine_url`,
    python_submissions.active_session). Its heap is therefore the target's
    (`spark.driver.memory`), unless $CDC_SQL_DRIVER_MEMORY says otherwise."""
    root = Path(lakehouse_dir).resolve()
    directory = services_dir(root)
    port = port or sql_port()
    state_path, log = directory / f"{SQL_ENDPOINT}.json", directory / f"{SQL_ENDPOINT}.log"
    with file_lock(directory / f"{SQL_ENDPOINT}.lock"):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(state_path.read_text(encoding="utf-8"))
            if is_alive(int(state["pid"])):  # running, or started by a process that died waiting
                _await_endpoint(int(state["pid"]), int(state["port"]), log)
                return state
        if answers(port):
            raise ServiceError(
                f"{LOOPBACK}:{port} is held by {port_holder(port)}: start this lakehouse's SQL "
                f"endpoint on another port with --port PORT (or {SQL_PORT_ENV})"
            )
        grpc_port = connect_port()
        if answers(grpc_port):
            raise ServiceError(
                f"{LOOPBACK}:{grpc_port} is held by {port_holder(grpc_port)}: set {CONNECT_PORT_ENV} "
                "to a free port for the warm engine, or unset it"
            )
        params = {
            **with_services(spark_params),
            # A query reads the tables' current metadata: it sees every build committed before it.
            "spark.sql.catalog.spark_catalog.cache-enabled": "false",
            "spark.driver.memory": os.environ.get(
                "CDC_SQL_DRIVER_MEMORY", spark_params.get("spark.driver.memory", "4g")
            ),
            "spark.app.name": "cdc-lakehouse-sql-endpoint",
            "spark.ui.enabled": "false",
            "spark.driver.bindAddress": LOOPBACK,
            "spark.driver.host": LOOPBACK,
            # The warm engine: Spark Connect in the same driver, on 127.0.0.1 only.
            "spark.plugins": CONNECT_PLUGIN,
            "spark.connect.grpc.binding.address": LOOPBACK,
            "spark.connect.grpc.binding.port": str(grpc_port),
        }
        # The Thrift Server runs each SQL session in a class loader of its own: classes that
        # only `spark.jars` adds are not found there (NoClassDefFoundError in Iceberg's catalog).
        # Hive's LLAP classes: closing a session may load Hive's function registry, which
        # needs them (jars.COORDINATES, "hive-llap-common").
        # The S3A connector's jars of a warehouse on an object store go after pyspark's instead
        # ($SPARK_DIST_CLASSPATH, which Spark's launcher appends): the AWS SDK bundle carries an
        # slf4j 1.7 API that must not shadow Spark's.
        try:
            llap = artifact_jar("hive-llap-common")
            warehouse = params.get("spark.sql.warehouse.dir", "")
            after_spark = set(object_store_jars()) if warehouse.startswith(OBJECT_STORE_SCHEME) else set()
        except JarsNotResolvedError as exc:
            raise ServiceError(f"the SQL endpoint cannot start: {exc}") from exc
        classpath = [jar for jar in params.get("spark.jars", "").split(",") if jar]
        ahead = [jar for jar in classpath if jar not in after_spark]
        # The target's own entries first: the local file system's jar (lakehouse.spark_parameters).
        given = [jar for jar in params.get("spark.driver.extraClassPath", "").split(os.pathsep) if jar]
        params["spark.driver.extraClassPath"] = os.pathsep.join([*given, *ahead, llap])
        submit = Path(spark_jars_dir()).parent / "bin" / "spark-submit"
        command = [str(submit), "--class", THRIFT_SERVER_CLASS]
        for key, value in params.items():
            command += ["--conf", f"{key}={value}"]
        command.append("spark-internal")
        environment = {
            **os.environ,
            "HIVE_SERVER2_THRIFT_BIND_HOST": LOOPBACK,
            "HIVE_SERVER2_THRIFT_PORT": str(port),
            "PYSPARK_PYTHON": sys.executable,
        }
        if after_spark:
            behind = [jar for jar in classpath if jar in after_spark]
            environment["SPARK_DIST_CLASSPATH"] = os.pathsep.join(behind)
        process = _spawn(command, log, root, environment)
        state = {
            "pid": process.pid,
            "port": port,
            "started_at": _now(),
            "url": jdbc_url(port),
            "connect_port": grpc_port,
        }
        state_path.write_text(json.dumps(state), encoding="utf-8")
        _await_endpoint(process.pid, port, log)
        return state


def _await_endpoint(pid: int, port: int, log: Path) -> None:
    """Wait until the endpoint `pid` answers queries on `port`; kill it and raise if it dies
    or does not get there in time."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not (answers(port) and query_answers(port)):
        if not is_alive(pid) or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
            errors = [line for line in lines if "Exception" in line or "ERROR" in line][-2:]
            raise ServiceError(f"the SQL endpoint did not start (see {log}): {' | '.join(errors)}")
        time.sleep(1)


def stop_services(lakehouse_dir: str | Path) -> list[str]:
    """Stop the SQL endpoint and then the metastore service of a lakehouse; what was running."""
    directory = services_dir(lakehouse_dir)
    stopped = []
    for name, what in ((SQL_ENDPOINT, "SQL endpoint"), ("metastore", "metastore service")):
        with file_lock(directory / f"{name}.lock"):
            if stop(directory / f"{name}.json"):
                stopped.append(what)
    return stopped
