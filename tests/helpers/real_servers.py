"""Real servers for the real-producer end-to-end test: a Kafka broker, PostgreSQL, MariaDB and
Kafka Connect with the Debezium connectors, each on 127.0.0.1 under a directory of its own.

Each class starts its server in the background (a process group of its own), waits until it
answers, and stops it: ``with KafkaBroker(tmp_path) as broker: ...`` stops it however the
block ends, and so does :func:`stop_all` for a directory (from another process too: every
server records its pid and ports in ``<directory>/<name>/server.json``). Every port is a free
one, chosen at start. The servers:

- :class:`KafkaBroker`: Apache Kafka in KRaft mode (one combined broker and controller), from
  the jars of ``SERVICE_COORDINATES["kafka-broker"]`` (``jars.py`` of the adapter plugin);
  topic admin, produce and consume through ``tests/helpers/KafkaTool.java``.
- :class:`Postgres`: Debian's PostgreSQL 15 (``wal_level=logical``), run as the OS user
  ``postgres`` when we are root (PostgreSQL refuses root); the server itself, like the base
  class :class:`Server`, is ``cdc_cluster/servers.py``'s, which the loopback Spark cluster
  uses too.
- :class:`MariaDB`: Debian's MariaDB with a row-based binlog.
- :class:`DebeziumConnect`: Kafka Connect standalone with the Debezium PostgreSQL (pgoutput)
  and MariaDB connectors, JsonConverter with schemas, from
  ``SERVICE_COORDINATES["kafka-connect-debezium"]``.

The jars come from the jar cache (``python -m dbt.adapters.spark_embedded.resolve_jars
--services``, which ``scripts/test.sh`` runs); the database servers from Debian packages
(``scripts/install_test_servers.sh``). See docs/real_producers.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cdc_cluster import servers
from cdc_cluster.servers import (
    LOOPBACK,
    STATE_FILE,
    Server,
    ServerError,
    alive,
    free_port,
    port_is_free,
    postgres_bin,
    run_program,
    stop_recorded,
    stopped_on_failure,
)

HELPERS = Path(__file__).resolve().parent
KAFKA_TOOL_SOURCE = HELPERS / "KafkaTool.java"

# Logging of the Java servers (log4j 2): to standard output, which goes to the server's log file.
LOG4J2_PROPERTIES = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = {target}
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %X{{connector.context}}%m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = out
"""

RealServerError = ServerError  # the name these tests use


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found:
        raise RealServerError("Java 17 is needed for Kafka and Kafka Connect; no `java` was found.")
    return found


def service_classpath(group: str) -> str:
    from dbt.adapters.spark_embedded.jars import service_classpath as classpath

    return classpath(group)


def stop_all(directory: str | Path) -> list[str]:
    """Stop every server recorded under `directory` (Connect first, the broker last); the names
    of those stopped."""
    order = {"connect": 0, "postgres": 1, "mariadb": 1, "kafka": 2}
    states = []
    for path in Path(directory).glob(f"*/{STATE_FILE}"):
        with contextlib.suppress(OSError, ValueError):
            states.append((path, json.loads(path.read_text(encoding="utf-8"))))
    stopped = []
    for path, state in sorted(states, key=lambda item: order.get(item[1].get("name"), 1)):
        first = signal.SIGINT if state.get("name") == "postgres" else signal.SIGTERM
        if stop_recorded(path.parent, first):
            stopped.append(state.get("name", path.parent.name))
    return stopped


# ---------------------------------------------------------------------------------------------
# Kafka


class Record(NamedTuple):
    """A record to produce: key and value as text (None for null), headers, partition (None:
    the producer's partitioner picks one)."""

    key: str | None
    value: str | None
    headers: list[tuple[str, str]] | None = None
    partition: int | None = None


def _b64(text: str | None) -> str:
    return "-" if text is None else base64.b64encode(text.encode("utf-8")).decode("ascii")


def _kafka_request(port: int, api_key: int, version: int, body: bytes, timeout: float = 5.0) -> bytes:
    """One request of the Kafka protocol (request header v1) to 127.0.0.1:port; the response
    after its correlation id."""
    client = b"real-servers"
    header = struct.pack(">hhih", api_key, version, 1, len(client)) + client
    message = header + body
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as connection:
        connection.sendall(struct.pack(">i", len(message)) + message)
        size = struct.unpack(">i", _receive(connection, 4))[0]
        return _receive(connection, size)[4:]


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the connection closed")
        data += chunk
    return data


