#!/usr/bin/env bash
# Real producers on 127.0.0.1 under DIR: PostgreSQL and MariaDB → Debezium (Kafka Connect
# standalone) → a Kafka broker (docs/real_producers.md, tests/helpers/real_servers.py).
#   scripts/real_producers.sh start DIR [--no-sample]   start in the background; print addresses and topics
#   scripts/real_producers.sh status DIR                exit 0 and print them when running
#   scripts/real_producers.sh stop DIR                  stop everything started under DIR
# Needs set-up (scripts/setup.sh), the servers' jars (resolve_jars --services) and the
# database servers (scripts/install_test_servers.sh); start does the last two when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup.sh
if [ "${1:-}" = start ]; then
  .venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --services >&2
  bash scripts/install_test_servers.sh >&2
fi
exec .venv/bin/python -m tests.helpers.real_servers "$@"
