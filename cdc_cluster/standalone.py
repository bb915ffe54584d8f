"""A real Spark standalone cluster on this machine, every process on 127.0.0.1, for trying the
`cluster` target (docs/lakehouse.md, "Running on a cluster") and for its end-to-end test
(tests/e2e/test_cluster.py): ``python -m python_ingest cluster start|status|stop DIR``.

Everything lives under DIR, each server in a process group of its own
(cdc_cluster/servers.py records its pid and ports in ``<name>/server.json``):

- ``postgres/``: Debian's PostgreSQL, the metastore's database ``metastore`` (user ``hive``);
- ``metastore/``: the project's metastore service on that database, with the command
  ``metastore_command`` of adapters/dbt-spark-embedded/dbt/adapters/spark_embedded/services.py
  (adapters/dbt-spark-embedded/dbt/include/spark_embedded/services/LoopbackMetastore.java), its
  JDBC driver by pinned coordinate (``SERVICE_COORDINATES["metastore-postgresql"]`` in
  adapters/dbt-spark-embedded/dbt/adapters/spark_embedded/jars.py);
- ``master/``, ``worker-<n>/``: Spark's standalone Master and Workers from the pyspark
  installation (``bin/spark-class``); a worker's executors, separate JVMs, work in
  ``worker-<n>/work/<application>/<executor>/``;
- ``warehouse/``: the warehouse every JVM reads and writes (a ``file:`` URI: one machine), unless
  `start` is given an ``s3a://`` warehouse on an object store (``--warehouse``): then the
  metastore service reaches it through Hadoop's S3A connector (its ``conf/core-site.xml`` holds
  the endpoint settings ``$CDC_S3_ENDPOINT``, ``$CDC_S3_PATH_STYLE`` and ``$AWS_REGION``, its
  class path the connector's jars), and the workers share no directory with the driver or
  each other: each has its own work and local directories (``worker-<n>/work``,
  ``worker-<n>/local``), and the executors fetch the connector's jars from the driver
  (``spark.jars``). The credentials stay in the environment: the metastore service and the
  workers (so the executors) inherit `start`'s ``AWS_ACCESS_KEY_ID`` and
  ``AWS_SECRET_ACCESS_KEY``, as a cluster's machines carry an identity of their own;
- ``lakehouse/``: the cluster target's ``lakehouse_dir``: landing checkpoints and the build lock;
- ``cluster.json``: the environment that points the `cluster` target at all this.

``SPARK_LOCAL_IP=127.0.0.1`` makes the master, the workers, their web UIs and the executors
(which inherit their worker's environment) bind 127.0.0.1 only; exported for dbt and `land`,
it does the same for their driver. `start` prints ``export NAME=VALUE`` lines for
``eval "$(...)"``; `stop` stops every process group, executors included.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

from cdc_cluster.servers import (
    LOOPBACK,
    STATE_FILE,
    Postgres,
    Server,
    ServerError,
    alive,
    free_port,
    stop_recorded,
    stopped_on_failure,
)

SUMMARY = "cluster.json"
S3_ENVIRONMENT = ("CDC_S3_ENDPOINT", "CDC_S3_PATH_STYLE", "AWS_REGION")
METASTORE_DATABASE = "metastore"
METASTORE_USER = "hive"


def spark_home() -> Path:
    """The pyspark installation: Spark's jars, ``bin/spark-class``."""
    from dbt.adapters.spark_embedded.api import spark_jars_dir

    return spark_jars_dir().parent


def spark_environment() -> dict[str, str]:
    """The environment of the master and the workers (and so of the executors)."""
    environment = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": LOOPBACK}
    environment.setdefault("SPARK_DAEMON_MEMORY", "512m")
    environment.pop("SPARK_CONF_DIR", None)
    return environment


def master_json(webui_port: int) -> dict[str, Any]:
    """The master's state (``/json/`` of its web UI): workers, active and completed applications."""
    with urllib.request.urlopen(f"http://{LOOPBACK}:{webui_port}/json/", timeout=5) as response:
        return json.loads(response.read().decode("utf-8"))