def kafka_cluster_id(random_bytes: bytes) -> str:
    """A KRaft cluster id from 16 random bytes: their URL-safe base64 (22 characters), as Kafka's
    own ids are, but never starting with `-` (or `_`): the storage tool's argument parser would take
    `-…` for an option (about 1 id in 64). The first character comes from the first byte's top six
    bits; clearing its top bit keeps it among `A`–`f`."""
    if len(random_bytes) != 16:
        raise ValueError("a cluster id takes 16 bytes")
    first_letter_safe = bytes([random_bytes[0] & 0x7F]) + random_bytes[1:]
    return base64.urlsafe_b64encode(first_letter_safe).decode("ascii").rstrip("=")


class KafkaBroker(Server):
    """Apache Kafka 4 in KRaft mode, one node as broker and controller, under
    ``<directory>/kafka``: listener ``PLAINTEXT://127.0.0.1:<port>`` (:attr:`bootstrap`),
    controller on ``127.0.0.1:<controller_port>``; topics are created on first use, with one
    partition; internal topics have one replica.

    It answers once its metadata lists it as an available broker (a raw Metadata request),
    so topics can be created at once. A second start on the same directory keeps the data
    (and the ports, when they are still free)."""

    name = "kafka"

    def __init__(self, directory: str | Path, port: int | None = None) -> None:
        super().__init__(directory)
        previous = self._previous_ports()
        self.port = port or previous.get("port") or free_port()
        self.controller_port = previous.get("controller_port") or free_port()
        self._classpath = ""

    @property
    def classpath(self) -> str:
        if not self._classpath:
            self._classpath = service_classpath("kafka-broker")
        return self._classpath

    def _previous_ports(self) -> dict[str, int]:
        with contextlib.suppress(OSError, ValueError):
            ports = json.loads((self.home / "ports.json").read_text(encoding="utf-8"))
            if all(port_is_free(int(p)) for p in ports.values()):
                return {k: int(v) for k, v in ports.items()}
        return {}

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:<port>``, for ``bootstrap.servers``."""
        return f"{LOOPBACK}:{self.port}"

    def _prepare(self) -> None:
        data = self.home / "data"
        properties = self.home / "server.properties"
        properties.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@{LOOPBACK}:{self.controller_port}",
                    f"listeners=PLAINTEXT://{LOOPBACK}:{self.port},CONTROLLER://{LOOPBACK}:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://{LOOPBACK}:{self.port}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={data}",
                    "num.partitions=1",
                    "default.replication.factor=1",
                    "auto.create.topics.enable=true",
                    "offsets.topic.replication.factor=1",
                    "offsets.topic.num.partitions=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "transaction.state.log.num.partitions=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    "log.retention.hours=-1",
                    "",
                ]
            ),
            encoding="utf-8",
        )
        (self.home / "ports.json").write_text(
            json.dumps({"port": self.port, "controller_port": self.controller_port}), encoding="utf-8"
        )
        (self.home / "log4j2.properties").write_text(
            LOG4J2_PROPERTIES.format(target="SYSTEM_OUT", level="INFO"), encoding="utf-8"
        )
        (self.home / "tool-log4j2.properties").write_text(
            LOG4J2_PROPERTIES.format(target="SYSTEM_ERR", level="WARN"), encoding="utf-8"
        )
        if not (data / "meta.properties").is_file():
            self._java(
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={kafka_cluster_id(uuid.uuid4().bytes)}",
                "--config",
                str(properties),
            )

    def _jvm(self, heap: str, log4j: str) -> list[str]:
        return [java(), f"-Xmx{heap}", f"-Dlog4j2.configurationFile={self.home / log4j}", "-cp"]

    def _java(self, main: str, *args: str) -> None:
        command = [*self._jvm("256m", "tool-log4j2.properties"), self.classpath, main, *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if result.returncode != 0:
            raise RealServerError(f"{main} {' '.join(args)} failed: {result.stderr.strip() or result.stdout}")

    def _command(self) -> list[str]:
        return [
            *self._jvm("512m", "log4j2.properties"),
            self.classpath,
            "-Djava.awt.headless=true",
            "kafka.Kafka",
            str(self.home / "server.properties"),
        ]

    def _ready(self) -> bool:
        # Metadata v4 (the oldest Kafka 4 answers), no topics: the brokers it lists are the
        # registered, unfenced ones.
        try:
            response = _kafka_request(self.port, 3, 4, struct.pack(">ib", 0, 0))
        except (OSError, struct.error):
            return False
        return struct.unpack(">i", response[4:8])[0] > 0

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "controller_port": self.controller_port, "bootstrap": self.bootstrap}

    # -- clients (KafkaTool.java, compiled once into <home>/tool)
    def tool(self, *args: str, stdin: str | None = None, timeout: float = 120) -> str:
        """Run ``KafkaTool BOOTSTRAP ARGS...`` (tests/helpers/KafkaTool.java); its output."""
        classes = self.home / "tool"
        if not (classes / "KafkaTool.class").is_file() or (
            (classes / "KafkaTool.class").stat().st_mtime < KAFKA_TOOL_SOURCE.stat().st_mtime
        ):
            building = self.home / f"tool.{os.getpid()}"
            result = subprocess.run(
                ["javac", "-nowarn", "-cp", self.classpath, "-d", str(building), str(KAFKA_TOOL_SOURCE)],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RealServerError(f"javac {KAFKA_TOOL_SOURCE} failed:\n{result.stderr}")
            shutil.rmtree(classes, ignore_errors=True)
            building.rename(classes)
        command = [
            *self._jvm("256m", "tool-log4j2.properties"),
            f"{classes}{os.pathsep}{self.classpath}",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "KafkaTool",
            self.bootstrap,
            *args,
        ]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            raise RealServerError(
                f"KafkaTool {' '.join(args)} failed (exit {result.returncode}): {result.stderr.strip()}",
            )
        return result.stdout

    def create_topic(self, name: str, partitions: int = 1, exist_ok: bool = False) -> None:
        """Create a topic (one replica); returns once every partition has its leader."""
        self.tool("create-topic", name, str(partitions), *(["exist-ok"] if exist_ok else []))

    def delete_topic(self, name: str) -> None:
        """Delete a topic; returns once the broker no longer lists it."""
        self.tool("delete-topic", name)

    def topics(self) -> list[str]:
        """The names of the topics (internal ones such as ``__consumer_offsets`` included)."""
        return self.tool("topics").split()

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Partition → end offset (the offset the next record gets); empty if the topic does
        not exist."""
        lines = self.tool("end-offsets", topic).splitlines()
        return {int(p): int(o) for p, o in (line.split() for line in lines)}

    def produce(self, topic: str, records: Iterable[Record | Sequence[Any]]) -> None:
        """Produce records in order (acks=all, idempotent, one at a time): each a
        :class:`Record` or a tuple ``(key, value, headers, partition)`` (shorter tuples leave
        the rest None)."""
        lines = []
        for item in records:
            record = item if isinstance(item, Record) else Record(*item)
            headers = ",".join(f"{_b64(k)}:{_b64(v)}" for k, v in record.headers or []) or "-"
            partition = "-" if record.partition is None else str(record.partition)
            lines.append(f"{partition}\t{_b64(record.key)}\t{_b64(record.value)}\t{headers}")
        self.tool("produce", topic, stdin="\n".join(lines) + "\n")

    def consume_lines(
        self, topics: str | Sequence[str], min_records: int | None = None, timeout: float = 60
    ) -> list[str]:
        """The records of `topics` from the beginning, as the JSON lines of ``kcat -C -J``
        (the `kcat` container of python_ingest land): every record there is now, or with
        `min_records` at least that many (waiting up to `timeout` seconds for them; raises
        RealServerError if they do not come)."""
        names = [topics] if isinstance(topics, str) else list(topics)
        wanted = -1 if min_records is None else min_records
        try:
            out = self.tool("consume", str(wanted), str(int(timeout * 1000)), *names, timeout=timeout + 60)
        except RealServerError as exc:
            raise RealServerError(f"fewer than {min_records} records on {', '.join(names)}: {exc}") from exc
        # Records end at "\n" only: a value may hold U+2028, which splitlines() would break at.
        return [line for line in out.split("\n") if line.strip()]

    def consume(
        self, topics: str | Sequence[str], min_records: int | None = None, timeout: float = 60
    ) -> list[dict[str, Any]]:
        """As :meth:`consume_lines`, parsed: dicts with topic, partition, offset, tstype, ts,
        broker, headers (alternating names and values; absent when none), key and payload."""
        return [json.loads(line) for line in self.consume_lines(topics, min_records, timeout)]

    def dump(
        self,
        path: str | Path,
        topics: str | Sequence[str],
        min_records: int | None = None,
        timeout: float = 60,
    ) -> int:
        """Write :meth:`consume_lines` to `path` (a kcat dump); the number of records."""
        lines = self.consume_lines(topics, min_records, timeout)
        Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return len(lines)


