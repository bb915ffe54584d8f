#!/usr/bin/env bash
# Set up, then run the whole test suite: ruff, sqlfluff (Spark-free), pytest
# (unit and end-to-end: real land + dbt build on the embedded lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."

# What needs neither .venv nor the rest runs beside set-up and the linters (docs/testing.md,
# "Set-up beside the linters"): the object store of tests/e2e/test_object_store.py (SeaweedFS,
# built from its pinned Go module: the first time several minutes) and PostgreSQL and MariaDB
# for the real-producer tests (Debian packages) start first; the servers' jars once .venv is
# there. Each writes its output to a log of its own, shown when it has ended.
side_logs=$(mktemp -d)
# On an early exit (a failed set-up step) these still end before this script does.
trap 'wait; rm -rf "$side_logs"' EXIT
beside() {  # NAME COMMAND...: start COMMAND in the background; its pid in beside_pid_NAME
  local name=$1
  shift
  "$@" >"$side_logs/$name.log" 2>&1 &
  printf -v "beside_pid_$name" '%s' "$!"
}
ended() {  # NAME: wait for the command NAME, show its output, return its exit code
  local pid_var="beside_pid_$1" code=0
  wait "${!pid_var}" || code=$?
  cat "$side_logs/$1.log"
  return "$code"
}
beside object_store bash scripts/install_object_store.sh
beside test_servers bash scripts/install_test_servers.sh

bash scripts/setup.sh
# The servers of the real-producer test (tests/e2e/test_real_servers.py): Kafka, Kafka Connect
# with Debezium (jars by pinned coordinate, docs/real_producers.md); and the S3A connector of the
# object-store test (tests/e2e/test_object_store.py, docs/lakehouse.md).
beside jars .venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --services --object-store

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== sqlfluff"
.venv/bin/sqlfluff lint models tests/dbt --processes 2

echo "== what ran beside set-up"
ended jars || { echo "test: the servers' jars could not be resolved (see above)." >&2; exit 1; }
# Under CI (.ci/run sets CDC_REQUIRE_REAL_SERVERS=1) a failed install stops here, and the tests
# that need it fail rather than skip.
if ! ended object_store; then
  [ "${CDC_REQUIRE_REAL_SERVERS:-}" != 1 ] || { echo "test: the object store is required." >&2; exit 1; }
  echo "test: without the object store, tests/e2e/test_object_store.py skips." >&2
fi
if ! ended test_servers; then
  [ "${CDC_REQUIRE_REAL_SERVERS:-}" != 1 ] || { echo "test: PostgreSQL and MariaDB are required." >&2; exit 1; }
  echo "test: without PostgreSQL and MariaDB, the real-producer tests skip." >&2
fi

echo "== pytest"
# Which kind of machine this run had: the suite's time depends on it (docs/testing.md).
.venv/bin/python benchmarks/machine_speed.py
.venv/bin/pytest "$@"
