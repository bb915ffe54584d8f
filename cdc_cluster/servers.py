"""Servers run in the background on 127.0.0.1, each in a process group of its own under a
directory of its own: the base class of the real-producer test's servers
(tests/helpers/real_servers.py) and of the loopback Spark cluster (cdc_cluster/standalone.py),
and Debian's PostgreSQL, which both use.

A :class:`Server` starts its process, waits until it answers and stops it (the whole process
group): ``with Postgres(directory) as postgres: ...`` stops it however the block ends. Each
records its pid and ports in ``<directory>/<name>/server.json``, so another process can find it
(:meth:`Server.attach`) or stop it (:func:`stop_recorded`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from dbt.adapters.spark_embedded.api import is_alive

LOOPBACK = "127.0.0.1"
STATE_FILE = "server.json"
LOG_FILE = "server.log"


class ServerError(RuntimeError):
    """A server that did not start, stopped early, or failed a request; the message says why."""


class PortTakenError(ServerError):
    """A server stopped at its start because a port it was to listen on was in use."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError:
            return False
        return True


def alive(pid: int) -> bool:
    if not is_alive(pid):
        return False
    # A zombie (exited, not yet reaped by its parent) is not alive.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    return True


@contextlib.contextmanager
def stopped_on_failure() -> Iterator[list[Server]]:
    """Collects the servers a block starts (append each); if the block fails, stops them, the
    last started first, so that a failed start leaves nothing running."""
    started: list[Server] = []
    try:
        yield started
    except BaseException:
        for server in reversed(started):
            server.stop()
        raise


