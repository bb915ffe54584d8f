#!/usr/bin/env bash
# The main job on the bundled sample data: set up, land the producers' sample
# messages into bronze, dbt build, dbt docs generate, print a summary.
# State goes to $CDC_LAKEHOUSE_DIR (default ./lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# sample_data/<format>/<container>/ holds the messages of one producer format
# in one container (see sample_data/README.md).
for dir in sample_data/*/*/; do
  dir=${dir%/}
  container=$(basename "$dir")
  format=$(basename "$(dirname "$dir")")
  .venv/bin/python -m python_ingest land --format "$format" --container "$container" "$dir"
done

# Generated CES traffic (several tables, split events, redeliveries, out-of-order
# partitions): the same seed gives the same files, so a re-run lands nothing new.
generated="${CDC_LAKEHOUSE_DIR:-lakehouse}/generated/ces"
.venv/bin/python -m python_ingest generate --format ces --changes 300 --seed 7 "$generated"
.venv/bin/python -m python_ingest land --format ces --container jsonl "$generated"/partition-*.jsonl

# Generated Debezium traffic: SQL Server and PostgreSQL connectors as kcat dumps
# (keys, headers, tombstones), MySQL and a schemaless PostgreSQL table as
# Kafka Connect S3-sink JSON lines (types declared in seeds/cdc_declared_columns.csv).
generated="${CDC_LAKEHOUSE_DIR:-lakehouse}/generated/debezium"
.venv/bin/python -m python_ingest generate --format debezium --changes 300 --seed 7 "$generated"
.venv/bin/python -m python_ingest land --format debezium --container kcat "$generated"/kcat
.venv/bin/python -m python_ingest land --format debezium --container jsonl "$generated"/jsonl

# Generated DataWorks traffic: update pairs and single updates, heartbeats,
# transaction markers, an ALTER and a TRUNCATE, tables keyed by rowid.
generated="${CDC_LAKEHOUSE_DIR:-lakehouse}/generated/dataworks"
.venv/bin/python -m python_ingest generate --format dataworks --changes 200 --seed 7 "$generated"
.venv/bin/python -m python_ingest land --format dataworks --container jsonl "$generated"/partition-*.jsonl

# Generated Qlik Replicate traffic: atMSG metadata and data messages and bare data
# messages, REFRESH rows then CDC, a table version change, LOBs left out by columnMask,
# round-robin partitions (data may land before its metadata).
generated="${CDC_LAKEHOUSE_DIR:-lakehouse}/generated/qlik"
.venv/bin/python -m python_ingest generate --format qlik --changes 200 --seed 7 "$generated"
.venv/bin/python -m python_ingest land --format qlik --container jsonl "$generated"/partition-*.jsonl

.venv/bin/dbt build
.venv/bin/dbt docs generate
.venv/bin/dbt run-operation lakehouse_summary
echo
echo "Docs: .venv/bin/dbt docs serve   (or open target/index.html)"
echo "SQL:  .venv/bin/python -m python_ingest lakehouse start   (then jdbc:hive2://127.0.0.1:${CDC_SQL_PORT:-10000}/default,"
echo "      e.g. PATH=\"$PWD/.venv/bin:\$PATH\" beeline -u jdbc:hive2://127.0.0.1:${CDC_SQL_PORT:-10000}/default;"
echo "      docs/lakehouse.md, \"Query with SQL\")"
echo "The lakehouse's metastore service runs in the background while processes use it and stops by"
echo "itself after an idle hour (or: .venv/bin/python -m python_ingest lakehouse stop)."