# ---------------------------------------------------------------------------------------------
# Databases

DEBEZIUM_USER = "debezium"
DEBEZIUM_PASSWORD = "dbz"


def _mariadb_program(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if not found:
        raise RealServerError(
            f"MariaDB is not installed (no {name}): run scripts/install_test_servers.sh "
            "(Debian's mariadb-server)."
        )
    return found


REQUIRE_ENV = "CDC_REQUIRE_REAL_SERVERS"


def require_real_servers(databases: bool = True) -> None:
    """Skip the calling test when the servers it needs are not installed (the database
    packages, with `databases`, and the servers' jars), naming what is missing; under
    ``$CDC_REQUIRE_REAL_SERVERS=1`` (set by .ci/run) fail instead, so CI cannot pass by skipping."""
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError
    from dbt.adapters.spark_embedded.jars import service_classpath as classpath

    missing = servers_installed() if databases else None
    if not missing:
        try:
            classpath("kafka-broker")
            classpath("kafka-connect-debezium")
        except JarsNotResolvedError as exc:
            missing = str(exc)
    _skip_or_fail(missing)


def require_cluster_servers() -> None:
    """As :func:`require_real_servers`, for the loopback Spark cluster (cdc_cluster/standalone.py):
    PostgreSQL and the metastore's JDBC driver in the jar cache."""
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError
    from dbt.adapters.spark_embedded.jars import service_classpath as classpath

    try:
        postgres_bin()
        classpath("metastore-postgresql")
    except (ServerError, JarsNotResolvedError) as exc:
        _skip_or_fail(str(exc))


def require_object_store() -> None:
    """As :func:`require_real_servers`, for the object store (cdc_cluster/object_store.py): the
    pinned SeaweedFS binary (scripts/install_object_store.sh) and the S3A connector's jars in the
    jar cache (``resolve_jars --object-store``)."""
    from dbt.adapters.spark_embedded.jars import JarsNotResolvedError, object_store_jars

    from cdc_cluster.object_store import weed_binary

    try:
        weed_binary()
        object_store_jars()
    except (ServerError, JarsNotResolvedError) as exc:
        _skip_or_fail(str(exc))


def _skip_or_fail(missing: str | None) -> None:
    import pytest

    if missing:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{missing} (required: {REQUIRE_ENV}=1)", pytrace=False)
        pytest.skip(missing)


def servers_installed() -> str | None:
    """None when PostgreSQL and MariaDB are installed; else why not (a reason to skip)."""
    try:
        postgres_bin()
        _mariadb_program("mariadbd")
    except RealServerError as exc:
        return str(exc)
    return None


class Postgres(servers.Postgres):
    """PostgreSQL for Debezium (cdc_cluster/servers.py has the server itself): ``wal_level=logical``,
    database `database`; user ``debezium`` (password ``dbz``, REPLICATION, reads every table)
    for the connector; publication ``dbz_publication`` for all tables."""

    publication = "dbz_publication"

    def __init__(self, directory: str | Path, database: str = "shop") -> None:
        super().__init__(directory, database)
        self.user = DEBEZIUM_USER
        self.password = DEBEZIUM_PASSWORD

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "wal_level": "logical",
            "max_wal_senders": 8,
            "max_replication_slots": 8,
        }

    def _after_start(self) -> None:
        super()._after_start()
        self.sql(
            f"""
            do $$ begin
              if not exists (select from pg_roles where rolname = '{self.user}') then
                create role "{self.user}" login replication password '{self.password}';
              end if;
            end $$;
            grant pg_read_all_data to "{self.user}";
            grant create on database "{self.database}" to "{self.user}";
            """
        )
        if not self.sql(f"select 1 from pg_publication where pubname = '{self.publication}'"):
            self.sql(f"create publication {self.publication} for all tables")


