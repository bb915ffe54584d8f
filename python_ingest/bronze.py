"""The bronze landing tables, as declared in models/bronze/_bronze__sources.yml.

The dbt source declaration (columns with data types) is the one definition
of a bronze table; landing creates missing tables from it, and so does dbt's
``create_bronze_tables`` run-start hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

FORMATS = ("ces", "debezium", "dataworks", "qlik")
# bronze.raw_unknown keeps what `land --format auto` cannot attribute to a producer.
BRONZE_FORMATS = (*FORMATS, "unknown")
SOURCES_FILE = Path(__file__).resolve().parent.parent / "models" / "bronze" / "_bronze__sources.yml"
SOURCE_NAME = "bronze"


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


def bronze_table(source_format: str, sources_file: Path = SOURCES_FILE) -> BronzeTable:
    """The declared bronze table of a producer format."""
    if source_format not in BRONZE_FORMATS:
        raise ValueError(f"unknown format {source_format!r}; expected one of {', '.join(BRONZE_FORMATS)}")
    declared = yaml.safe_load(sources_file.read_text(encoding="utf-8"))
    source = next(s for s in declared["sources"] if s["name"] == SOURCE_NAME)
    table = next(t for t in source["tables"] if t["name"] == f"raw_{source_format}")
    return BronzeTable(
        schema=source.get("schema", SOURCE_NAME),
        name=table["name"],
        description=table.get("description", ""),
        columns=tuple((c["name"], c["data_type"]) for c in table["columns"]),
    )
