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

from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, spark_parameters
from dbt.adapters.spark_embedded.services import ServiceError, acquire_build_lock, with_services
from dbt.flags import get_flags
from dbt_common.exceptions import DbtRuntimeError

ADAPTER_TYPE = "spark_embedded"
WRITING_COMMANDS = ("build", "run", "seed", "snapshot")  # one at a time per lakehouse


@dataclass
class SparkEmbeddedCredentials(SparkCredentials):
    lakehouse_dir: str | None = None
    iceberg_jar: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method != SparkConnectionMethod.SESSION:
            return  # a remote server (thrift, http, odbc) has its own jars and paths
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
        # `method` too: macros read `target.method` (session: Spark runs in this process, and
        # the adapter can read Iceberg's API directly), and dbt-spark's keys leave it out.
        return (*super()._connection_keys(), "method", "lakehouse_dir", "iceberg_jar")


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
                    # Before Spark starts: a second build fails at once (see hold_build_lock).
                    acquire_build_lock(credentials.lakehouse_dir, command)
                credentials.server_side_parameters = with_services(credentials.server_side_parameters)
            except ServiceError as exc:
                raise DbtRuntimeError(str(exc)) from exc
        return super().open(connection)
