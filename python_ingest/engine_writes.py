"""Chunks that landing appends on the lakehouse's warm engine, and the one a killed run left.

On the warm engine (the SQL endpoint's Spark, reached by Spark Connect: docs/lakehouse.md,
"The warm engine") the engine appends a chunk, not the landing process. A `kill -9` of the
landing process does not stop the append: the engine carries it on, and may commit it after
the process has died. The next run must not conclude that the pending chunk never reached the
table while that append can still commit it: it would land the chunk again, a duplicate.

So each append runs under a tag named for its chunk, in the run's own Connect session, and
both are recorded with the pending chunk (CheckpointStore.begin). A later run that finds the
chunk pending settles that append first (:func:`settle`): it interrupts whatever still runs
under the tag in the dead run's session, and waits until each such operation has ended (Spark
Connect's ReattachExecute stream ends with its operation) before it looks for the chunk in the
table's snapshots. An engine that no longer answers has stopped, and its appends with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def chunk_tag(chunk_id: str) -> str:
    """The Spark Connect operation tag of a chunk's append (tags take no commas)."""
    return "cdc-chunk-" + chunk_id.replace(":", "-").replace(",", "-")


def record(spark: Any, url: str) -> dict[str, str]:
    """What a pending chunk keeps of the session that appends it."""
    return {"url": url, "session": spark.session_id}


@contextlib.contextmanager
def tagged(spark: Any, chunk_id: str) -> Iterator[None]:
    """Run the operations of this thread, inside, under the chunk's tag."""
    tag = chunk_tag(chunk_id)
    spark.addTag(tag)
    try:
        yield
    finally:
        spark.removeTag(tag)


def settle(engine: dict[str, str], chunk_id: str) -> list[str]:
    """Make sure no append of `chunk_id` is still running on the engine that `engine` (a
    pending chunk's record) names: interrupt each, and return once each has ended. Returns the
    operations it waited for."""
    from dbt.adapters.spark_embedded.api import ENGINE_USER, LOOPBACK, answers
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    url, session_id = engine.get("url", ""), engine.get("session", "")
    port = url.rsplit(":", 1)[-1]
    if not session_id or not port.isdigit() or not answers(int(port)):
        return []  # not written there, or that engine has stopped (and its appends with it)
    # The dead run's session (the engine keeps sessions per user and id: every session there
    # has the user ENGINE_USER); not made this process's default session.
    dead_run = ConnectSession(connection=f"{url}/;user_id={ENGINE_USER};session_id={session_id}")
    try:
        operations = dead_run.interruptTag(chunk_tag(chunk_id))
    finally:
        dead_run.client.close()
    for operation in operations:
        _await_end(f"{LOOPBACK}:{port}", session_id, operation)
    return operations


def _await_end(address: str, session_id: str, operation_id: str) -> None:
    """Follow an operation of the engine (ReattachExecute) until it has ended: its stream
    completes, or ends in its error (its interruption), or the engine no longer knows it."""
    import grpc
    from dbt.adapters.spark_embedded.api import ENGINE_USER
    from pyspark.sql.connect.proto import base_pb2, base_pb2_grpc

    request = base_pb2.ReattachExecuteRequest(
        session_id=session_id,
        user_context=base_pb2.UserContext(user_id=ENGINE_USER),
        operation_id=operation_id,
    )
    with grpc.insecure_channel(address) as channel:
        stub = base_pb2_grpc.SparkConnectServiceStub(channel)
        while True:  # the engine ends a stream after a while; reattach until the operation ends
            try:
                for response in stub.ReattachExecute(request):
                    if response.HasField("result_complete"):
                        return
            except grpc.RpcError:
                return
