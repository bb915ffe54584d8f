"""End to end for typed gold tables: Qlik Replicate messages with precise
metadata types are landed and built, `python -m python_ingest scaffold`
publishes the table into a copy of the project, and gold.<name> /
gold.<name>_history are views with real Spark types. A value that does not
fit its type is reported by a warn test; a column added at the source is
reported until scaffold adds it, then appears as a new column."""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import shutil
from pathlib import Path

import pytest

from cdc_cli import main
from cdc_tools import scaffold
from cdc_tools.generators import qlik_messages as qm
from tests.helpers.tables import TYPED_HISTORY_METADATA, TYPED_LIVE_METADATA

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
TABLE_ID = "typedcheck.probe"  # unique to this test: the lakehouse is shared
COLUMNS = (
    qm.Column("ID", "INT4", key_position=1),
    qm.Column("NAME", "STRING"),
    qm.Column("PRICE", "NUMERIC", precision=10, scale=2),
    qm.Column("ISSUED", "DATETIME", scale=6),
    qm.Column("BORN", "DATE"),
    qm.Column("ACTIVE", "BOOLEAN"),
    qm.Column("PICTURE", "BYTES"),
)
VERSION1 = qm.TableVersion("r1", "typed", "TYPEDCHECK", "PROBE", 1, COLUMNS, datetime.datetime(2025, 7, 1))
VERSION2 = VERSION1.add_column(qm.Column("NOTE", "STRING"), datetime.datetime(2025, 7, 2))
ROW1 = {
    "ID": "1",
    "NAME": "First",
    "PRICE": "12.5",
    "ISSUED": "2025-01-02 03:04:05.123400",
    "BORN": "1990-05-17",
    "ACTIVE": "1",
    "PICTURE": "DEADBEEF",
}
ROW2 = {**ROW1, "ID": "2", "NAME": "Bad price", "PRICE": "n/a", "ACTIVE": "0", "PICTURE": None}
# A table nobody publishes: the build alone types it (gold.cdc_typed_tables), and gives it the
# column the source adds mid-stream. `VALID_FROM` is a metadata column's name: `source_valid_from`.
GADGET_ID = "typedcheck.gadget"
GADGET1 = qm.TableVersion(
    "r1",
    "typed",
    "TYPEDCHECK",
    "GADGET",
    1,
    (qm.Column("ID", "INT4", key_position=1), qm.Column("Label", "STRING"), qm.Column("VALID_FROM", "DATE")),
    datetime.datetime(2025, 7, 1),
)
GADGET2 = GADGET1.add_column(qm.Column("Added Note", "STRING"), datetime.datetime(2025, 7, 2))
GADGET_ROW = {"ID": "1", "Label": "one", "VALID_FROM": "2024-01-02"}
GADGET_COLUMNS = [("id", "int"), ("label", "string"), ("source_valid_from", "date")]


def metadata(version: qm.TableVersion) -> str:
    return qm.dumps(qm.metadata(version))


def data(
    operation: str,
    seq: int,
    row: dict,
    version: qm.TableVersion = VERSION1,
    change: str = "7F",
    sent: str = "7F",
) -> str:
    position = qm.Position(
        f"{20250701000000000000000000000000000 + seq}",
        f"2025-07-10 00:00:{seq:02d}.000000",
        "",
        f"T{seq}",
        1,
        True,
    )
    return qm.dumps(qm.data(version, operation, row, None, position, change, sent, name_table=False))


def copy_project(destination: Path) -> Path:
    """The dbt project without lakehouse, target or tests other than tests/dbt."""
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(ROOT / name, destination / name)
    for name in ("models", "macros", "seeds", "tests/dbt"):
        shutil.copytree(ROOT / name, destination / name)
    return destination


def results_by_name(result) -> dict[str, object]:
    return {r.node.name: r for r in result.result.results}


def run_scaffold(project: Path, *tables: str) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = main(["scaffold", "--project-dir", str(project), *tables])
    return code, buffer.getvalue()


