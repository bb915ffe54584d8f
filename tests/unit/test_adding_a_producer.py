"""docs/adding-a-producer.md, followed for a toy producer: its own folders plus one registry
line wire it into landing, bronze and every silver union, with no other shared file edited."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cdc_registry import read_registry
from python_ingest.producers import detector

ROOT = Path(__file__).resolve().parents[2]
PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/dbt")
# The toy producer's own files, as the recipe lists them (the SQL is minimal but complete).
TOY_FILES = {
    "models/silver/staging/toy/_toy__sources.yml": """\
version: 2
sources:
  - name: bronze
    config:
      loaded_at_field: ingested_at
    tables:
      - name: raw_toy
        description: Messages of the toy producer, landed with `--format toy`.
""",
    "models/silver/staging/toy/stg_toy__messages.sql": """\
{{ config(unique_key='message_id') }}
select
    message_id,
    get_json_object(message_value, '$.table') as table_id,
    ingested_at,
    current_timestamp() as staged_at
from {{ ref('stg_landed__messages') }}
where source_format = 'toy'
""",
    "models/silver/intermediate/toy/int_toy__changes.sql": """\
{{ config(unique_key='change_id') }}
select
    message_id as change_id,
    'toy' as source_format,
    'toy' as source_connector,
    cast(null as string) as source_database,
    cast(null as string) as source_schema,
    cast(null as string) as source_table,
    table_id,
    'insert' as operation,
    ingested_at as commit_ts,
    message_id as sequence,
    cast(null as string) as transaction_id,
    map('id', message_id) as primary_key,
    cast(null as map<string, string>) as before,
    map('id', message_id) as after,
    cast(null as array<string>) as changed_columns,
    ingested_at,
    cast(array() as array<struct<column_name: string, ordinal: int, source_type: string,
        spark_type: string, is_primary_key: boolean>>) as source_columns,
    false as is_duplicate,
    cast(null as string) as quarantine_reason,
    staged_at
from {{ ref('stg_toy__messages') }}
""",
    "models/silver/intermediate/toy/int_toy__message_outcomes.sql": """\
{{ config(unique_key='message_id') }}
select
    message_id,
    'toy' as source_format,
    'change' as outcome,
    cast(null as string) as detail,
    ingested_at,
    staged_at
from {{ ref('stg_toy__messages') }}
""",
    "macros/toy/toy_control_events.sql": """\
{% macro toy_control_events() %}
    select * from {{ ref('stg_toy__messages') }} where false
{% endmacro %}
""",
}


@pytest.fixture(scope="module")
def toy_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("toy") / "project"
    for part in PROJECT_PARTS:
        source, target = ROOT / part, project / part
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    for relative, text in TOY_FILES.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text, encoding="utf-8")
    # The one shared edit: a registry line.
    dbt_project = project / "dbt_project.yml"
    text = dbt_project.read_text(encoding="utf-8")
    line = [line for line in text.splitlines() if line.startswith("    - {name: ")][-1]  # the last producer
    dbt_project.write_text(
        text.replace(line, line + '\n    - {name: toy, title: "Toy producer"}'), encoding="utf-8"
    )
    env = {**os.environ, "DBT_PROFILES_DIR": str(project), "CDC_LAKEHOUSE_DIR": str(project / "lakehouse")}
    dbt = Path(sys.executable).parent / "dbt"
    result = subprocess.run(
        # The toy project's own target/ and logs/ (not the test run's $DBT_TARGET_PATH).
        [str(dbt), "parse", "--no-partial-parse", "--target-path", "target", "--log-path", "logs"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return project


def parents(manifest: dict, unique_id: str) -> set[str]:
    return {node.split(".")[-1] for node in manifest["nodes"][unique_id]["depends_on"]["nodes"]}


def test_a_registry_line_and_the_producers_folders_wire_it_into_every_union(toy_project: Path) -> None:
    manifest = json.loads((toy_project / "target" / "manifest.json").read_text(encoding="utf-8"))
    model = "model.cdc_lakehouse."
    assert "raw_toy" in parents(manifest, model + "stg_landed__messages")
    assert "int_toy__changes" in parents(manifest, model + "cdc_changes")
    assert "int_toy__message_outcomes" in parents(manifest, model + "cdc_message_outcomes")
    assert "int_toy__changes" in parents(manifest, model + "cdc_table_columns")  # the default column facts
    assert "stg_toy__messages" in parents(manifest, model + "cdc_control_events")  # its own step, by name
    accounting = next(
        unique_id
        for unique_id in manifest["nodes"]
        if unique_id.startswith("test.cdc_lakehouse.assert_every_bronze_message_has_one_outcome")
    )
    assert "raw_toy" in parents(manifest, accounting)


def test_landing_reads_the_same_registry(toy_project: Path) -> None:
    producers = read_registry(toy_project / "dbt_project.yml")
    assert [p.name for p in producers][-1] == "toy"
    assert detector(producers[-1].name) is None  # no python_ingest/producers/toy.py: `--format toy` only


def test_the_recipe_names_every_file_the_toy_producer_has(toy_project: Path) -> None:
    recipe = (ROOT / "docs" / "adding-a-producer.md").read_text(encoding="utf-8")
    for relative in TOY_FILES:
        assert relative.replace("toy", "<name>") in recipe, relative
    declared = yaml.safe_load((toy_project / "dbt_project.yml").read_text(encoding="utf-8"))
    assert declared["vars"]["cdc_producers"][-1] == {"name": "toy", "title": "Toy producer"}
