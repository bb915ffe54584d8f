#!/usr/bin/env bash
# Set up, then run the whole test suite: ruff, sqlfluff (Spark-free), pytest
# (unit and end-to-end: real land + dbt build on the embedded lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== sqlfluff"
.venv/bin/sqlfluff lint models tests/dbt --processes 2

echo "== pytest"
.venv/bin/pytest "$@"