class MariaDB(Server):
    """MariaDB (Debian's package) under ``<directory>/mariadb``: 127.0.0.1:<port> and a Unix
    socket ``<directory>/mariadb/mariadb.sock``, binlog ``ROW`` with full row images, server id
    1, time zone UTC. The OS user that starts it is its superuser (unix_socket); database
    `database`; user ``debezium`` (password ``dbz``) with the grants the connector needs."""

    name = "mariadb"

    def __init__(self, directory: str | Path, database: str = "shop") -> None:
        super().__init__(directory)
        self.database = database
        self.port = free_port()
        self.user = DEBEZIUM_USER
        self.password = DEBEZIUM_PASSWORD
        import pwd

        self._os_user = pwd.getpwuid(os.geteuid()).pw_name
        self.mariadbd = _mariadb_program("mariadbd")

    @property
    def socket(self) -> Path:
        return self.home / "mariadb.sock"

    def _prepare(self) -> None:
        (self.home / "tmp").mkdir(exist_ok=True)
        if not (self.home / "data" / "mysql").is_dir():
            run_program(
                [
                    _mariadb_program("mariadb-install-db"),
                    "--no-defaults",
                    f"--datadir={self.home / 'data'}",
                    f"--user={self._os_user}",
                    "--auth-root-authentication-method=socket",
                    "--skip-test-db",
                    "--skip-name-resolve",
                ],
                "mariadb-install-db",
                cwd=self.home,
            )

    def _command(self) -> list[str]:
        return [
            self.mariadbd,
            "--no-defaults",  # not the machine's /etc/mysql
            f"--user={self._os_user}",
            f"--datadir={self.home / 'data'}",
            f"--tmpdir={self.home / 'tmp'}",
            f"--socket={self.socket}",
            f"--pid-file={self.home / 'mariadb.pid'}",
            f"--port={self.port}",
            f"--bind-address={LOOPBACK}",
            "--skip-name-resolve",
            "--log-bin=mariadb-bin",
            "--binlog-format=ROW",
            "--binlog-row-image=FULL",
            "--server-id=1",
            "--default-time-zone=+00:00",
            "--character-set-server=utf8mb4",
            "--innodb-buffer-pool-size=64M",
            "--innodb-flush-log-at-trx-commit=0",
        ]

    def _ready(self) -> bool:
        command = [
            _mariadb_program("mariadb-admin"),
            "--no-defaults",
            f"--socket={self.socket}",
            f"--user={self._os_user}",
            "--connect-timeout=2",
            "ping",
        ]
        return subprocess.run(command, capture_output=True, check=False, timeout=30).returncode == 0

    def _after_start(self) -> None:
        account = f"'{self.user}'@'{LOOPBACK}'"
        self.sql(
            f"""
            create database if not exists `{self.database}`;
            create user if not exists {account} identified by '{self.password}';
            grant select, reload, show databases, replication slave, binlog monitor, lock tables
              on *.* to {account};
            """,
            database="mysql",
        )

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "socket": str(self.socket), "database": self.database}

    def sql(self, statements: str, database: str | None = None) -> str:
        """Run SQL as the superuser (the mariadb client, stops at the first error); the rows it
        returns, one a line, columns separated by tabs."""
        command = [
            _mariadb_program("mariadb"),
            "--no-defaults",
            f"--socket={self.socket}",
            f"--user={self._os_user}",
            "--batch",
            "--skip-column-names",
            "--default-character-set=utf8mb4",  # four-byte characters (emoji) too
            f"--database={database or self.database}",
        ]
        return run_program(command, "mariadb", stdin=statements).strip()


