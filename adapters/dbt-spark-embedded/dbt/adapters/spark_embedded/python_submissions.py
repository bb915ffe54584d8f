"""The ``session`` submission method for dbt Python models.

dbt-spark hands a Python model's compiled code (the model function, a
``dbtObj`` helper and the write code of ``py_write_table``) to a
"submission helper"; stock dbt-spark only has helpers that upload notebooks
to Databricks. This helper runs the code in the dbt process, against the
SparkSession that dbt-spark's ``session`` method has already started.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark_embedded.quiet import quiet_jvm_start
from dbt.adapters.spark_embedded.services import with_services
from dbt_common.exceptions import DbtRuntimeError


def active_session(server_side_parameters: dict[str, str]) -> Any:
    """The process's SparkSession (started with the profile's settings if it
    does not exist yet, the lakehouse's metastore service started first if need
    be), made the JVM's active session for this thread.

    dbt runs each node in a worker thread; the JVM keeps the active session per
    thread, and Iceberg's ``createOrReplace`` from a thread without one fails
    with ``LOCATION_ALREADY_EXISTS``.
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.enableHiveSupport()
    for key, value in with_services(server_side_parameters).items():
        builder = builder.config(key, value)
    with quiet_jvm_start():
        spark = builder.getOrCreate()
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)
    spark._jvm.SparkSession.setDefaultSession(spark._jsparkSession)
    return spark


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
