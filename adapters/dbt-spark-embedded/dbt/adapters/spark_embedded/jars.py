"""The jars the platform needs beyond pyspark's own, by pinned Maven coordinate.

`COORDINATES` names each one. Set-up (`scripts/setup.sh`) runs
``python -m dbt.adapters.spark_embedded.resolve_jars``, which resolves every coordinate with
Spark's own resolver (Apache Ivy, the machinery behind `spark.jars.packages`), with its
transitive dependencies and their checksums, from the local Maven repository
(`~/.m2/repository`), then `$CDC_MAVEN_REPOSITORIES` (comma-separated URLs, e.g. a
mirror), then Maven Central, into a fixed cache directory: `$CDC_JARS_CACHE`, default
`~/.cache/cdc-lakehouse/jars`. It records each coordinate's jar files in
`resolved.json` there. At run time :func:`jar_paths` reads that record: no network and
no resolution when Spark starts.

A machine without a network takes the cache directory of a machine that has run
set-up (copy it, or point `$CDC_JARS_CACHE` at a shared copy), or a local Maven
repository holding the coordinates (`mvn dependency:get -Dartifact=<coordinate>`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

# Apache Iceberg's Spark runtime for Spark 4.0 / Scala 2.13 (one shaded jar).
COORDINATES = {
    "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.2",
    # Spark's Kafka source, for `land --kafka` (with kafka-clients). The 4.0.x patch releases
    # after 4.0.0 lack their spark-token-provider-kafka dependency on the Maven mirror these
    # machines reach; Spark keeps the data source API stable within 4.0, so 4.0.0 serves 4.0.5.
    "kafka": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0",
    # Hive's LLAP classes, which Hive's function registry names when it first loads (its
    # get_splits function). Spark 4 no longer ships the jar, and the SQL endpoint loads that
    # registry when a session closes on a thread that has not used Hive yet: the client's
    # CloseSession then failed with NoClassDefFoundError LlapSigner$Signable, now and then.
    # Only the artifact's own jar is used (artifact_jar): its dependencies are Hive 2.3's and
    # Hadoop's, which pyspark has in its own versions.
    "hive-llap-common": "org.apache.hive:hive-llap-common:2.3.10",
}
CACHE_ENV = "CDC_JARS_CACHE"
REPOSITORIES_ENV = "CDC_MAVEN_REPOSITORIES"
MANIFEST = "resolved.json"

# Not the platform's: the servers of the real-producer end-to-end test (tests/helpers/real_servers.py,
# docs/real_producers.md) and of the loopback Spark cluster (cdc_cluster/standalone.py), resolved only
# by ``resolve_jars --services``. One group is one class path, so each is one comma-separated
# `spark.jars.packages` list, resolved together (one version of every shared dependency).
# Debezium 3.5.0.Final is the newest release that has both the PostgreSQL and the MariaDB
# connector; it is built against Kafka 4.1.1 for Java 17, so broker, clients and Connect are
# Kafka 4.1.1. log4j-slf4j2-impl (the log4j 2 version Kafka 4.1.1 uses) makes the servers log
# through log4j 2 instead of dropping their log.
SERVICE_COORDINATES = {
    "kafka-broker": "org.apache.kafka:kafka_2.13:4.1.1,org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "kafka-connect-debezium": ",".join(
        (
            "org.apache.kafka:connect-runtime:4.1.1",
            "io.debezium:debezium-connector-postgres:3.5.0.Final",
            "io.debezium:debezium-connector-mariadb:3.5.0.Final",
            "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
        )
    ),
    # The JDBC driver of the loopback cluster's metastore database (cdc_cluster/standalone.py):
    # the metastore service keeps its tables in a real PostgreSQL server there.
    "metastore-postgresql": "org.postgresql:postgresql:42.7.14",
}

# A warehouse on an S3-compatible object store (docs/lakehouse.md, "The warehouse on an object
# store"): Hadoop's S3A connector, in the Hadoop version pyspark 4.0.5 ships (hadoop-client 3.4.1;
# the connector must match it), with its one dependency, the AWS SDK v2 bundle (about 560 MB).
# The metastore service needs a Hadoop file system for every table location it registers (Hive
# 2.3 checks and creates the table's directory), so Iceberg's tables use it too (HadoopFileIO),
# and one AWS SDK is on the class path. Resolved only by ``resolve_jars --object-store`` (which
# scripts/test.sh runs): a lakehouse on a local directory never needs it.
OBJECT_STORE_COORDINATES = {"s3a": "org.apache.hadoop:hadoop-aws:3.4.1"}

# Runs in a process of its own: launching Spark's JVM with `spark.jars.packages` makes
# spark-submit resolve them (and only then); it leaves the resolved jars in `spark.jars`.
RESOLVE = """
import json, sys
from pyspark import SparkConf
from pyspark.java_gateway import launch_gateway
coordinate, ivy, repositories = sys.argv[1:4]
conf = SparkConf().set("spark.jars.packages", coordinate).set("spark.jars.ivy", ivy)
if repositories:
    conf.set("spark.jars.repositories", repositories)