# ---------------------------------------------------------------------------------------------
# Kafka Connect with Debezium

# Connect's log names the connector of each line (Connect's and Debezium's logging contexts), so
# that readiness can be read from it.
CONNECT_LOG4J2_PROPERTIES = LOG4J2_PROPERTIES.replace(
    "%X{{connector.context}}",
    "%X{{connector.context}}[%X{{dbz.connectorLogicalName}}|%X{{dbz.connectorContext}}] ",
) + (
    # Not a line for every REST request.
    "logger.rest.name = org.apache.kafka.connect.runtime.rest.RestServer\nlogger.rest.level = WARN\n"
)


# The connector settings that keep every change and every value (docs/real_producers.md,
# "Connector settings for a lossless lakehouse"), where Debezium's defaults skip truncates, wrap
# unsigned BIGINTs, approximate intervals with months or move dates with two-digit years.
LOSSLESS_SETTINGS: dict[str, dict[str, str]] = {
    "postgresql": {
        "skipped.operations": "none",
        "decimal.handling.mode": "precise",
        "interval.handling.mode": "string",
        "hstore.handling.mode": "json",
        "binary.handling.mode": "bytes",
        "time.precision.mode": "adaptive",
        "include.unknown.datatypes": "true",
    },
    "mariadb": {
        "skipped.operations": "none",
        "decimal.handling.mode": "precise",
        "bigint.unsigned.handling.mode": "precise",
        "binary.handling.mode": "bytes",
        "time.precision.mode": "adaptive_time_microseconds",
        "enable.time.adjuster": "false",
    },
}


