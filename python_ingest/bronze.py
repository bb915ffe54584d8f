"""The bronze landing tables: one per producer of the registry (dbt_project.yml,
`cdc_producers`), `raw_<name>`, plus `raw_unknown`.

Every bronze table has the columns (with data types) declared on raw_unknown in
models/bronze/_bronze__sources.yml: that is their one definition. Landing creates
missing tables from it, and so does dbt's ``create_bronze_tables`` run-start hook. A
producer declares its table (name and description) in its staging folder,
models/silver/staging/<name>/_<name>__sources.yml.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from cdc_registry import producer_names, registry

UNKNOWN = "unknown"
FORMATS = producer_names()
# bronze.raw_unknown keeps what `land --format auto` cannot attribute to a producer.
BRONZE_FORMATS = (*FORMATS, UNKNOWN)
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
SOURCE_NAME = "bronze"
COLUMNS_TABLE = f"raw_{UNKNOWN}"  # declares the columns of every bronze table


@dataclass(frozen=True)
class BronzeTable:
    schema: str
    name: str
    description: str
    columns: tuple[tuple[str, str], ...]  # (name, Spark SQL type)

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def ddl_columns(self) -> str:
        return ", ".join(f"{name} {data_type}" for name, data_type in self.columns)

    def create_statement(self) -> str:
        comment = " ".join(self.description.split()).replace("\\", "\\\\").replace("'", "\\'")
        return (
            f"create table if not exists {self.qualified_name} ({self.ddl_columns}) "
            f"using iceberg comment '{comment}' tblproperties ('format-version' = '2')"
        )


@cache
def declared_bronze_tables(models_dir: Path = MODELS_DIR) -> dict[str, tuple[str, dict]]:
    """The tables declared for the `bronze` source in the project's YAML files:
    name -> (schema, declaration)."""
    tables: dict[str, tuple[str, dict]] = {}
    for path in sorted(models_dir.rglob("*.yml")):
        declared = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for source in declared.get("sources") or ():
            if source.get("name") == SOURCE_NAME:
                for table in source.get("tables") or ():
                    tables[table["name"]] = (source.get("schema", SOURCE_NAME), table)
    return tables


def bronze_table(source_format: str) -> BronzeTable:
    """The declared bronze table of a producer format (or `unknown`)."""
    if source_format not in BRONZE_FORMATS:
        raise ValueError(f"unknown format {source_format!r}; expected one of {', '.join(BRONZE_FORMATS)}")
    tables = declared_bronze_tables()
    if COLUMNS_TABLE not in tables:
        raise ValueError(f"no bronze.{COLUMNS_TABLE} declared under {MODELS_DIR}: it declares the columns")
    schema, columns_table = tables[COLUMNS_TABLE]
    name = f"raw_{source_format}"
    _, table = tables.get(name, (schema, {}))
    titles = {p.name: p.title for p in registry()}
    description = table.get("description") or f"Messages of {titles.get(source_format, source_format)}."
    return BronzeTable(
        schema=schema,
        name=name,
        description=description,
        columns=tuple((c["name"], c["data_type"]) for c in columns_table["columns"]),
    )
