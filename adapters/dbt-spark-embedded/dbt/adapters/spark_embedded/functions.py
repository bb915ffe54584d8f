"""The lakehouse's own SQL functions, compiled from Java into a jar that every session loads.

Some checks over message contents cannot be written with Spark's built-in functions and should
not cost a Python worker round trip per message; they are JVM classes here
(`dbt/include/spark_embedded/functions/*.java`), compiled with the JDK's `javac` against
pyspark's own jars into `$CDC_JARS_CACHE/functions/cdc-functions-<hash>.jar`, the hash being
that of the sources. Set-up builds it (``python -m dbt.adapters.spark_embedded.resolve_jars``);
a session whose jar is missing (new sources, a cleared cache) builds it on start, which takes a
few seconds once. :func:`dbt.adapters.spark_embedded.lakehouse.spark_parameters` puts it on
`spark.jars`, so dbt, landing, the SQL endpoint and a cluster's executors all have it.

The project registers each function per session by SQL (macro `create_cdc_function`,
macros/platform/functions.sql), as a Hive UDF: `create or replace temporary function`.

:func:`java_jar` is the build both this jar and the metastore service's
(:func:`dbt.adapters.spark_embedded.services.metastore_jar`) use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from dbt.adapters.spark_embedded.jars import cache_dir, spark_jars_dir
from dbt.include import spark_embedded as include_package

SOURCES = Path(include_package.PACKAGE_PATH) / "functions"
# What the sources compile against: Hive's UDF base class and Jackson's streaming parser,
# both in pyspark's jars (so the classes match the ones the session runs).
COMPILE_AGAINST = ("hive-exec-*-core.jar", "jackson-core-2.*.jar")


class JavaBuildError(RuntimeError):
    """A jar of the project's Java sources (the SQL functions, the metastore service) cannot be
    built: no JDK compiler, or the sources do not compile."""


def _sources() -> list[Path]:
    return sorted(SOURCES.glob("*.java"))


def functions_jar() -> str:
    """The path of the functions' jar for the current sources, built first if it is missing."""
    return java_jar(_sources(), "functions", pyspark_classpath(COMPILE_AGAINST))


def java_jar(sources: list[Path], name: str, classpath: str) -> str:
    """The path of the jar `sources` compile into against `classpath`:
    `$CDC_JARS_CACHE/<name>/cdc-<name>-<hash>.jar`, the hash being that of the sources, built
    first if it is missing."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    jar = cache_dir() / name / f"cdc-{name}-{digest.hexdigest()[:16]}.jar"
    if not jar.is_file():
        _build(sources, jar, classpath)
    return str(jar)


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "javac") if home else shutil.which("javac")
    if not found or not Path(found).exists():
        raise JavaBuildError(
            "The lakehouse's SQL functions and metastore service are compiled with the JDK's `javac` "
            "(Java 17), and none was found: install a JDK, or set JAVA_HOME to one."
        )
    return found


def pyspark_classpath(patterns: tuple[str, ...]) -> str:
    """The newest of pyspark's jars matching each pattern, as a class path to compile against."""
    jars = []
    for pattern in patterns:
        found = sorted(spark_jars_dir().glob(pattern))
        if not found:
            raise JavaBuildError(f"pyspark's jars ({spark_jars_dir()}) have no {pattern}.")
        jars.append(str(found[-1]))
    return os.pathsep.join(jars)


def _build(sources: list[Path], jar: Path, classpath: str) -> None:
    """Compile `sources` against `classpath` and write them to `jar`, atomically (a concurrent
    build of the same sources writes the same file)."""
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"cdc-{jar.parent.name}-") as work:
        classes = Path(work) / "classes"
        result = subprocess.run(
            [_javac(), "-nowarn", "--release", "17", "-cp", classpath, "-d", str(classes), *sources],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            errors = result.stderr.strip()
            names = ", ".join(source.name for source in sources)
            raise JavaBuildError(f"{names} did not compile:\n{errors}")
        with (
            tempfile.NamedTemporaryFile(dir=jar.parent, suffix=".part", delete=False) as part,
            zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive,
        ):
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(part.name, jar)
