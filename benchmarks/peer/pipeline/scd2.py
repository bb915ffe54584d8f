"""What every pipeline definition of this folder ends with, per source table: a streaming table
and the AUTO CDC flow into it, SCD type 2.

Not a pipeline definition itself: benchmarks/peer_auto_cdc.py links one definitions file into
the pipeline's `transformations/`, which the Spark Pipelines CLI loads, and puts this folder on
the import path so that the file can import this module.
"""

from __future__ import annotations

import os

from pyspark import pipelines as dp

TARGET_FORMAT = os.environ.get("PEER_TARGET_FORMAT") or None


def scd2_flow(target: str, keys: list[str], deletes: str) -> str:
    """The streaming table `target` (format `$PEER_TARGET_FORMAT`, else the catalog's) and its
    AUTO CDC flow from the view `<target>_changes`, whose rows are the row's columns and `_op`
    and `_position`: keyed by `keys`, sequenced by `_position`, a delete where `deletes` (SQL
    on `_op`) holds, `_op` and `_position` left out of the history. Returns `target`."""
    dp.create_streaming_table(target, format=TARGET_FORMAT)
    dp.create_auto_cdc_flow(
        target=target,
        source=f"{target}_changes",
        keys=keys,
        sequence_by="_position",
        apply_as_deletes=deletes,
        except_column_list=["_op", "_position"],
        stored_as_scd_type=2,
    )
    return target