@pytest.fixture(scope="module")
def typed(spark, land, dbt, tmp_path_factory):
    work = tmp_path_factory.mktemp("typed")
    project = copy_project(tmp_path_factory.mktemp("typed-project"))
    target = work / "target"

    def build(*args: str):
        return dbt("build", "--project-dir", str(project), "--target-path", str(target), *args)

    first = work / "run1.jsonl"
    first.write_text(
        "\n".join(
            [
                metadata(VERSION1),
                data("INSERT", 1, ROW1),
                data("INSERT", 2, ROW2),
                data("UPDATE", 3, {**ROW1, "NAME": "Renamed", "PRICE": "20"}, change="06"),
                metadata(GADGET1),
                data("INSERT", 5, GADGET_ROW, GADGET1, *[qm.mask(GADGET1, GADGET_ROW)] * 2),
            ]
        )
        + "\n"
    )
    assert land("--format", "qlik", "--container", "jsonl", first).exit_code == 0
    build()
    gadget_first = typed_relations(spark, GADGET_ID)
    code, output = run_scaffold(project, TABLE_ID)
    assert code == 0, output
    rows = {r["table_id"]: r for r in csv.DictReader((project / scaffold.SEED_PATH).open())}
    name = rows[TABLE_ID]["publish_as"]
    first_build = results_by_name(build("--select", name, f"{name}_history", "--store-failures"))
    rescaffold = run_scaffold(project)

    second = work / "run2.jsonl"
    second.write_text(
        "\n".join(
            [
                metadata(VERSION2),
                data(
                    "UPDATE",
                    4,
                    {**ROW1, "NAME": "Renamed", "PRICE": "20", "NOTE": "hello"},
                    VERSION2,
                    "80",
                    "FF",
                ),
                metadata(GADGET2),
                data(
                    "UPDATE",
                    6,
                    {**GADGET_ROW, "Label": "uno", "Added Note": "new"},
                    GADGET2,
                    qm.mask(GADGET2, ["Label", "Added Note"]),
                    qm.mask(GADGET2, [c.name for c in GADGET2.columns]),
                ),
            ]
        )
        + "\n"
    )
    assert land("--format", "qlik", "--container", "jsonl", second).exit_code == 0
    before_scaffold = results_by_name(build())
    gadget_second = typed_relations(spark, GADGET_ID)
    inputs_second = recorded_inputs(spark)
    evolved = run_scaffold(project)
    assert evolved[0] == 0, evolved[1]
    build("--select", name, f"{name}_history")
    # A change that brings no new column: the history gains it, the typed tables stay idle.
    third = work / "run3.jsonl"
    third.write_text(
        data(
            "UPDATE",
            7,
            {**GADGET_ROW, "Label": "dos", "Added Note": "new"},
            GADGET2,
            qm.mask(GADGET2, ["Label"]),
            qm.mask(GADGET2, [c.name for c in GADGET2.columns]),
        )
        + "\n"
    )
    assert land("--format", "qlik", "--container", "jsonl", third).exit_code == 0
    no_new_column = results_by_name(build("--exclude-resource-type", "unit_test"))
    return {
        "name": name,
        "project": project,
        "scaffold_output": output,
        "rescaffold": rescaffold,
        "first_build": first_build,
        "before_scaffold": before_scaffold,
        "evolved": evolved[1],
        "gadget": (gadget_first, gadget_second),
        "no_new_column": (no_new_column, typed_relations(spark, GADGET_ID)),
        "recorded_inputs": (inputs_second, recorded_inputs(spark)),
    }


def recorded_inputs(spark) -> str | None:
    """What gold.cdc_typed_tables' rows were last found to come from (typed_relations_inputs)."""
    properties = {r.key: r.value for r in spark.sql("show tblproperties gold.cdc_typed_tables").collect()}
    return properties.get("cdc.typed_relations_inputs")


