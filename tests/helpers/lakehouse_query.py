"""Run one SQL query against a lakehouse in a process of its own and print its rows as JSON
(and, :func:`endpoint_rows`, query a running SQL endpoint).

The test session's Spark holds its own lakehouse's embedded metastore, so a test that
lands into another lakehouse (in subprocesses) reads it back through this module:
``python -m tests.helpers.lakehouse_query "select ..." ["select ..." ...]`` with
``$CDC_LAKEHOUSE_DIR`` set (and ``$DBT_TARGET`` for another target than the profile's
default): one line of JSON rows per query, in one Spark session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def query(lakehouse: Path, sql: str, timeout: float = 300) -> list[dict[str, Any]]:
    """The rows of `sql` on the lakehouse at `lakehouse` (a fresh Spark process)."""
    return queries(lakehouse, [sql], timeout)[0]


def queries(
    lakehouse: Path, sqls: list[str], timeout: float = 300, environment: Mapping[str, str] | None = None
) -> list[list[dict[str, Any]]]:
    """The rows of each query in `sqls`, run one after the other in one fresh Spark process
    (one Spark start for all of them), with the variables of `environment` besides (e.g.
    ``DBT_TARGET`` and what that target needs)."""
    env = {**os.environ, **(environment or {}), "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    result = subprocess.run(
        [sys.executable, "-m", "tests.helpers.lakehouse_query", *sqls],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"query failed ({result.returncode}): {sqls}\n{result.stderr[-3000:]}")
    return [json.loads(line) for line in result.stdout.splitlines()[-len(sqls) :]]


def endpoint_rows(port: int, sql: str, user: str = "analyst") -> list[tuple]:
    """The rows of `sql` from a SQL endpoint (HiveServer2) on 127.0.0.1:`port`, through a SQL
    client (PyHive), as an analyst queries it."""
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=port, username=user)
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        connection.close()


def main() -> None:
    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest.profile import target_spark_parameters

    spark = active_session(target_spark_parameters())
    for sql in sys.argv[1:]:
        rows = [row.asDict(recursive=True) for row in spark.sql(sql).collect()]
        print(json.dumps(rows, default=str))


if __name__ == "__main__":
    main()
