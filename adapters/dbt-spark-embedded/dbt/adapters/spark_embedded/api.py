"""The adapter's public API: what the project's own Python (landing, the continuous pipeline,
the cluster target, the CLI, the benchmarks) may use of the lakehouse's session and services.

Everything else in this package is the adapter's own and may change with it; the import test
(tests/unit/test_imports.py) holds the project's packages to this module.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark_embedded.impl import SparkEmbeddedAdapter
from dbt.adapters.spark_embedded.jars import (
    JarsNotResolvedError,
    beyond_spark,
    jar_paths,
    service_classpath,
)
from dbt.adapters.spark_embedded.lakehouse import LakehouseConfigError, check_lakehouse, spark_parameters
from dbt.adapters.spark_embedded.python_submissions import active_session, remote_url
from dbt.adapters.spark_embedded.services import (
    ENGINE_USER,
    LOOPBACK,
    OBJECT_STORE_SCHEME,
    ServiceError,
    acquire_build_lock,
    answers,
    hadoop_site,
    is_alive,
    jdbc_url,
    metastore_command,
    metastore_state,
    object_store_classpath,
    release_build_lock,
    services_dir,
    spark_jars_dir,
    sql_endpoint_state,
    start_sql_endpoint,
    stop_services,
)


def iceberg_table(name: str) -> Any:
    """Iceberg's Table object of the table `name` in the active session (no job runs)."""
    return SparkEmbeddedAdapter._iceberg_table(name)


__all__ = [
    "ENGINE_USER",
    "LOOPBACK",
    "OBJECT_STORE_SCHEME",
    "JarsNotResolvedError",
    "LakehouseConfigError",
    "ServiceError",
    "acquire_build_lock",
    "active_session",
    "answers",
    "beyond_spark",
    "check_lakehouse",
    "hadoop_site",
    "iceberg_table",
    "is_alive",
    "jar_paths",
    "jdbc_url",
    "metastore_command",
    "metastore_state",
    "object_store_classpath",
    "release_build_lock",
    "remote_url",
    "service_classpath",
    "services_dir",
    "spark_jars_dir",
    "spark_parameters",
    "sql_endpoint_state",
    "start_sql_endpoint",
    "stop_services",
]
