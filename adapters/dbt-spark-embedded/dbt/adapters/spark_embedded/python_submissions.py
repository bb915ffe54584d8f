"""The ``session`` submission method for dbt Python models.

dbt-spark hands a Python model's compiled code (the model function, a
``dbtObj`` helper and the write code of ``py_write_table``) to a
"submission helper"; stock dbt-spark only has helpers that upload notebooks
to Databricks. This helper runs the code in the dbt process, against the
SparkSession that dbt-spark's ``session`` method has already started.
"""

from __future__ import annotations

import contextlib
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark_embedded.quiet import quiet_jvm_start
from dbt.adapters.spark_embedded.services import (
    ENGINE_USER,
    LAKEHOUSE_CONF,
    warm_engine_url,
    with_services,
)
from dbt_common.exceptions import DbtRuntimeError

# Settings a running Spark keeps as it started (catalogs, extensions): the warm engine's own.
_STATIC_PREFIXES = ("spark.sql.catalog", "spark.sql.extensions", "spark.sql.catalogImplementation")
_remote_sessions: dict[str, Any] = {}  # Spark Connect address -> this process's session there
_engine_of: dict[str, str] = {}  # lakehouse directory -> the warm engine this process uses for it


def active_session(server_side_parameters: dict[str, str], warm: bool = True) -> Any:
    """The process's SparkSession, made the JVM's active session for this thread.

    With `warm` (the default), a session of a local-mode lakehouse whose warm engine runs
    (its SQL endpoint's Spark, serving Spark Connect: services.warm_engine_url) is a Spark
    Connect session there, unless this process already runs a Spark of its own: no Spark
    starts in this process. Otherwise the process's own Spark, started with the profile's
    settings if it does not exist yet (the lakehouse's metastore service started first if
    need be).

    dbt runs each node in a worker thread; the JVM keeps the active session per
    thread, and Iceberg's ``createOrReplace`` from a thread without one fails
    with ``LOCATION_ALREADY_EXISTS``.
    """
    remote = warm_engine_for(server_side_parameters) if warm else None
    if remote is not None:
        _engine_of[server_side_parameters[LAKEHOUSE_CONF]] = remote
        return remote_session(remote, server_side_parameters)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.enableHiveSupport()
    for key, value in with_services(server_side_parameters).items():
        builder = builder.config(key, value)
    with quiet_jvm_start():
        spark = builder.getOrCreate()
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)
    spark._jvm.SparkSession.setDefaultSession(spark._jsparkSession)
    return spark


def warm_engine_for(server_side_parameters: dict[str, str]) -> str | None:
    """The Spark Connect address a session with these settings uses: that of the lakehouse's
    warm engine when the settings are a local-mode lakehouse's (not a cluster's), the engine
    runs, and this process has no Spark of its own (which keeps serving it). Once a session
    of the process runs there, the process keeps that engine for the lakehouse: a build never
    changes engines half-way."""
    lakehouse = server_side_parameters.get(LAKEHOUSE_CONF)
    if not lakehouse or not server_side_parameters.get("spark.master", "local").startswith("local"):
        return None
    if lakehouse in _engine_of:  # decided: the process keeps its engine
        return _engine_of[lakehouse]
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        return None
    return warm_engine_url(lakehouse)


def remote_session(url: str, server_side_parameters: dict[str, str]) -> Any:
    """This process's Spark Connect session at `url`, with the session settings of
    `server_side_parameters` that a running Spark takes (time zone, ANSI mode, shuffle
    partitions...), set once."""
    session = _remote_sessions.get(url)
    if session is None:
        from pyspark.sql import SparkSession

        # create, not getOrCreate: that would hand back any session of the process, of any
        # engine (a process may reach several lakehouses).
        session = SparkSession.builder.remote(f"{url}/;user_id={ENGINE_USER}").create()
        settings = {
            key: value
            for key, value in server_side_parameters.items()
            if key.startswith("spark.sql.") and not key.startswith(_STATIC_PREFIXES)
        }
        for key, value in settings.items():
            # A static one (the warehouse's location...) is the engine's already: it refuses it.
            with contextlib.suppress(Exception):
                session.conf.set(key, value)
        _remote_sessions[url] = session
    return session


def is_remote(spark: Any) -> bool:
    """Whether `spark` is a Spark Connect session (no JVM in this process)."""
    return not hasattr(spark, "_jsparkSession")


def remote_url(spark: Any) -> str | None:
    """The warm engine's address (`sc://127.0.0.1:PORT`) of a session :func:`active_session`
    gave there; None for a session of this process's own Spark."""
    for url, session in _remote_sessions.items():
        if session is spark:
            return url
    return None


class SessionPythonJobHelper(PythonJobHelper):
    """Runs a compiled dbt Python model in-process (``submission_method: session``)."""

    def __init__(self, parsed_model: dict, credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        if credentials.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"Python model {parsed_model.get('alias')!r}: submission method 'session' runs "
                f"models inside the dbt process and needs `method: session` in the profile "
                f"(this target uses `method: {credentials.method}`). Use the local or cluster target."
            )

    def submit(self, compiled_code: str) -> None:
        spark = active_session(self.credentials.server_side_parameters)
        name = f"{self.parsed_model.get('schema')}.{self.parsed_model.get('alias')}"
        code = compile(compiled_code, f"<dbt python model {name}>", "exec")
        exec(code, {"spark": spark, "__name__": f"dbt_python_model_{self.parsed_model.get('alias')}"})