def typed_relations(spark, table_id: str) -> dict:
    """A table's row of gold.cdc_typed_tables, and the columns and rows of its two relations."""
    [row] = spark.sql(f"select * from gold.cdc_typed_tables where table_id = '{table_id}'").collect()
    found = {"row": row.asDict(recursive=True)}
    for relation in (row.relation_name, row.history_relation_name):
        table = spark.table(f"gold.{relation}")
        found[relation] = (
            table.dtypes,
            [r.asDict() for r in table.orderBy(*table.columns[:1], "valid_from").collect()],
        )
    return found


def test_scaffold_declares_and_publishes_the_named_table(typed) -> None:
    name, project = typed["name"], typed["project"]
    assert name in ("probe", "typedcheck_probe")
    rows = {r["table_id"]: r for r in csv.DictReader((project / scaffold.SEED_PATH).open())}
    # Every other table found in silver is declared too, unpublished.
    assert all(not r["publish_as"] for t, r in rows.items() if t != TABLE_ID and t not in _committed())
    published = project / scaffold.PUBLISHED_DIR
    assert (published / f"{name}.sql").is_file() and (published / f"{name}_history.sql").is_file()
    # Re-running changes nothing: byte-identical files.
    assert typed["rescaffold"][0] == 0
    assert "already up to date" in typed["rescaffold"][1]


def _committed() -> set[str]:
    with (ROOT / scaffold.SEED_PATH).open() as seed:
        return {r["table_id"] for r in csv.DictReader(seed) if r["publish_as"]}


def test_typed_models_have_spark_types(spark, typed) -> None:
    name = typed["name"]
    expected = [
        ("id", "int"),
        ("name", "string"),
        ("price", "decimal(10,2)"),
        ("issued", "timestamp"),
        ("born", "date"),
        ("active", "boolean"),
        ("picture", "binary"),
        ("note", "string"),
    ]
    assert spark.table(f"gold.{name}").dtypes == [*expected, *TYPED_LIVE_METADATA]
    assert spark.table(f"gold.{name}_history").dtypes == [*expected, *TYPED_HISTORY_METADATA]


def test_live_rows_hold_typed_values(spark, typed) -> None:
    rows = spark.sql(
        "select id, name, price, cast(issued as string) as issued, born, active, picture, note, "
        f"cast(valid_from as string) as valid_from from gold.{typed['name']} where id >= 1 order by id"
    ).collect()
    assert [r.asDict() for r in rows] == [
        {
            "id": 1,
            "name": "Renamed",
            "price": pytest.approx(20),
            "issued": "2025-01-02 03:04:05.1234",
            "born": datetime.date(1990, 5, 17),
            "active": True,
            "picture": bytearray(b"\xde\xad\xbe\xef"),
            "note": "hello",
            "valid_from": "2025-07-10 00:00:04",
        },
        {
            "id": 2,
            "name": "Bad price",
            "price": None,  # "n/a" does not fit decimal(10,2): reported by the warn test
            "issued": "2025-01-02 03:04:05.1234",
            "born": datetime.date(1990, 5, 17),
            "active": False,
            "picture": None,
            "note": None,
            "valid_from": "2025-07-10 00:00:02",
        },
    ]
    assert str(rows[0].price) == "20.00"


def test_history_answers_a_point_in_time_query(spark, typed) -> None:
    def as_of(ts: str) -> list[tuple]:
        return [
            tuple(r)
            for r in spark.sql(
                f"select id, name, cast(price as string), version_number from gold.{typed['name']}_history "
                f"where timestamp'{ts}' between valid_from and live_until order by id"
            ).collect()
        ]

    assert as_of("2025-07-10 00:00:01.5") == [(1, "First", "12.50", 1)]
    assert as_of("2025-07-10 00:00:03") == [(1, "Renamed", "20.00", 2), (2, "Bad price", None, 1)]
    assert as_of("2025-07-10 00:00:05")[0] == (1, "Renamed", "20.00", 3)


