"""Spark's driver JVM started without its start-up banner.

pyspark starts the driver JVM with `spark-submit`, whose launcher always adds
`--add-modules=jdk.incubator.vector` (Spark's `JavaModuleOptions`); the JVM then prints
`WARNING: Using incubator modules: jdk.incubator.vector` on its standard error, and no JVM
option turns that warning off. So the JVM is started with its standard error on a pipe, whose
lines a thread of this process copies to this process's standard error, all but that one. (The
log-level notes Spark printed at start are silenced by `log4j2.properties` beside the macros of
`dbt/include/spark_embedded`.)
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

BANNER = b"WARNING: Using incubator modules"
_LOCK = threading.Lock()


def _jvm_started() -> bool:
    from pyspark import SparkContext

    return SparkContext._gateway is not None


def _copy(source: int, target: int) -> None:
    """Copy lines from `source` to `target` until every writer of `source` has closed it."""
    with os.fdopen(source, "rb", buffering=0) as lines, contextlib.suppress(OSError):
        for line in lines:
            if not line.startswith(BANNER):
                os.write(target, line)
    os.close(target)


@contextlib.contextmanager
def quiet_jvm_start() -> Iterator[None]:
    """Run the block (which may start Spark's driver JVM) with standard error on a pipe that
    drops the JVM's start-up banner; the JVM keeps that pipe for its life. Nothing changes
    once the JVM runs."""
    with _LOCK:
        if _jvm_started():
            yield
            return
        sys.stderr.flush()
        target = os.dup(2)  # where the JVM's lines go: this process's standard error
        source, sink = os.pipe()
        threading.Thread(target=_copy, args=(source, target), name="jvm-stderr", daemon=True).start()
        saved = os.dup(2)
        os.dup2(sink, 2)
        os.close(sink)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
