#!/usr/bin/env bash
# The main job on the bundled sample data: set up, generate traffic, land the producers' sample
# and generated messages into bronze and build silver and gold (one `pipeline --once` process),
# dbt docs generate, then the lakehouse's status (python -m python_ingest status: per producer
# and table, the messages and what became of them).
# State goes to $CDC_LAKEHOUSE_DIR (default ./lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# sample_data/<format>/<container>/ holds the messages of one producer format
# in one container (see sample_data/README.md).
sources=()
for dir in sample_data/*/*/; do
  dir=${dir%/}
  sources+=(--source "$(basename "$(dirname "$dir")"):$(basename "$dir"):$dir")
done

# Generated traffic of every producer in the registry that has a generator
# (cdc_tools/generators/<format>_traffic.py: CES split events, Debezium kcat dumps and
# S3-sink files, DataWorks update pairs and DDL, Qlik metadata and bare data messages,
# with redeliveries): the same seed gives the same files, so a re-run lands nothing new.
generated="${CDC_LAKEHOUSE_DIR:-lakehouse}/generated"
for format in $(.venv/bin/python -c 'from cdc_tools.generators import generated_producers as g; print(*g())'); do
  .venv/bin/python -m python_ingest generate --format "$format" --changes 250 --seed 7 "$generated/$format"
done
mapfile -t -O "${#sources[@]}" sources < <(.venv/bin/python -c \
  'import sys, pathlib; from cdc_tools.generators import land_sources; print(*land_sources(pathlib.Path(sys.argv[1])), sep="\n")' \
  "$generated")

# Land all of it and build silver and gold in one warm process (docs/pipeline.md): the same
# `dbt build` as `.venv/bin/dbt build`, one Spark start for landing and building.
.venv/bin/python -m python_ingest pipeline --once "${sources[@]}"
.venv/bin/dbt docs generate
echo "Docs: .venv/bin/dbt docs serve   (or open target/index.html)"
echo "SQL:  .venv/bin/python -m python_ingest lakehouse start   (then jdbc:hive2://127.0.0.1:${CDC_SQL_PORT:-10000}/default,"
echo "      e.g. PATH=\"$PWD/.venv/bin:\$PATH\" beeline -u jdbc:hive2://127.0.0.1:${CDC_SQL_PORT:-10000}/default;"
echo "      docs/lakehouse.md, \"Query with SQL\")"
echo "The lakehouse's metastore service runs in the background while processes use it and stops by"
echo "itself after an idle hour (or: .venv/bin/python -m python_ingest lakehouse stop)."
echo
# What the lakehouse now holds: per producer and table, the messages and what became of them.
.venv/bin/python -m python_ingest status