class DebeziumConnect(Server):
    """Kafka Connect standalone under ``<directory>/connect`` with the Debezium connectors
    (on Connect's class path): REST on 127.0.0.1:<rest_port>, offsets in
    ``<directory>/connect/offsets``, JsonConverter for keys and values with schemas (Kafka's
    default).

    - ``pg`` (:attr:`pg_prefix`): PostgreSQL, ``plugin.name=pgoutput``, slot ``debezium_pg``,
      the server's publication, ``snapshot.mode=initial``; topics ``pg.<schema>.<table>``.
    - ``maria`` (:attr:`maria_prefix`): MariaDB, ``snapshot.mode=initial``, the database's
      tables; topics ``maria.<database>.<table>``, DDL on ``maria``, schema history on
      ``maria.schema-history``.

    Either database may be None. :meth:`start` returns once every connector and its task are
    RUNNING and each has finished its initial snapshot (its log says it streams)."""

    name = "connect"
    pg_prefix = "pg"
    maria_prefix = "maria"

    def __init__(
        self,
        directory: str | Path,
        broker: KafkaBroker,
        postgres: Postgres | None = None,
        mariadb: MariaDB | None = None,
        connector_options: dict[str, dict[str, str]] | None = None,
    ) -> None:
        super().__init__(directory)
        self.broker = broker
        self.postgres = postgres
        self.mariadb = mariadb
        self.rest_port = free_port()
        self.classpath = ""
        self.connector_options = connector_options or {}  # connector name → extra settings

    @property
    def schema_history_topic(self) -> str:
        return f"{self.maria_prefix}.schema-history"

    def pg_topic(self, table: str, schema: str = "public") -> str:
        return f"{self.pg_prefix}.{schema}.{table}"

    def maria_topic(self, table: str) -> str:
        assert self.mariadb is not None
        return f"{self.maria_prefix}.{self.mariadb.database}.{table}"

    def connectors(self) -> dict[str, dict[str, str]]:
        """Connector name → its settings: the connection, then LOSSLESS_SETTINGS, then the
        `connector_options` given for that connector."""
        found: dict[str, dict[str, str]] = {}
        if self.postgres is not None:
            found[self.pg_prefix] = {
                "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
                "tasks.max": "1",
                "database.hostname": LOOPBACK,
                "database.port": str(self.postgres.port),
                "database.user": self.postgres.user,
                "database.password": self.postgres.password,
                "database.dbname": self.postgres.database,
                "topic.prefix": self.pg_prefix,
                "plugin.name": "pgoutput",
                "slot.name": f"debezium_{self.pg_prefix}",
                "publication.name": self.postgres.publication,
                "publication.autocreate.mode": "disabled",
                "snapshot.mode": "initial",
                **LOSSLESS_SETTINGS["postgresql"],
            }
        if self.mariadb is not None:
            found[self.maria_prefix] = {
                "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
                "tasks.max": "1",
                "database.hostname": LOOPBACK,
                "database.port": str(self.mariadb.port),
                "database.user": self.mariadb.user,
                "database.password": self.mariadb.password,
                "database.server.id": "5401",
                "database.include.list": self.mariadb.database,
                "topic.prefix": self.maria_prefix,
                "snapshot.mode": "initial",
                "schema.history.internal.kafka.bootstrap.servers": self.broker.bootstrap,
                "schema.history.internal.kafka.topic": self.schema_history_topic,
                **LOSSLESS_SETTINGS["mariadb"],
            }
        for name, options in self.connector_options.items():
            found[name] = {**found.get(name, {}), **options}
        return found

    def _prepare(self) -> None:
        self.classpath = service_classpath("kafka-connect-debezium")
        worker = {
            "bootstrap.servers": self.broker.bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            "offset.storage.file.filename": str(self.home / "offsets"),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://{LOOPBACK}:{self.rest_port}",
            "rest.advertised.host.name": LOOPBACK,
            "rest.advertised.port": str(self.rest_port),
            # The connectors are on the class path and declare themselves (no plugin.path scan).
            "plugin.discovery": "service_load",
        }
        files = {"worker.properties": worker}
        files.update({f"{name}.properties": {"name": name, **c} for name, c in self.connectors().items()})
        for file_name, settings in files.items():
            (self.home / file_name).write_text(
                "".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8"
            )
        (self.home / "log4j2.properties").write_text(
            CONNECT_LOG4J2_PROPERTIES.format(target="SYSTEM_OUT", level="INFO"), encoding="utf-8"
        )

    def _command(self) -> list[str]:
        return [
            java(),
            "-Xmx768m",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            "-Djava.awt.headless=true",
            "-cp",
            self.classpath,
            "org.apache.kafka.connect.cli.ConnectStandalone",
            str(self.home / "worker.properties"),
            *(str(self.home / f"{name}.properties") for name in self.connectors()),
        ]

    def rest(self, path: str, method: str = "GET") -> Any:
        """A request to Connect's REST API; the JSON it answers."""
        import urllib.request

        request = urllib.request.Request(f"http://{LOOPBACK}:{self.rest_port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def _ready(self) -> bool:
        try:
            return set(self.rest("/connectors")) >= set(self.connectors())
        except OSError:
            return False

    def status(self) -> dict[str, Any]:
        """Connector name → ``{"connector": state, "tasks": [state, ...]}`` (RUNNING, FAILED, ...)."""
        found = {}
        for name in self.connectors():
            status = self.rest(f"/connectors/{name}/status")
            tasks = status.get("tasks", [])
            for task in tasks:
                if task.get("state") == "FAILED":
                    raise RealServerError(
                        f"the task of connector {name} failed: {task.get('trace', '')[:3000]}"
                    )
            found[name] = {"connector": status["connector"]["state"], "tasks": [t["state"] for t in tasks]}
        return found

    def _streaming(self, name: str) -> bool:
        """Whether the log says connector `name` streams (its snapshot, if any, is done)."""
        marker = f"[{name}|streaming] "
        text = self.log_file.read_text(encoding="utf-8", errors="replace")
        return any(marker in line and "Starting streaming" in line for line in text.splitlines())

    def _after_start(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        waiting = set(self.connectors())
        while waiting:
            if self.process.poll() is not None:
                raise RealServerError(
                    f"Kafka Connect stopped; the end of {self.log_file}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise RealServerError(
                    f"connectors {sorted(waiting)} not streaming within {self.start_timeout:.0f} s "
                    f"(status {self.status()}); the end of {self.log_file}:\n{self.log_tail()}"
                )
            status = self.status()
            for name in list(waiting):
                state = status[name]
                if (
                    state["connector"] == "RUNNING"
                    and state["tasks"] == ["RUNNING"]
                    and self._streaming(name)
                ):
                    waiting.discard(name)
            time.sleep(0.5)

    def _state(self) -> dict[str, Any]:
        return {"rest_port": self.rest_port, "connectors": sorted(self.connectors())}

    def wait_for(self, topics: str | Sequence[str], count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """Every record on `topics` from the beginning, once there are at least `count` (see
        :meth:`KafkaBroker.consume`); raises RealServerError after `timeout` seconds."""
        return self.broker.consume(topics, min_records=count, timeout=timeout)


# ---------------------------------------------------------------------------------------------
# Command line: scripts/real_producers.sh start | stop | status DIR

SUMMARY_FILE = "real_producers.json"
SAMPLE_TABLE = "customers"


def _running(directory: Path) -> dict[str, dict[str, Any]]:
    """Name → recorded state of every server under `directory` that is alive."""
    found = {}
    for path in directory.glob(f"*/{STATE_FILE}"):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(path.read_text(encoding="utf-8"))
            if alive(int(state.get("pid", 0))):
                found[state["name"]] = state
    return found


def start_all(directory: str | Path, sample: bool = True) -> dict[str, Any]:
    """Start broker, PostgreSQL, MariaDB and Connect under `directory`, in the background (they
    outlive this process); with `sample`, a table ``customers`` with two rows in each database
    first, so that the snapshot has something to send. The summary (also written to
    ``<directory>/real_producers.json``)."""
    directory = Path(directory).resolve()
    with stopped_on_failure() as started:
        broker = KafkaBroker(directory).start()
        started.append(broker)
        postgres = Postgres(directory).start()
        started.append(postgres)
        mariadb = MariaDB(directory).start()
        started.append(mariadb)
        if sample:
            postgres.sql(
                f"create table if not exists {SAMPLE_TABLE} (id int primary key, name text, "
                "balance numeric(10, 2), updated_at timestamptz default now());\n"
                f"insert into {SAMPLE_TABLE} (id, name, balance) values (1, 'Ann', 12.50), (2, 'Bob', -3.00) "
                "on conflict do nothing;"
            )
            mariadb.sql(
                f"create table if not exists {SAMPLE_TABLE} (id int primary key, name varchar(100), "
                "balance decimal(10, 2), updated_at datetime(6) default now(6));\n"
                f"insert ignore into {SAMPLE_TABLE} (id, name, balance) "
                "values (1, 'Ann', 12.50), (2, 'Bob', -3.00);"
            )
        connect = DebeziumConnect(directory, broker, postgres, mariadb).start()
        started.append(connect)
    summary = {
        "directory": str(directory),
        "bootstrap": broker.bootstrap,
        "topics": [t for t in broker.topics() if not t.startswith("__")],
        "postgres": {
            "host": LOOPBACK,
            "port": postgres.port,
            "database": postgres.database,
            "user": postgres.user,
            "password": postgres.password,
            "socket_dir": str(postgres.socket_dir),
        },
        "mariadb": {
            "host": LOOPBACK,
            "port": mariadb.port,
            "database": mariadb.database,
            "user": mariadb.user,
            "password": mariadb.password,
            "socket": str(mariadb.socket),
        },
        "connect": f"http://{LOOPBACK}:{connect.rest_port}",
        "started_in": {s.name: round(s.started_in or 0, 1) for s in started},
    }
    (directory / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="scripts/real_producers.sh",
        description="Real PostgreSQL and MariaDB → Debezium (Kafka Connect) → Kafka on 127.0.0.1, under DIR.",
    )
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument("directory", type=Path, metavar="DIR")
    parser.add_argument("--no-sample", action="store_true", help="start: no sample table customers")
    args = parser.parse_args(argv)
    directory = args.directory.resolve()
    if args.command == "stop":
        stopped = stop_all(directory)
        print(f"stopped: {', '.join(stopped)}" if stopped else f"nothing runs under {directory}")
        return 0
    running = _running(directory)
    summary_file = directory / SUMMARY_FILE
    if args.command == "status" or running:
        if len(running) == 4 and summary_file.is_file():
            summary = json.loads(summary_file.read_text(encoding="utf-8"))
            print(_describe(summary, running=True))
            return 0
        if args.command == "start" and running:
            print(
                f"partly running under {directory} ({', '.join(sorted(running))}): stop it first",
                file=sys.stderr,
            )
            return 1
        print(f"not running under {directory}", file=sys.stderr)
        return 1
    directory.mkdir(parents=True, exist_ok=True)
    try:
        summary = start_all(directory, sample=not args.no_sample)
    except RealServerError as exc:
        print(f"real_producers: {exc}", file=sys.stderr)
        return 1
    print(_describe(summary, running=False))
    return 0


def _describe(summary: dict[str, Any], running: bool) -> str:
    pg, maria = summary["postgres"], summary["mariadb"]
    lines = [
        f"real producers {'running' if running else 'started'} under {summary['directory']}"
        + ("" if running else f" (seconds: {summary['started_in']})"),
        f"  kafka bootstrap: {summary['bootstrap']}",
        f"  topics: {' '.join(summary['topics'])}",
        "    (pg.<schema>.<table>, maria.<database>.<table>; DDL: maria, history: maria.schema-history)",
        f"  postgres: {pg['host']}:{pg['port']}/{pg['database']} user {pg['user']} password {pg['password']};"
        f" psql -h {pg['socket_dir']} -p {pg['port']} -U postgres {pg['database']}",
        f"  mariadb: {maria['host']}:{maria['port']}/{maria['database']} user {maria['user']} password "
        f"{maria['password']}; mariadb --socket={maria['socket']} {maria['database']}",
        f"  kafka connect REST: {summary['connect']} (connectors pg, maria)",
        f"  stop: scripts/real_producers.sh stop {summary['directory']}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
