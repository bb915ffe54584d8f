"""The producer registry (dbt_project.yml, `cdc_producers`) as the Python reads it (cdc_registry)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_registry import RegistryError, read_registry, registry
from python_ingest.bronze import BRONZE_FORMATS, bronze_table
from python_ingest.detect import detect_shape
from python_ingest.producers import detector

ROOT = Path(__file__).resolve().parents[2]


def project(tmp_path: Path, registry_yaml: str) -> Path:
    path = tmp_path / "dbt_project.yml"
    path.write_text(f"name: x\nvars:\n  cdc_producers:\n{registry_yaml}", encoding="utf-8")
    return path


def test_the_project_declares_each_producer_once_with_a_detector_and_a_bronze_table() -> None:
    producers = registry()
    # Every producer has its folders, and every producer folder is a producer of the registry.
    staging = ROOT / "models" / "silver" / "staging"
    folders = {p.name for p in staging.iterdir() if p.is_dir() and p.name != "landed"}
    assert folders == {p.name for p in producers}
    # ... and its page under docs/producers/, named after it (docs/adding-a-producer.md).
    pages = {p.stem for p in (ROOT / "docs" / "producers").glob("*.md") if p.stem != "README"}
    assert pages == {p.name for p in producers}
    assert len([p for p in producers if p.tombstones]) <= 1  # a tombstone is one producer's
    assert all(detector(p.name) is not None for p in producers)
    assert (*(p.name for p in producers), "unknown") == BRONZE_FORMATS
    for producer in producers:
        table = bronze_table(producer.name)
        assert table.name == f"raw_{producer.name}" and table.description  # declared in its staging folder
        assert table.columns == bronze_table("unknown").columns  # the columns are declared once


def test_a_producer_without_a_detector_is_landed_by_name_only(tmp_path: Path) -> None:
    (toy,) = read_registry(project(tmp_path, "    - {name: toy, title: Toy producer}\n"))
    assert toy.title == "Toy producer" and not toy.tombstones
    assert detector(toy.name) is None


@pytest.mark.parametrize(
    ("registry_yaml", "message"),
    [
        ("    - {title: no name}\n", "needs a `name`"),
        ("    - {name: Bad-Name}\n", "needs a `name`"),
        ("    - {name: unknown}\n", "not `unknown`"),
        ("    - {name: landed}\n", "nor `landed`"),
        ("    - {name: ces}\n    - {name: ces}\n", "names a producer twice"),
        ("    []\n", "must list the producers"),
    ],
)
def test_a_malformed_registry_is_refused(tmp_path: Path, registry_yaml: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        read_registry(project(tmp_path, registry_yaml))


def test_detectors_are_tried_in_registry_order() -> None:
    # DataWorks' schema with `dataColumn` wins over a Debezium-like payload: DataWorks comes first.
    both = {"schema": {"dataColumn": {}}, "payload": {"op": "c", "source": {}}}
    assert detect_shape(both) == "dataworks"
    assert detect_shape({"payload": {"op": "c", "source": {}}}) == "debezium"
    assert detect_shape({"op": "u", "source": {}}) == "debezium"
    assert detect_shape({"data": {}, "headers": {"operation": "INSERT"}}) == "qlik"
    assert detect_shape({"payload": {"op": "c"}}) == "unknown"  # an op without a source is no one's