class Metastore(Server):
    """The metastore service on the PostgreSQL database; the credentials are in a hive-site.xml
    readable by its owner only, not on the command line."""

    name = "metastore"

    def __init__(self, directory: str | Path, postgres: Postgres, password: str, warehouse: str) -> None:
        super().__init__(directory)
        self.port = free_port()
        self.postgres, self.password, self.warehouse = postgres, password, warehouse
        self.object_store: list[str] = []  # a warehouse on an object store: its conf folder, jars

    def _prepare(self) -> None:
        from dbt.adapters.spark_embedded.api import OBJECT_STORE_SCHEME, hadoop_site, object_store_classpath

        conf = self.home / "conf"
        conf.mkdir(exist_ok=True)
        settings = {
            "javax.jdo.option.ConnectionURL": (
                f"jdbc:postgresql://{LOOPBACK}:{self.postgres.port}/{self.postgres.database}"
            ),
            "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
            "javax.jdo.option.ConnectionUserName": METASTORE_USER,
            "javax.jdo.option.ConnectionPassword": self.password,
        }
        site = conf / "hive-site.xml"
        site.touch(mode=0o600)
        site.write_text(hadoop_site(settings), encoding="utf-8")
        if self.warehouse.startswith(OBJECT_STORE_SCHEME):
            # Hive 2.3 checks and creates every database's and table's directory through
            # Hadoop's file system: a folder with the S3A endpoint settings (no credentials), and
            # the connector's jars.
            self.object_store = object_store_classpath(self.home, self.warehouse, s3a_settings())

    def _command(self) -> list[str]:
        from dbt.adapters.spark_embedded.api import metastore_command, service_classpath

        driver = service_classpath("metastore-postgresql").split(os.pathsep)
        properties = {"hive.metastore.warehouse.dir": self.warehouse}
        folders, connector = self.object_store[:1], self.object_store[1:]
        # The connector's jars after pyspark's (the AWS SDK bundle carries an slf4j 1.7 API).
        return metastore_command(
            properties, self.port, 0, [str(self.home / "conf"), *folders, *driver], connector
        )

    def _ready(self) -> bool:
        from dbt.adapters.spark_embedded.api import answers

        return f"listening on {LOOPBACK}:{self.port}" in self.log_tail() and answers(self.port)

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "uri": f"thrift://{LOOPBACK}:{self.port}"}


class Master(Server):
    """Spark's standalone Master: ``spark://127.0.0.1:<port>``, web UI on 127.0.0.1:<webui_port>."""

    name = "master"

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self.port, self.webui_port = free_port(), free_port()

    @property
    def url(self) -> str:
        return f"spark://{LOOPBACK}:{self.port}"

    def _command(self) -> list[str]:
        return [
            str(spark_home() / "bin" / "spark-class"),
            "org.apache.spark.deploy.master.Master",
            *("--host", LOOPBACK, "--port", str(self.port), "--webui-port", str(self.webui_port)),
        ]

    def _popen_options(self) -> dict[str, Any]:
        return {"env": spark_environment()}

    def _ready(self) -> bool:
        try:
            return master_json(self.webui_port).get("status") == "ALIVE"
        except (OSError, ValueError):
            return False

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "webui_port": self.webui_port, "url": self.url}


class Worker(Server):
    """A Spark standalone Worker of `master` with `cores` cores and `memory` for its executors."""

    def __init__(self, directory: str | Path, master: Master, number: int, cores: int, memory: str) -> None:
        self.name = f"worker-{number}"
        super().__init__(directory)
        self.master, self.cores, self.memory = master, cores, memory
        self.port, self.webui_port = free_port(), free_port()

    def _command(self) -> list[str]:
        return [
            str(spark_home() / "bin" / "spark-class"),
            "org.apache.spark.deploy.worker.Worker",
            *("--host", LOOPBACK, "--port", str(self.port), "--webui-port", str(self.webui_port)),
            *("--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(self.home / "work")),
            self.master.url,
        ]

    def _popen_options(self) -> dict[str, Any]:
        # The worker's own scratch space, which its executors use for shuffle and spills.
        local = self.home / "local"
        local.mkdir(exist_ok=True)
        return {"env": {**spark_environment(), "SPARK_LOCAL_DIRS": str(local)}}

    def _ready(self) -> bool:
        try:
            workers = master_json(self.master.webui_port).get("workers", [])
        except (OSError, ValueError):
            return False
        return any(w.get("port") == self.port and w.get("state") == "ALIVE" for w in workers)

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "webui_port": self.webui_port, "cores": self.cores, "memory": self.memory}


def _recorded(directory: Path) -> dict[str, dict[str, Any]]:
    """Name → recorded state of every server of the cluster under `directory`, alive or not."""
    found = {}
    for path in sorted(directory.glob(f"*/{STATE_FILE}")):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(path.read_text(encoding="utf-8"))
            found[path.parent.name] = {**state, "alive": alive(int(state.get("pid", 0)))}
    return found


def s3a_settings() -> dict[str, str]:
    """The S3A connector's endpoint settings from the environment, as the profile's `cluster`
    target reads them (profiles.yml); never credentials."""
    settings = {
        "fs.s3a.endpoint": os.environ.get("CDC_S3_ENDPOINT", ""),
        "fs.s3a.endpoint.region": os.environ.get("AWS_REGION", "us-east-1"),
        "fs.s3a.path.style.access": os.environ.get("CDC_S3_PATH_STYLE", "false"),
    }
    return {name: value for name, value in settings.items() if value}


