#!/usr/bin/env bash
# Set up the project on a machine that has Python 3.11 and Java 17:
# a virtual environment at .venv/ with the exact pins of requirements.txt, the
# in-repo dbt adapter plugin (adapters/dbt-spark-embedded), and the jars the
# platform needs beyond pyspark's, by Maven coordinate, in a local jar cache.
# Idempotent: a second run with nothing changed only checks the stamp.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "setup: $*" >&2; exit 1; }

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      PYTHON=$candidate; break
    fi
  done
fi
[ -n "$PYTHON" ] || die "Python 3.11 is required (set PYTHON=/path/to/python3.11)."
command -v java >/dev/null 2>&1 || die "Java 17 is required for Spark (no 'java' on PATH)."
java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
[ "${java_major:-0}" -ge 17 ] || die "Java 17 is required for Spark (found version ${java_major:-unknown})."
# A JDK, not only a runtime: set-up compiles the lakehouse's own SQL functions (adapters/dbt-spark-embedded,
# functions.py).
command -v javac >/dev/null 2>&1 || [ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ] ||
  die "A Java 17 JDK is required: set-up compiles the lakehouse's SQL functions with javac (none found)."

# pip, quiet; drop the warnings some machines' pip configuration prints for
# local package folders that do not exist.
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@" 2>&1 |
    { grep -v "^WARNING: Location 'file:" || true; }
  return "${PIPESTATUS[0]}"
}

stamp_source() {
  cat requirements.txt
  find adapters -type f \( -name '*.py' -o -name '*.sql' -o -name '*.yml' -o -name '*.toml' -o -name '*.java' -o -name '*.properties' \) \
    -not -path '*/build/*' -not -path '*.egg-info*' | LC_ALL=C sort | xargs cat
}
want=$(stamp_source | sha256sum | cut -d' ' -f1)
stamp=.venv/.setup-stamp
# The jars beyond pyspark's own, by pinned Maven coordinate (adapters/dbt-spark-embedded,
# jars.py): resolved once into $CDC_JARS_CACHE (default ~/.cache/cdc-lakehouse/jars);
# a coordinate already there is not fetched again.
resolve_jars() {
  .venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars || die "the jars could not be resolved (see above)."
  archive_classes
}
# Class-data-sharing archives of the Spark driver's and the metastore service's classes
# (adapters/dbt-spark-embedded, class_archive.py): made once per machine (about a minute) from
# one real session, so that every JVM the lakehouse starts loads its classes sooner. Without
# them everything works, only each Spark starts slower.
archive_classes() {
  .venv/bin/python -m dbt.adapters.spark_embedded.archive_classes ||
    echo "setup: no class archives (see above): each Spark start takes longer; nothing else changes." >&2
}

if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  resolve_jars
  echo "setup: .venv is up to date"
  exit 0
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
echo "setup: installing pinned requirements into .venv (the first run builds pyspark; a few minutes)"
pip_install -r requirements.txt
echo "setup: installing the dbt adapter plugin spark_embedded"
rm -rf adapters/dbt-spark-embedded/build
pip_install --no-deps --force-reinstall ./adapters/dbt-spark-embedded
rm -rf adapters/dbt-spark-embedded/build adapters/dbt-spark-embedded/*.egg-info
resolve_jars
echo "$want" > "$stamp"
echo "setup: done"
