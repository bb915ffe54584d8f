"""scaffold's pure rendering: seed rows and silver columns in, the seed and the
typed models of models/gold/published/ out, deterministically, keeping what
users wrote in the seed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdc_tools import scaffold as sc
from cdc_tools.scaffold import ScaffoldError, SourceColumn
from tests.helpers.tables import TYPED_HISTORY_METADATA, TYPED_LIVE_METADATA

HEADER = ",".join(sc.SEED_COLUMNS) + "\n"


def col(table: str, name: str, ordinal: int, spark_type: str, key: bool = False, source=None):
    return SourceColumn(table, name, ordinal, source or spark_type.upper(), spark_type, key)


ORDERS = [
    col("salesdb.dbo.orders", "amount", 3, "decimal(10,2)"),
    col("salesdb.dbo.orders", "order_id", 1, "int", key=True),
    col("salesdb.dbo.orders", "Placed At", 2, "timestamp", source="datetime2(7)"),
]
ITEMS = [col("erp.items", "ID", 1, "int", key=True), col("erp.items", "PICTURE", 2, "binary")]
OTHER_ITEMS = [col("crm.sales.items", "id", 1, "bigint", key=True)]


def models(result: sc.ScaffoldResult) -> dict[str, dict]:
    document = yaml.safe_load(result.files[sc.MODELS_YML])
    return {model["name"]: model for model in document["models"]}


def seed_rows(result: sc.ScaffoldResult) -> list[dict[str, str]]:
    return sc.parse_seed(result.seed_text)


def test_new_tables_are_declared_unpublished_unless_named() -> None:
    result = sc.scaffold(HEADER, [*ORDERS, *ITEMS], named=["erp.items"])
    assert result.seed_text == (HEADER + "erp.items,items,,,,,\n" + "salesdb.dbo.orders,,,,,,\n")
    assert result.added_tables == ["erp.items", "salesdb.dbo.orders"]
    assert sorted(result.files) == [sc.MODELS_YML, "items.sql", "items_history.sql"]


def test_publish_all_publishes_every_new_table() -> None:
    result = sc.scaffold("", [*ORDERS, *ITEMS], publish_all=True)
    assert [(r["table_id"], r["publish_as"]) for r in seed_rows(result)] == [
        ("erp.items", "items"),
        ("salesdb.dbo.orders", "orders"),
    ]
    assert set(models(result)) == {"items", "items_history", "orders", "orders_history"}


def test_existing_user_values_are_kept_and_only_new_tables_appended() -> None:
    seed = (
        HEADER
        + "salesdb.dbo.orders,sales_orders,order_id;line,updated_at,1,false,true\n"
        + "zz.unknown,,,,,,\n"
    )
    result = sc.scaffold(seed, [*ORDERS, *ITEMS], publish_all=True)
    assert result.seed_text == seed + "erp.items,items,,,,,\n"
    # --publish-all does not publish a declared table whose publish_as was left empty.
    assert "zz.unknown" not in result.published
    assert set(models(result)) == {"items", "items_history", "sales_orders", "sales_orders_history"}


def test_naming_a_declared_table_fills_its_empty_publish_name_only() -> None:
    seed = HEADER + "salesdb.dbo.orders,,,,2,,\nerp.items,stock,,,,,\n"
    result = sc.scaffold(seed, [*ORDERS, *ITEMS], named=["salesdb.dbo.orders", "erp.items"])
    assert seed_rows(result) == [
        dict(zip(sc.SEED_COLUMNS, ["salesdb.dbo.orders", "orders", "", "", "2", "", ""], strict=True)),
        dict(zip(sc.SEED_COLUMNS, ["erp.items", "stock", "", "", "", "", ""], strict=True)),
    ]


def test_same_input_gives_byte_identical_files() -> None:
    first = sc.scaffold(HEADER, [*ORDERS, *ITEMS], publish_all=True)
    again = sc.scaffold(first.seed_text, list(reversed([*ORDERS, *ITEMS])), previous_yml=None)
    assert again.seed_text == first.seed_text
    assert again.files == first.files
    assert again.added_tables == []


def test_apply_is_idempotent_and_deletes_only_generated_files_of_unpublished_tables(tmp_path: Path) -> None:
    (tmp_path / "seeds").mkdir()
    (tmp_path / sc.SEED_PATH).write_text(HEADER)
    published = tmp_path / sc.PUBLISHED_DIR
    published.mkdir(parents=True)
    (published / "hand_written.sql").write_text("select 1 as one\n")
    first = sc.scaffold(HEADER, [*ORDERS, *ITEMS], publish_all=True)
    assert len(sc.apply(tmp_path, first)) == 6  # seed + 2 x 2 models + yml
    assert sc.apply(tmp_path, first) == []
    unpublished = first.seed_text.replace("erp.items,items", "erp.items,")
    second = sc.scaffold(unpublished, [*ORDERS, *ITEMS])
    changes = sc.apply(tmp_path, second)
    assert f"deleted {sc.PUBLISHED_DIR / 'items.sql'}" in changes
    assert f"deleted {sc.PUBLISHED_DIR / 'items_history.sql'}" in changes
    assert sorted(p.name for p in published.iterdir()) == [
        sc.MODELS_YML,
        "hand_written.sql",
        "orders.sql",
        "orders_history.sql",
    ]


def test_models_have_typed_columns_in_ordinal_order_then_metadata() -> None:
    result = sc.scaffold(HEADER, ORDERS, named=["salesdb.dbo.orders"])
    history, current = models(result)["orders_history"], models(result)["orders"]
    source = [("order_id", "int"), ("placed_at", "timestamp"), ("amount", "decimal(10,2)")]
    assert [(c["name"], c["data_type"]) for c in history["columns"]] == [*source, *TYPED_HISTORY_METADATA]
    assert [(c["name"], c["data_type"]) for c in current["columns"]] == [*source, *TYPED_LIVE_METADATA]
    for model in (history, current):
        assert model["config"]["contract"] == {"enforced": True}
        assert model["description"] and all(c["description"] for c in model["columns"])
    placed = history["columns"][1]
    assert placed["config"]["meta"] == {
        "source_column": "Placed At",
        "source_type": "datetime2(7)",
        "is_primary_key": False,
    }
    assert "`Placed At` (datetime2(7) → timestamp)" in placed["description"]
    assert "part of the primary key" in history["columns"][0]["description"]
    tests = {next(iter(t)): next(iter(t.values())) for t in history["data_tests"]}
    assert set(tests) == {
        "typed_values_fit_types",
        "source_columns_are_published",
        "unique_combination_of_columns",
    }
    assert tests.pop("unique_combination_of_columns") == {
        "arguments": {"combination_of_columns": ["order_id", "version_number"]},
        "config": {"severity": "warn"},
    }
    assert all(
        t == {"arguments": {"table_id": "salesdb.dbo.orders"}, "config": {"severity": "warn"}}
        for t in tests.values()
    )
    assert current["data_tests"] == [
        {
            "unique_combination_of_columns": {
                "arguments": {"combination_of_columns": ["order_id"]},
                "config": {"severity": "warn"},
            }
        }
    ]


def test_sql_files_are_one_macro_call_with_a_generated_header() -> None:
    result = sc.scaffold(HEADER, ORDERS, named=["salesdb.dbo.orders"])
    history = result.files["orders_history.sql"]
    assert history.splitlines()[-1] == "{{ typed_history('salesdb.dbo.orders') }}"
    assert result.files["orders.sql"].splitlines()[-1] == "{{ typed_current('salesdb.dbo.orders') }}"
    assert sc.is_generated(history) and sc.is_generated(result.files[sc.MODELS_YML])
    assert not sc.is_generated("select 1 as one\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Order Date", "order_date"),
        ("EMPLOYEE_ID", "employee_id"),
        ("größe", "groe"),
        ("Prix (€)", "prix"),
        ("2nd_line", "c_2nd_line"),
        ("__x__", "x"),
        ("***", "c"),
    ],
)
def test_identifiers_are_sanitized(text: str, expected: str) -> None:
    assert sc.sanitize_identifier(text) == expected


def test_publish_names_are_the_table_name_unless_ambiguous() -> None:
    tables = ["erp.items", "crm.sales.items", "salesdb.dbo.orders", "db2.dbo.orders", "x.Ünits"]
    assert sc.default_publish_name("salesdb.dbo.orders", tables) == "salesdb_dbo_orders"
    assert sc.default_publish_name("erp.items", tables) == "erp_items"
    assert sc.default_publish_name("crm.sales.items", tables) == "sales_items"
    assert sc.default_publish_name("x.Ünits", tables) == "units"
    assert sc.default_publish_name("a.cdc", ["a.cdc"], {"cdc_history"}) == "a_cdc"
    assert sc.default_publish_name("a.cdc", ["a.cdc"], {"cdc_history", "a_cdc"}) == "a_cdc_2"


def test_new_publish_names_avoid_names_in_use() -> None:
    seed = HEADER + "erp.items,orders,,,,,\n"
    result = sc.scaffold(seed, [*ORDERS, *ITEMS], publish_all=True)
    assert seed_rows(result)[1]["publish_as"] == "dbo_orders"


def test_metadata_columns_are_read_from_the_dbt_macro(tmp_path: Path) -> None:
    """scaffold reads macros/history/history_columns.sql, the columns' one definition (the
    fold and the typed models' macros use it in dbt), with plain Jinja."""
    macro = tmp_path / "history_columns.sql"
    macro.write_text(
        "{#- a comment -#}\n{% macro history_metadata_columns() -%}\n"
        "    {{ return([{'name': 'a', 'data_type': 'int', 'description': \"a's text\"},\n"
        "        {'name': 'b', 'data_type': 'string', 'description': 'B.',\n"
        "         'current_description': 'B now.'}]) }}\n"
        "{%- endmacro %}\n"
    )
    assert sc.history_metadata_columns(macro) == (
        (("a", "int", "a's text"), ("b", "string", "B.")),
        (("b", "string", "B now."),),
    )
    macro.write_text("{% macro history_metadata_columns() %}{% endmacro %}")
    with pytest.raises(ValueError, match="returns nothing"):
        sc.history_metadata_columns(macro)