def start(
    directory: str | Path, workers: int = 1, cores: int = 1, memory: str = "2g", warehouse: str | None = None
) -> dict[str, Any]:
    """Start PostgreSQL, the metastore service, the master and `workers` workers under
    `directory`, in the background (they outlive this process); the summary, with the
    environment to export. `warehouse`: an ``s3a://bucket/prefix`` on an object store instead of
    ``directory/warehouse``. A cluster that already runs there is left as it is."""
    directory = Path(directory).resolve()
    recorded = _recorded(directory)
    if recorded and all(state["alive"] for state in recorded.values()):
        return json.loads((directory / SUMMARY).read_text(encoding="utf-8"))
    if any(state["alive"] for state in recorded.values()):
        running = ", ".join(name for name, state in recorded.items() if state["alive"])
        raise ServerError(f"part of a cluster runs under {directory} ({running}): stop it first")
    from dbt.adapters.spark_embedded.api import OBJECT_STORE_SCHEME

    if warehouse and not warehouse.startswith(OBJECT_STORE_SCHEME):
        raise ServerError(f"the warehouse {warehouse} is not an {OBJECT_STORE_SCHEME} URI: docs/lakehouse.md")
    lakehouse = directory / "lakehouse"
    lakehouse.mkdir(parents=True, exist_ok=True)
    if not warehouse:
        (directory / "warehouse").mkdir(exist_ok=True)
        warehouse = (directory / "warehouse").as_uri()
    with stopped_on_failure() as started:
        postgres = Postgres(directory, METASTORE_DATABASE)
        started.append(postgres.start())
        password = secrets.token_urlsafe(18)
        postgres.sql(
            f"""
            do $$ begin
              if not exists (select from pg_roles where rolname = '{METASTORE_USER}') then
                create role {METASTORE_USER} login;
              end if;
            end $$;
            alter role {METASTORE_USER} password '{password}';
            alter database {METASTORE_DATABASE} owner to {METASTORE_USER};
            """
        )
        metastore = Metastore(directory, postgres, password, warehouse)
        started.append(metastore.start())
        master = Master(directory)
        started.append(master.start())
        for number in range(1, workers + 1):
            started.append(Worker(directory, master, number, cores, memory).start())
    summary = {
        "directory": str(directory),
        "master_ui": f"http://{LOOPBACK}:{master.webui_port}",
        "environment": {
            "CDC_SPARK_MASTER": master.url,
            "CDC_WAREHOUSE_URI": warehouse,
            "CDC_METASTORE_URI": f"thrift://{LOOPBACK}:{metastore.port}",
            "CDC_LAKEHOUSE_DIR": str(lakehouse),
            "SPARK_LOCAL_IP": LOOPBACK,
            # The object store's endpoint settings (no credentials: they stay the user's).
            **(
                {name: os.environ[name] for name in S3_ENVIRONMENT if os.environ.get(name)}
                if warehouse.startswith(OBJECT_STORE_SCHEME)
                else {}
            ),
        },
    }
    (directory / SUMMARY).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def stop(directory: str | Path) -> list[str]:
    """Stop the workers (their executors with them), the master, the metastore service and
    PostgreSQL of the cluster under `directory`; the names of those that were running."""
    directory = Path(directory).resolve()
    order = sorted(_recorded(directory), key=lambda name: ("worker" not in name, name != "master", name))
    stopped = [name for name in order if stop_recorded(directory / name, _stop_signal(name))]
    (directory / SUMMARY).unlink(missing_ok=True)
    return stopped


def _stop_signal(name: str) -> int:
    return Postgres.stop_signal if name == Postgres.name else signal.SIGTERM


def exports(summary: dict[str, Any]) -> str:
    lines = [f"export {name}={value}" for name, value in summary["environment"].items()]
    return "\n".join([*lines, f"# the master's web UI: {summary['master_ui']}/"])


def exported(text: str) -> dict[str, str]:
    """The variables that the ``export`` lines of `text` (`start`'s output, :func:`exports`) set,
    as ``eval`` would set them."""
    return dict(
        line.removeprefix("export ").split("=", 1) for line in text.splitlines() if line.startswith("export ")
    )


def command(
    action: str, directory: Path, workers: int, cores: int, memory: str, warehouse: str | None = None
) -> int:
    """``cluster start|status|stop DIR``: exit 0 when done (status: when every server runs)."""
    if action == "start":
        print(
            f"starting PostgreSQL, the metastore service, a master and {workers} worker(s) under "
            f"{directory.resolve()}",
            file=sys.stderr,
            flush=True,
        )
        from dbt.adapters.spark_embedded.api import JarsNotResolvedError, ServiceError

        try:
            summary = start(directory, workers, cores, memory, warehouse)
        except (ServerError, JarsNotResolvedError, ServiceError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(exports(summary))
        return 0
    if action == "stop":
        stopped = stop(directory)
        print(f"stopped: {', '.join(stopped)}" if stopped else f"nothing was running under {directory}")
        return 0
    recorded = _recorded(directory.resolve())
    for name, state in recorded.items():
        ports = ", ".join(f"{k} {v}" for k, v in state.items() if k.endswith("port"))
        print(f"# {name}: {'running' if state['alive'] else 'not running'} (pid {state.get('pid')}; {ports})")
    if not recorded or not all(state["alive"] for state in recorded.values()):
        print(f"the cluster under {directory} is not running", file=sys.stderr)
        return 1
    print(exports(json.loads((directory / SUMMARY).read_text(encoding="utf-8"))))
    return 0
