#!/usr/bin/env bash
# Set up, then run the whole test suite: ruff, sqlfluff (Spark-free), pytest
# (unit and end-to-end: real land + dbt build on the embedded lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The servers of the real-producer test (tests/e2e/test_real_servers.py): Kafka, Kafka Connect
# with Debezium (jars by pinned coordinate, docs/real_producers.md); and the S3A connector of the
# object-store test (tests/e2e/test_object_store.py, docs/lakehouse.md).
.venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --services --object-store ||
  { echo "test: the servers' jars could not be resolved (see above)." >&2; exit 1; }
# The object store of tests/e2e/test_object_store.py: SeaweedFS, built from its pinned Go module
# (the first time, several minutes). Under CI a failed install stops here, and that test fails
# rather than skips.
if ! bash scripts/install_object_store.sh; then
  [ "${CDC_REQUIRE_REAL_SERVERS:-}" != 1 ] || { echo "test: the object store is required." >&2; exit 1; }
  echo "test: without the object store, tests/e2e/test_object_store.py skips." >&2
fi

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== sqlfluff"
.venv/bin/sqlfluff lint models tests/dbt --processes 2

echo "== pytest"
# PostgreSQL and MariaDB for the real-producer test (Debian packages; the test skips without them).
# Under CI (.ci/run sets CDC_REQUIRE_REAL_SERVERS=1) a failed install stops here, and those
# tests fail rather than skip.
if ! bash scripts/install_test_servers.sh; then
  [ "${CDC_REQUIRE_REAL_SERVERS:-}" != 1 ] || { echo "test: PostgreSQL and MariaDB are required." >&2; exit 1; }
  echo "test: without PostgreSQL and MariaDB, the real-producer tests skip." >&2
fi
# Which kind of machine this run had: the suite's time depends on it (docs/testing.md).
.venv/bin/python benchmarks/machine_speed.py
.venv/bin/pytest "$@"
