#!/usr/bin/env bash
# Set up the peer benchmark (benchmarks/peer_auto_cdc.py): Apache Spark 4.3's own AUTO CDC.
# Kept apart from the project: its own venv, benchmarks/peer/.venv (pyspark 4.3.0 and what
# `pyspark.pipelines` imports, pinned in requirements.txt), and its own jar cache,
# $PEER_JARS_CACHE (default ~/.cache/cdc-lakehouse/peer-jars), filled from Maven Central by
# the pinned coordinates of jars.txt. Not part of scripts/setup.sh nor of .ci/run.
#
#     bash benchmarks/peer/setup.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${PEER_JARS_CACHE:-$HOME/.cache/cdc-lakehouse/peer-jars}/maven"
central="${PEER_MAVEN_REPO:-https://repo1.maven.org/maven2}"
python="${PYTHON:-python3.11}"

if [[ ! -x "$here/.venv/bin/python" ]]; then
  nice -n 19 "$python" -m venv "$here/.venv"
fi
nice -n 19 "$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --require-virtualenv -r "$here/requirements.txt"

mkdir -p "$cache"
grep -v '^\s*\(#\|$\)' "$here/jars.txt" | while read -r _format coordinate; do
  IFS=: read -r group artifact version classifier <<<"$coordinate"
  file="$artifact-$version${classifier:+-$classifier}.jar"
  url="$central/${group//.//}/$artifact/$version/$file"
  if [[ ! -s "$cache/$file" ]]; then
    echo "downloading $coordinate"
    curl -fsSL -o "$cache/$file.part" "$url"
    expected="$(curl -fsSL "$url.sha1" | cut -c1-40)"
    actual="$(sha1sum "$cache/$file.part" | cut -c1-40)"
    if [[ "$expected" != "$actual" ]]; then
      rm -f "$cache/$file.part"
      echo "checksum mismatch for $coordinate ($actual, Maven Central says $expected)" >&2
      exit 1
    fi
    mv "$cache/$file.part" "$cache/$file"
  fi
done
echo "peer set up: $here/.venv (pyspark $("$here/.venv/bin/python" -c 'import pyspark; print(pyspark.__version__)')), jars in $cache"
