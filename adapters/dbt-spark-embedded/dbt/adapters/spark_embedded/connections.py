"""Credentials and connection manager of the ``spark_embedded`` adapter type.

Everything is dbt-spark's (``method: session`` and the others); the only
additions are two optional profile fields, resolved into Spark settings
before the session starts:

``lakehouse_dir``  directory holding warehouse, metastore database and
                   services (absolute paths are derived from it); a session
                   of it starts after its metastore service. A target that
                   names its warehouse and metastore (``cluster``) keeps only
                   landing checkpoints and the build lock there, and starts
                   no metastore
``iceberg_jar``    path of the Iceberg runtime jar; empty means
                   ``$CDC_ICEBERG_JAR`` or the pinned coordinate's jar from the
                   jar cache (jars.py)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark.session import Connection as SessionConnection
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, check_lakehouse, spark_parameters
from dbt.adapters.spark_embedded.python_submissions import active_session, is_remote
from dbt.adapters.spark_embedded.services import ServiceError, acquire_build_lock, with_services
from dbt.flags import get_flags
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import AnalysisException

ADAPTER_TYPE = "spark_embedded"
WRITING_COMMANDS = ("build", "run", "seed", "snapshot")  # one at a time per lakehouse
# dbt commands that never start a Spark session: they need no lakehouse directory.
NO_SESSION_COMMANDS = ("parse", "list", "ls", "deps", "clean", "init", "serve")
REFUSAL_EXIT = 2  # dbt's own exit status for an error


class LakehouseRefusal(DbtRuntimeError):
    """An operator mistake stated in one line (dbt's errors print as nested "Runtime Error"
    lines)."""

    def __str__(self) -> str:
        return self.msg


def refuse(message: str) -> NoReturn:
    """Stop the dbt command with one line. On dbt's command line the line is all it prints
    after dbt's version banner (dbt would add "Encountered an error:" and nest it), and the
    process exits 2 at once: nothing has started yet. In-process (dbtRunner) it raises."""
    if os.path.basename(sys.argv[0]) == "dbt":
        sys.stdout.flush()
        print(f"error: {message}", file=sys.stderr, flush=True)
        os._exit(REFUSAL_EXIT)
    raise LakehouseRefusal(message)


def check_command(lakehouse_dir: str, command: str | None) -> None:
    """What the dbt command `command` needs of the lakehouse, checked when the profile is read:
    before dbt parses the project, and long before Spark or the metastore service start. A
    command that starts a session needs an existing, writable lakehouse (only `land` creates
    one); a build, run, seed or snapshot takes the build lock here, so a second one is refused
    within a second or two (services.acquire_build_lock)."""
    if command is None or command in NO_SESSION_COMMANDS:
        return
    try:
        check_lakehouse(lakehouse_dir)
        if command in WRITING_COMMANDS:
            acquire_build_lock(lakehouse_dir, command)
    except (LakehouseConfigError, ServiceError) as exc:
        refuse(str(exc))


@dataclass
class SparkEmbeddedCredentials(SparkCredentials):
    lakehouse_dir: str | None = None
    iceberg_jar: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method != SparkConnectionMethod.SESSION:
            return  # a remote server (thrift, http, odbc) has its own jars and paths
        if self.lakehouse_dir:
            check_command(self.lakehouse_dir, getattr(get_flags(), "WHICH", None))
        try:
            self.server_side_parameters = spark_parameters(
                self.server_side_parameters, self.lakehouse_dir, self.iceberg_jar
            )
        except LakehouseConfigError as exc:
            raise DbtRuntimeError(str(exc)) from exc

    @property
    def type(self) -> str:
        return ADAPTER_TYPE

    def _connection_keys(self) -> tuple[str, ...]:
        # These keys are what Jinja sees of the credentials (`target.<key>`), and what dbt hashes
        # to tell whether its saved parse still holds. `method` too: macros read `target.method`
        # (session: Spark runs in this process, and the adapter can read Iceberg's API
        # directly), and dbt-spark's keys leave it out. Not `lakehouse_dir` or `iceberg_jar`:
        # no macro reads them, and in the hash they made dbt parse the whole project again
        # (about 4 s) whenever a command ran on another lakehouse than the one before.
        return (*super()._connection_keys(), "method")


class SparkEmbeddedConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """A session of a lakehouse directory starts after its metastore service (started if
        none answers), so that every process shares one metastore."""
        credentials = connection.credentials
        if credentials.method == SparkConnectionMethod.SESSION:
            try:
                command = getattr(get_flags(), "WHICH", None)
                if credentials.lakehouse_dir and command in WRITING_COMMANDS:
                    # Taken when the profile was read (check_command); held for the process.
                    acquire_build_lock(credentials.lakehouse_dir, command)
                credentials.server_side_parameters = with_services(credentials.server_side_parameters)
            except ServiceError as exc:
                raise LakehouseRefusal(str(exc)) from exc
            # Spark starts here, not at the first query (dbt-spark's cursor), so that its JVM
            # starts without its banner (quiet.py); the cursor's getOrCreate finds this session.
            # Or the lakehouse's warm engine answers, and no Spark starts in this process.
            spark = active_session(credentials.server_side_parameters)
            if is_remote(spark):
                connection = super().open(connection)
                connection.handle = SessionConnectionWrapper(WarmConnection(spark))
                return connection
        return super().open(connection)


class WarmCursor(Cursor):
    """dbt-spark's session cursor on a given Spark Connect session (its own builds a session
    of the process's Spark at every statement)."""

    def __init__(self, spark: Any) -> None:
        super().__init__()
        self._spark = spark

    def execute(self, sql: str, *parameters: Any) -> None:
        if parameters:
            sql = sql % parameters
        try:
            self._df = self._spark.sql(sql)
        except AnalysisException as exc:
            raise DbtRuntimeError(str(exc)) from exc


class WarmConnection(SessionConnection):
    """A session connection whose cursors run on the lakehouse's warm engine."""

    def __init__(self, spark: Any) -> None:
        super().__init__()
        self._spark = spark

    def cursor(self) -> WarmCursor:
        return WarmCursor(self._spark)
