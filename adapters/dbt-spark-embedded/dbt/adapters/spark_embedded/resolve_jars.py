"""Set-up's step ``python -m dbt.adapters.spark_embedded.resolve_jars [--refresh] [--services]``:
resolve every pinned coordinate of :mod:`dbt.adapters.spark_embedded.jars` not in the jar cache yet;
with ``--services`` also the servers of the real-producer test (`SERVICE_COORDINATES`)."""

from __future__ import annotations

import sys

from dbt.adapters.spark_embedded.jars import main

if __name__ == "__main__":
    sys.exit(main())