def test_source_columns_named_like_metadata_columns_are_prefixed() -> None:
    columns = [
        col("a.t", "id", 1, "int", key=True),
        col("a.t", "Operation", 2, "string"),
        col("a.t", "valid_from", 3, "date"),
        col("a.t", "source_operation", 4, "string"),
        col("a.t", "ID ", 5, "string"),
    ]
    names = [c.name for c in sc.typed_columns(columns)]
    assert names == ["id", "source_operation", "source_valid_from", "source_source_operation", "source_id"]
    result = sc.scaffold(HEADER, columns, named=["a.t"])
    [renamed] = [c for c in models(result)["t_history"]["columns"] if c["name"] == "source_operation"]
    assert "because its own name is a metadata column" in renamed["description"]


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (HEADER + "erp.items,Items!,,,,,\n", "is not a model name"),
        (HEADER + "erp.items,cdc,,,,,\n", "model cdc_history, which the project already has"),
        (HEADER + "erp.items,stock,,,,,\nsalesdb.dbo.orders,stock,,,,,\n", "already published as"),
        (HEADER + "erp.items,stock_history,,,,,\nsalesdb.dbo.orders,stock,,,,,\n", "already published"),
        (HEADER + "erp.items,,,,,,\nerp.items,,,,,,\n", "declares erp.items twice"),
        ("table_id,publish_as\nerp.items,x\n", "expected table_id, publish_as, key_columns"),
    ],
)
def test_bad_declarations_are_refused_with_a_clear_message(seed: str, message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        sc.scaffold(seed, [*ORDERS, *ITEMS])


def test_a_publish_name_clashing_with_a_project_model_is_refused() -> None:
    with pytest.raises(ScaffoldError, match="project already has"):
        sc.scaffold(HEADER + "erp.items,cdc_changes,,,,,\n", ITEMS, other_models={"cdc_changes"})


@pytest.mark.parametrize("table_id", ["Sales.Orders", " a.b", "a..b", "orders.", ""])
def test_bad_table_ids_are_refused(table_id: str) -> None:
    with pytest.raises(ScaffoldError, match="is not a table id"):
        sc.scaffold(HEADER, ORDERS, named=[table_id])


def test_a_table_unknown_to_silver_and_the_seed_is_refused() -> None:
    with pytest.raises(ScaffoldError, match="no table erp.nothing in silver.cdc_table_columns"):
        sc.scaffold(HEADER, ORDERS, named=["erp.nothing"])


def test_a_published_table_missing_from_silver_keeps_its_previous_columns() -> None:
    first = sc.scaffold(HEADER, [*ORDERS, *ITEMS], publish_all=True)
    # Another lakehouse where only the orders are known yet.
    again = sc.scaffold(first.seed_text, ORDERS, previous_yml=first.files[sc.MODELS_YML])
    assert again.files == first.files
    assert any("erp.items is not in silver.cdc_table_columns" in w for w in again.warnings)
    fresh = sc.scaffold(first.seed_text, ORDERS)
    assert "items.sql" not in fresh.files
    assert any("has no columns in silver.cdc_table_columns yet" in w for w in fresh.warnings)


def test_a_new_source_column_becomes_a_new_column() -> None:
    first = sc.scaffold(HEADER, ITEMS, named=["erp.items"])
    added = [*ITEMS, col("erp.items", "NOTE", 3, "string")]
    second = sc.scaffold(first.seed_text, added, previous_yml=first.files[sc.MODELS_YML])
    assert [c["name"] for c in models(second)["items"]["columns"]] == [
        "id",
        "picture",
        "note",
        "valid_from",
        "change_id",
    ]
    assert second.files["items.sql"] == first.files["items.sql"]


def test_models_yml_has_no_yaml_aliases() -> None:
    text = sc.scaffold(HEADER, ORDERS, named=["salesdb.dbo.orders"]).files[sc.MODELS_YML]
    assert "&id" not in text and "*id" not in text


def test_cli_refuses_a_bad_table_id_with_exit_2_before_spark() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "python_ingest", "scaffold", "Sales.Orders"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "error: 'Sales.Orders' is not a table id" in result.stderr


def test_committed_published_models_are_what_scaffold_writes_for_the_committed_seed() -> None:
    root = Path(__file__).resolve().parents[2]
    published = root / sc.PUBLISHED_DIR
    committed = {path.name: path.read_text(encoding="utf-8") for path in published.iterdir()}
    seed = (root / sc.SEED_PATH).read_text(encoding="utf-8")
    # Columns as the committed YAML records them (silver is not needed for this check).
    result = sc.scaffold(seed, [], previous_yml=committed[sc.MODELS_YML])
    assert result.seed_text == seed
    assert result.files == committed


@pytest.mark.parametrize(
    ("spark_type", "expected"),
    [
        ("int", "int"),
        ("Decimal(10, 2)", "decimal(10,2)"),
        ("numeric(5,1)", "decimal(5,1)"),
        ("long", "bigint"),
        ("INTEGER", "int"),
        (None, "string"),
        ("timestamp", "timestamp"),
    ],
)
def test_spark_types_are_spelled_as_spark_does(spark_type: str | None, expected: str) -> None:
    assert sc.spark_type_name(spark_type) == expected


def test_the_grain_uses_the_seed_key_columns_when_they_name_known_columns() -> None:
    typed = sc.typed_columns(ORDERS)
    assert sc.key_names(typed) == ["order_id"]
    assert sc.key_names(typed, "order_id; Placed At") == ["order_id", "placed_at"]
    assert sc.key_names(typed, "no_such_column") == ["order_id"]
    keyless = [col("a.t", "x", 1, "int")]
    result = sc.scaffold(HEADER, keyless, named=["a.t"])
    assert "unique_combination_of_columns" not in result.files[sc.MODELS_YML]


def test_table_ids_as_silver_spells_them_are_accepted() -> None:
    for table_id in ("salesdb.dbo.orders", "crm.customers", "erp.order details", "x.o'brien"):
        sc.validate_table_id(table_id)
    sql = sc.render_sql("x.o'brien", history=True)
    assert sql.splitlines()[-1] == "{{ typed_history('x.o\\'brien') }}"


def test_a_missing_column_registry_is_a_clear_error() -> None:
    class Catalog:
        def tableExists(self, name: str) -> bool:  # noqa: N802 - Spark's spelling
            return False

    class Spark:
        catalog = Catalog()

    with pytest.raises(sc.RegistryMissingError, match="run `dbt build` first"):
        sc.read_source_columns(Spark())