def stop_process_group(pid: int, first_signal: int = signal.SIGTERM, grace_seconds: float = 30) -> None:
    """Stop the process group led by `pid` (a server started by this module): `first_signal`,
    then SIGKILL to the whole group after `grace_seconds`; returns once none of the group is
    left (or after 30 s more)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, first_signal)
    deadline = time.monotonic() + grace_seconds
    while alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)


class Server:
    """One server process under ``<directory>/<name>``; subclasses say how it starts and answers."""

    name = "server"
    stop_signal = signal.SIGTERM
    start_timeout = 180.0
    port_attempts = 3

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory).resolve()
        self.home = self.directory / self.name
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in: float | None = None  # seconds from start() until it answered
        self._log_start = 0  # where this start's part of the log file begins

    # -- to be provided by each server
    def _prepare(self) -> None:
        """Create what the server needs under `home` (once; kept across restarts)."""

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _popen_options(self) -> dict[str, Any]:
        return {}

    def _ready(self) -> bool:
        raise NotImplementedError

    def _after_start(self) -> None:
        """Work to do once the server answers (users, connectors, ...)."""

    def _state(self) -> dict[str, Any]:
        return {}

    # -- shared
    @property
    def log_file(self) -> Path:
        return self.home / LOG_FILE

    def _log_text(self, start: int = 0) -> str:
        """The log file from byte `start` on ("" when there is none)."""
        try:
            with self.log_file.open("rb") as log:
                log.seek(start)
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _port_was_taken(self) -> bool:
        """Whether this start's part of the log says that a port it was to listen on was in use."""
        return "address already in use" in self._log_text(self._log_start).lower()

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self._log_text().splitlines()[-lines:])

    def _choose_ports(self) -> bool:
        """Take new free ports for the next start; whether the server could (False by default:
        a server whose ports are given to it)."""
        return False

    def start(self) -> Self:
        """Start the server and wait until it answers. A port that :func:`free_port` found free
        can be taken by another process before the server binds it (an outgoing connection gets
        a port of the same range). A server that chooses its own ports (:meth:`_choose_ports`)
        and stopped at its start because a port was in use starts again on new ones, up to
        `port_attempts` times in all."""
        for _ in range(self.port_attempts - 1):
            try:
                return self._start_once()
            except PortTakenError:
                if not self._choose_ports():
                    raise
        return self._start_once()

    def _start_once(self) -> Self:
        began = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        self._prepare()
        self._log_start = self.log_file.stat().st_size if self.log_file.exists() else 0
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                start_new_session=True,  # a process group of its own: stop() ends all of it
                **self._popen_options(),
            )
        self._write_state()
        try:
            self._await_ready()
            self._after_start()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - began
        self._write_state()
        return self

    def _write_state(self) -> None:
        assert self.process is not None
        state = {"name": self.name, "pid": self.process.pid, "started_at": time.time(), **self._state()}
        (self.home / STATE_FILE).write_text(json.dumps(state, indent=1), encoding="utf-8")

    def _await_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = PortTakenError if self._port_was_taken() else ServerError
                raise error(
                    f"{self.name} stopped while starting (exit {self.process.returncode}); "
                    f"the end of {self.log_file}:\n{self.log_tail()}"
                )
            if self._ready():
                return
            time.sleep(0.25)
        raise ServerError(
            f"{self.name} did not answer within {self.start_timeout:.0f} s; "
            f"the end of {self.log_file}:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Stop the server (and every process it started); nothing happens if it is not running."""
        if self.process is None:
            return  # not started here (attach(): the server is another process's to stop)
        stop_process_group(self.process.pid, self.stop_signal)
        self.process = None
        with contextlib.suppress(OSError):
            (self.home / STATE_FILE).unlink()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @classmethod
    def attach(cls, directory: str | Path, *args: Any, **kwargs: Any) -> Self:
        """A client of the server already running under `directory` (started by another process,
        e.g. ``scripts/real_producers.sh start``): its helpers work, stop() does nothing."""
        server = cls(directory, *args, **kwargs)
        try:
            state = json.loads((server.home / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ServerError(f"no {cls.name} runs under {server.directory}") from exc
        if not alive(int(state.get("pid", 0))):
            raise ServerError(f"no {cls.name} runs under {server.directory}")
        for key, value in state.items():
            if key.endswith("port"):
                setattr(server, key, int(value))
        return server

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def stop_recorded(home: Path, first_signal: int = signal.SIGTERM) -> bool:
    """Stop the server whose state file is in `home` (started by any process): its process
    group, `first_signal` then SIGKILL. Whether it was running; the state file is removed."""
    path = home / STATE_FILE
    try:
        pid = int(json.loads(path.read_text(encoding="utf-8")).get("pid", 0))
    except (OSError, ValueError):
        return False
    running = pid > 0 and alive(pid)
    if running:
        stop_process_group(pid, first_signal)
    path.unlink(missing_ok=True)
    return running


def run_program(command: list[str], what: str, stdin: str | None = None, **options: Any) -> str:
    """Run a server's tool (initdb, psql, ...); its output, or ServerError with its error output."""
    result = subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=300, check=False, **options
    )
    if result.returncode != 0:
        raise ServerError(
            f"{what} failed (exit {result.returncode}): {(result.stderr or result.stdout).strip()}"
        )
    return result.stdout


def let_traverse(path: Path, uid: int, gid: int) -> None:
    """Let the OS user `uid` reach `path`: search permission (x, not read) for others on every
    ancestor that denies it (e.g. pytest's 0700 /tmp/pytest-of-<user>, which pytest restores at
    its next run); PostgreSQL runs as that user."""
    for directory in reversed(path.parents):
        mode = directory.stat()
        if (
            mode.st_mode & 0o001
            or (mode.st_uid == uid and mode.st_mode & 0o100)
            or (mode.st_gid == gid and mode.st_mode & 0o010)
        ):
            continue
        os.chmod(directory, mode.st_mode | 0o001)


def postgres_bin() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name)
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("postgres") or shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise ServerError(
        "PostgreSQL is not installed: run scripts/install_test_servers.sh (Debian's postgresql)."
    )


class Postgres(Server):
    """Debian's PostgreSQL under ``<directory>/postgres``, listening on 127.0.0.1:<port> and on a
    Unix socket in ``<directory>/postgres/socket``: superuser ``postgres`` (trust, socket only;
    TCP clients log in with a password, scram-sha-256), database `database`. When we are root it
    runs as the OS user ``postgres`` (PostgreSQL refuses root): the directory is given to it.
    Durability is off (fsync): a throwaway server for tests and trials."""

    name = "postgres"
    stop_signal = signal.SIGINT  # fast shutdown

    def __init__(self, directory: str | Path, database: str = "postgres") -> None:
        super().__init__(directory)
        self.database = database
        self.port = free_port()
        self.bin = postgres_bin()
        self._owner: tuple[int, int] | None = None
        if os.geteuid() == 0:
            import pwd

            try:
                entry = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ServerError("PostgreSQL cannot run as root and there is no OS user postgres.") from exc
            self._owner = (entry.pw_uid, entry.pw_gid)

    @property
    def socket_dir(self) -> Path:
        return self.home / "socket"

    def _as_owner(self) -> dict[str, Any]:
        if self._owner is None:
            return {}
        uid, gid = self._owner
        return {"user": uid, "group": gid, "extra_groups": [], "env": {**os.environ, "HOME": str(self.home)}}

    def _prepare(self) -> None:
        self.socket_dir.mkdir(exist_ok=True)
        if self._owner is not None:
            let_traverse(self.home, *self._owner)
            for path in [self.home, *self.home.rglob("*")]:
                os.chown(path, *self._owner)
        if not (self.home / "data" / "PG_VERSION").is_file():
            run_program(
                [
                    str(self.bin / "initdb"),
                    "--pgdata",
                    str(self.home / "data"),
                    "--username",
                    "postgres",
                    "--auth-local",
                    "trust",
                    "--auth-host",
                    "scram-sha-256",
                    "--encoding",
                    "UTF8",
                    "--no-locale",
                    "--no-sync",
                ],
                "initdb",
                cwd=self.home,
                **self._as_owner(),
            )

    def settings(self) -> dict[str, Any]:
        """The server's settings (``postgres --name=value``)."""
        return {
            "listen_addresses": LOOPBACK,
            "port": self.port,
            "unix_socket_directories": self.socket_dir,
            "timezone": "UTC",
            # A throwaway server: durability off, for speed.
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }

    def _command(self) -> list[str]:
        options = [f"--{key}={value}" for key, value in self.settings().items()]
        return [str(self.bin / "postgres"), "-D", str(self.home / "data"), *options]

    def _popen_options(self) -> dict[str, Any]:
        return self._as_owner()

    def _ready(self) -> bool:
        command = [str(self.bin / "pg_isready"), "-q", "-h", str(self.socket_dir), "-p", str(self.port)]
        return subprocess.run(command, check=False, timeout=30).returncode == 0

    def _after_start(self) -> None:
        if not self.sql(f"select 1 from pg_database where datname = '{self.database}'", database="postgres"):
            self.sql(f'create database "{self.database}"', database="postgres")

    def _state(self) -> dict[str, Any]:
        return {"port": self.port, "socket_dir": str(self.socket_dir), "database": self.database}

    def sql(self, statements: str, database: str | None = None) -> str:
        """Run SQL as the superuser (psql, stops at the first error, each statement committed on
        its own); the rows it returns, one a line, columns separated by ``|``."""
        command = [
            str(self.bin / "psql"),
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.socket_dir),
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database or self.database,
            "-f",
            "-",
        ]
        return run_program(command, "psql", stdin=statements).strip()