def test_a_value_that_does_not_fit_its_type_is_reported(spark, typed) -> None:
    results = typed["first_build"]
    [fit] = [r for n, r in results.items() if n.startswith("typed_values_fit_types")]
    assert str(fit.status) == "warn" and fit.failures == 1
    [reported] = spark.sql(f"select * from {fit.node.relation_name}").collect()
    assert (reported.column_name, reported.source_column, reported.raw_value, reported.declared_type) == (
        "price",
        "PRICE",
        "n/a",
        "decimal(10,2)",
    )
    assert reported.primary_key == {"ID": "2"}
    [published] = [r for n, r in results.items() if n.startswith("source_columns_are_published")]
    assert str(published.status) == "pass"


def test_a_new_source_column_is_reported_then_added_by_scaffold(typed) -> None:
    name = typed["name"]
    results = typed["before_scaffold"]
    [stale] = [
        r
        for n, r in results.items()
        if n.startswith("source_columns_are_published")
        and r.node.attached_node == f"model.cdc_lakehouse.{name}_history"
    ]
    assert str(stale.status) == "warn" and stale.failures == 1
    assert f"wrote {scaffold.PUBLISHED_DIR / scaffold.MODELS_YML}" in typed["evolved"]
    yml = (typed["project"] / scaffold.PUBLISHED_DIR / scaffold.MODELS_YML).read_text()
    assert "source_column: NOTE" in yml


def test_repository_is_left_clean(typed) -> None:
    published = ROOT / scaffold.PUBLISHED_DIR
    assert not (published / f"{typed['name']}.sql").exists() or typed["name"] in _committed()
    assert TABLE_ID not in (ROOT / scaffold.SEED_PATH).read_text()


def test_a_table_nobody_published_is_typed_by_the_build_and_gains_a_new_column(typed) -> None:
    first, second = typed["gadget"]
    name = first["row"]["relation_name"]
    assert (name, first["row"]["history_relation_name"], first["row"]["is_published"]) == (
        "gadget",
        "gadget_history",
        False,
    )
    live, history = first[name], first[f"{name}_history"]
    assert live[0] == [*GADGET_COLUMNS, *TYPED_LIVE_METADATA]
    assert history[0] == [*GADGET_COLUMNS, *TYPED_HISTORY_METADATA]
    assert [(r["id"], r["label"], r["source_valid_from"]) for r in live[1]] == [
        (1, "one", datetime.date(2024, 1, 2))
    ]
    # The next build: the column the source added, last, null where the version had none.
    columns = [*GADGET_COLUMNS, ("added_note", "string")]
    live, history = second[name], second[f"{name}_history"]
    assert live[0] == [*columns, *TYPED_LIVE_METADATA]
    assert history[0] == [*columns, *TYPED_HISTORY_METADATA]
    assert [(r["label"], r["added_note"], r["version_number"]) for r in history[1]] == [
        ("one", None, 1),
        ("uno", "new", 2),
    ]
    assert [c["source_column"] for c in second["row"]["columns"]] == [
        "ID",
        "Label",
        "VALID_FROM",
        "Added Note",
    ]


def test_a_build_that_brings_no_new_column_leaves_the_typed_tables_idle(typed) -> None:
    results, third = typed["no_new_column"]
    assert results["cdc_history"].message != "IDLE"
    assert results["cdc_table_columns"].message != "IDLE"  # it saw the columns again
    assert results["cdc_typed_tables"].message == "IDLE"
    # It recorded the inputs it checked, so the next build with nothing new asks no query.
    second, third_inputs = typed["recorded_inputs"]
    assert second and third_inputs and third_inputs != second
    name = third["row"]["relation_name"]
    assert third["row"] == typed["gadget"][1]["row"]
    assert [(r["label"], r["version_number"]) for r in third[f"{name}_history"][1]] == [
        ("one", 1),
        ("uno", 2),
        ("dos", 3),
    ]