gateway = launch_gateway(conf)
jars = gateway.jvm.java.lang.System.getProperty("spark.jars") or ""
print("RESOLVED " + json.dumps([j.removeprefix("file:") for j in jars.split(",") if j]))
gateway.shutdown()
"""


class JarsNotResolvedError(RuntimeError):
    """A coordinate that set-up has not resolved into the cache, or that cannot be resolved."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "cdc-lakehouse" / "jars").resolve()


def spark_jars_dir() -> Path:
    """pyspark's own jars (Spark, Hive, Derby...), which every JVM of the lakehouse runs on."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _manifest() -> dict[str, list[str]]:
    path = cache_dir() / MANIFEST
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def _cached(coordinate: str) -> list[str] | None:
    paths = _manifest().get(coordinate)
    return paths if paths and all(os.path.isfile(p) for p in paths) else None


def _resolved(coordinate: str, what: str, step: str) -> list[str]:
    """The cached jar files of `coordinate`, or JarsNotResolvedError naming `what` it is and the
    set-up `step` that fetches it."""
    paths = _cached(coordinate)
    if paths is None:
        raise JarsNotResolvedError(
            f"The {what} is not in the jar cache {cache_dir()}: run {step}, which fetches it from "
            f"Maven Central (or set {CACHE_ENV} to a cache made on another machine)."
        )
    return paths


def jar_paths(name: str) -> list[str]:
    """The jar files of `COORDINATES[name]` and its dependencies, from the cache."""
    return _resolved(COORDINATES[name], f"jar {COORDINATES[name]}", "scripts/setup.sh")


def artifact_jar(name: str) -> str:
    """The jar of the artifact `COORDINATES[name]` names, without its dependencies, from the
    cache (Ivy names it `<group>_<artifact>-<version>.jar`)."""
    group, artifact, version = COORDINATES[name].split(":")
    wanted = f"{group}_{artifact}-{version}.jar"
    for path in jar_paths(name):
        if os.path.basename(path) == wanted:
            return path
    raise JarsNotResolvedError(f"The jar cache {cache_dir()} resolved {COORDINATES[name]} without {wanted}.")


def beyond_spark(paths: list[str], spark_jars: Path) -> list[str]:
    """The jars of `paths` that Spark's own jar folder does not hold already (Ivy names a
    resolved jar `<group>_<artifact>-<version>.jar`; pyspark's are `<artifact>-<version>.jar`)."""
    present = {p.name for p in spark_jars.iterdir()} if spark_jars.is_dir() else set()
    return [p for p in paths if Path(p).name.partition("_")[2] not in present]


def object_store_jars(name: str = "s3a") -> list[str]:
    """The jar files of `OBJECT_STORE_COORDINATES[name]` and its dependencies, from the cache."""
    coordinate = OBJECT_STORE_COORDINATES[name]
    step = "`.venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --object-store`"
    paths = _resolved(coordinate, f"connector {coordinate} (a warehouse on an object store)", step)
    return [os.path.normpath(p) for p in paths]


def service_classpath(name: str) -> str:
    """The class path (``os.pathsep``-joined jar files) of `SERVICE_COORDINATES[name]`, from the cache."""
    coordinate = SERVICE_COORDINATES[name]
    step = "`.venv/bin/python -m dbt.adapters.spark_embedded.resolve_jars --services` (scripts/test.sh does)"
    paths = _resolved(coordinate, f"server's jar {coordinate}", step)
    if any("_2.13-" in os.path.basename(p) for p in paths):
        # Spark's resolver leaves scala-library out of every resolution (a Spark application has
        # Spark's own), so a Scala 2.13 server gets pyspark's: 2.13.16, as Kafka 4.1.1 is built.
        import pyspark

        jars = Path(pyspark.__file__).resolve().parent / "jars"
        paths = [*paths, *map(str, sorted(jars.glob("scala-library-2.13.*.jar")))]
    return os.pathsep.join(os.path.normpath(p) for p in paths)


def _failure(coordinate: str, output: str) -> str:
    """The one line that says why `coordinate` did not resolve."""
    patterns = (r"unresolved dependency: [^\n]*", r"Server access error[^\n]*", r"(?i)[^\n]*refused[^\n]*")
    for pattern in patterns:
        found = re.search(pattern, output)
        if found:
            return found.group(0).strip()
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def resolve(coordinate: str) -> list[str]:
    """Resolve one coordinate into the cache (Spark's resolver, in a process of its own)."""
    ivy = cache_dir() / "ivy"
    ivy.mkdir(parents=True, exist_ok=True)
    repositories = os.environ.get(REPOSITORIES_ENV, "").strip()
    result = subprocess.run(
        [sys.executable, "-c", RESOLVE, coordinate, str(ivy), repositories],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    found = [line for line in result.stdout.splitlines() if line.startswith("RESOLVED ")]
    paths = json.loads(found[-1][len("RESOLVED ") :]) if found and result.returncode == 0 else []
    if not paths:
        reason = _failure(coordinate, result.stderr + result.stdout)
        raise JarsNotResolvedError(f"cannot resolve {coordinate} from Maven Central: {reason}")
    return paths
