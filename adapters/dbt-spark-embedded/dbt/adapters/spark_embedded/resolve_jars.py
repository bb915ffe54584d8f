"""Set-up's step ``python -m dbt.adapters.spark_embedded.resolve_jars [--refresh] [--services]
[--object-store]``: resolve every pinned coordinate of :mod:`dbt.adapters.spark_embedded.jars` not in
the jar cache yet; with ``--services`` also the servers of the real-producer test
(`SERVICE_COORDINATES`), with ``--object-store`` the S3A connector of a warehouse on an object store
(`OBJECT_STORE_COORDINATES`); then build
the lakehouse's own SQL functions and metastore service from the adapter's Java sources.

It sits above the modules it drives (jars, functions, services), so that none of them imports
another back: :mod:`dbt.adapters.spark_embedded.jars` only reads and fills the cache.
"""

from __future__ import annotations

import json
import sys

from dbt.adapters.spark_embedded.functions import JavaBuildError, functions_jar
from dbt.adapters.spark_embedded.jars import (
    COORDINATES,
    MANIFEST,
    OBJECT_STORE_COORDINATES,
    SERVICE_COORDINATES,
    JarsNotResolvedError,
    _cached,
    _manifest,
    cache_dir,
    resolve,
)
from dbt.adapters.spark_embedded.local_files import local_files_jar
from dbt.adapters.spark_embedded.services import ServiceError, metastore_jar


def main(argv: list[str] | None = None) -> int:
    """Resolve every coordinate not cached yet (with ``--services`` also `SERVICE_COORDINATES`),
    one line each, and build the functions' and the metastore service's jars if missing; exit 1
    at the first failure."""
    args = sys.argv[1:] if argv is None else argv
    refresh = "--refresh" in args
    manifest = _manifest()
    services = list(SERVICE_COORDINATES.values()) if "--services" in args else []
    object_store = list(OBJECT_STORE_COORDINATES.values()) if "--object-store" in args else []
    for coordinate in [*COORDINATES.values(), *services, *object_store]:
        if not refresh and _cached(coordinate):
            continue
        try:
            manifest[coordinate] = resolve(coordinate)
        except JarsNotResolvedError as exc:
            print(f"setup: {exc}", file=sys.stderr)
            return 1
        (cache_dir() / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        print(f"setup: resolved {coordinate} into {cache_dir()} ({len(manifest[coordinate])} jar(s))")
    # The lakehouse's own SQL functions, local file system and metastore service, compiled from
    # the adapter's Java sources (once per version).
    try:
        functions_jar()
        local_files_jar()
        metastore_jar()
    except (JavaBuildError, ServiceError) as exc:
        print(f"setup: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
