"""Stop the services a test's lakehouse started (its metastore, its SQL endpoint)."""

from __future__ import annotations

from pathlib import Path


def stop_services(lakehouse: Path) -> None:
    if not (Path(lakehouse) / "services").is_dir():
        return
    from dbt.adapters.spark_embedded.services import stop_services as stop

    stop(lakehouse)
