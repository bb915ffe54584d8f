#!/usr/bin/env bash
# The real-producer demo, one command: real PostgreSQL and MariaDB, Debezium (Kafka Connect) and a
# Kafka broker on 127.0.0.1 under DIR; a scripted workload in both databases; land --kafka;
# dbt build; then gold.cdc_current compared with every database table (tests/helpers/real_pipeline.py,
# docs/real_producers.md). The servers stop before the build; the lakehouse stays in DIR/lakehouse.
#   scripts/real_producers_demo.sh [DIR]     (default: a new directory under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d /tmp/real-producers.XXXXXX)}
bash scripts/setup.sh >&2
.venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --services >&2
bash scripts/install_test_servers.sh >&2
exec .venv/bin/python -m tests.helpers.real_pipeline "$dir"
