"""End to end: land the bundled sample data, `dbt build` twice, `dbt docs generate`.

The SQL models and the Python model read and write Iceberg tables in the
embedded session; a second build with nothing new changes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from python_ingest.bronze import BRONZE_FORMATS
from tests.helpers.tables import stored_tables

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(p for p in (ROOT / "sample_data").glob("*/*") if p.is_dir())


def table_rows(spark, name: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.table(name).collect())


@pytest.fixture(scope="module")
def built(spark, land, dbt, tmp_path_factory):
    for directory in SAMPLES:
        result = land("--format", directory.parent.name, "--container", directory.name, directory)
        assert result.exit_code == 0, result.output
    # A batch with bad input of every kind, next to the samples.
    extra = tmp_path_factory.mktemp("bad") / "bad.jsonl"
    extra.write_bytes(b"{\"ok\": 1}\n[1, 2]\n{'single': 'quotes'}\nplain text\n\xff\xfe\n")
    assert land("--format", "dataworks", "--container", "jsonl", extra).exit_code == 0
    # The suite's one run of the dbt unit tests (other modules' builds leave them out).
    result = dbt("build", unit_tests=True)
    unit_tests = [r for r in result.result.results if r.node.resource_type == "unit_test"]
    files = ROOT.glob("models/**/*unit_tests.yml")
    declared = sum(len(yaml.safe_load(f.read_text(encoding="utf-8"))["unit_tests"]) for f in files)
    assert len(unit_tests) == declared and all(str(r.status) == "pass" for r in unit_tests), unit_tests
    return extra


def test_every_distinct_bronze_message_is_in_silver_once(spark, built) -> None:
    bronze = spark.sql(
        " union all ".join(
            f"select '{f}' as source_format, message_id from bronze.raw_{f}" for f in BRONZE_FORMATS
        )
    ).distinct()
    staged = spark.table("silver.stg_landed__messages")
    assert staged.count() == bronze.count() > 0
    assert staged.select("source_format", "message_id").distinct().count() == staged.count()


def test_batch_profiles_count_bad_input_strictly(spark, built) -> None:
    bad_batch = spark.sql(
        f"select ingest_batch_id from bronze.raw_dataworks where source_uri = '{built.resolve().as_uri()}'"
    ).first()[0]
    profile = (
        spark.table("silver.int_landed__batch_profiles")
        .where(f"source_format = 'dataworks' and ingest_batch_id = '{bad_batch}'")
        .first()
    )
    assert profile.messages == 5
    assert profile.not_utf8 == 1
    # `[1, 2]` is JSON but no object; single quotes are not JSON; plain text is not JSON.
    assert profile.not_json_object == 3
    assert profile.tombstones == 0 and profile.malformed_container == 0
    totals = spark.sql(
        "select source_format, sum(messages) from silver.int_landed__batch_profiles group by 1"
    ).collect()
    staged = spark.sql("select source_format, count(*) from silver.stg_landed__messages group by 1").collect()
    assert sorted(map(tuple, totals)) == sorted(map(tuple, staged))


def snapshots(spark) -> dict[str, int]:
    """The number of Iceberg snapshots of each table of silver and gold."""
    return {
        f"{schema}.{name}": spark.sql(f"select count(*) from {schema}.{name}.snapshots").first()[0]
        for schema in ("silver", "gold")
        for name in stored_tables(spark, schema)
    }


@pytest.fixture(scope="module")
def second_build(spark, dbt, built) -> dict:
    """A second build, with nothing new: the rows of two silver tables and every table's
    snapshots before and after it, and its result."""
    tables = ("silver.stg_landed__messages", "silver.int_landed__batch_profiles")
    before = {"rows": {t: table_rows(spark, t) for t in tables}, "snapshots": snapshots(spark)}
    result = dbt("build")
    after = {"rows": {t: table_rows(spark, t) for t in tables}, "snapshots": snapshots(spark)}
    return {"before": before, "after": after, "result": result}


def test_second_build_changes_nothing(second_build) -> None:
    assert second_build["after"]["rows"] == second_build["before"]["rows"]
    # The seeds' CSVs did not change: their tables are not reloaded.
    results = second_build["result"].result.results
    seeds = {r.node.name: r.message for r in results if r.node.resource_type == "seed"}
    assert seeds == {"cdc_tables": "UNCHANGED", "cdc_declared_columns": "UNCHANGED"}
    assert (
        second_build["after"]["snapshots"]["silver.cdc_tables"]
        == second_build["before"]["snapshots"]["silver.cdc_tables"]
    )


def test_a_build_with_nothing_new_leaves_every_incremental_model_as_it_is(second_build) -> None:
    """Idle models (the adapter's macros/idle_models.sql): no query, no merge, no Iceberg snapshot."""
    messages = {
        r.node.name: r.message
        for r in second_build["result"].result.results
        if r.node.resource_type == "model" and r.node.config.materialized == "incremental"
    }
    assert messages and set(messages.values()) == {"IDLE"}, messages
    assert second_build["after"]["snapshots"] == second_build["before"]["snapshots"]


def test_a_batch_landed_across_builds_is_profiled_whole(spark, dbt, built) -> None:
    """A batch still landing when dbt ran gets its later messages added to its profile."""
    where = f"source_uri = '{built.resolve().as_uri()}'"
    before = spark.sql(f"select * from bronze.raw_dataworks where {where} order by source_offset").collect()
    # One more message of the same batch, landed later (as by a landing run still going).
    spark.sql(
        "insert into bronze.raw_dataworks "
        "select concat(message_id, '-late'), source_uri, source_partition, source_offset + 100, message_key, "
        "'still not json', headers, enqueued_at, ingested_at + interval 1 minute, ingest_batch_id "
        f"from bronze.raw_dataworks where {where} and source_offset = {before[0].source_offset}"
    )
    dbt("run", "-s", "stg_landed__messages", "int_landed__batch_profiles")
    profile = (
        spark.table("silver.int_landed__batch_profiles")
        .where(f"source_format = 'dataworks' and ingest_batch_id = '{before[0].ingest_batch_id}'")
        .collect()
    )
    assert [(p.messages, p.not_json_object, p.ingested_at) for p in profile] == [
        (len(before) + 1, 4, min(r.ingested_at for r in before))
    ]


def test_data_tests_read_what_the_last_build_added_unless_told_all(spark, dbt, built) -> None:
    """A data test reads the rows its model's last build added (macros/test_scope/test_scope.sql):
    a bad row added then fails it; one added by an earlier build is found by the whole-table
    run (`cdc_test_scope: all`) only."""
    table = "silver.int_ces__segments"
    newest = spark.sql(f"select max(staged_at) from {table}").first()[0]

    def add_bad_row(staged_at: str) -> None:
        # A segment without its event (event_key is never null): what a broken build would add.
        replaced = {"message_id": "concat(message_id, '-bad')", "event_key": "null", "staged_at": staged_at}
        columns = ", ".join(replaced.get(c, c) for c in spark.table(table).columns)
        spark.sql(f"insert into {table} select {columns} from {table} limit 1")

    def failures(*args: str) -> list[str]:
        result = dbt("test", "-s", "int_ces__segments", *args, expect_success=False)
        return [r.node.name for r in result.result.results if str(r.status) == "fail"]

    grain = "grain_int_ces__segments_message_id__event_key__is_duplicate"
    try:
        add_bad_row(f"timestamp'{newest}' - interval 1 day")
        assert failures() == []
        assert failures("--vars", "{cdc_test_scope: all}") == [grain]
        add_bad_row("current_timestamp()")
        assert failures() == [grain]
    finally:
        spark.sql(f"delete from {table} where message_id like '%-bad'")
    assert failures("--vars", "{cdc_test_scope: all}") == []


def test_a_builds_accounting_test_checks_the_messages_landed_again(spark, dbt, built) -> None:
    """A message landed again (a redelivery, staged by an earlier build) is looked up in staging
    and in the outcomes of earlier builds: given a second outcome there, the build's scoped
    accounting test (tests/dbt/assert_every_bronze_message_has_one_outcome.sql) fails. A
    `dbt test` of it on its own then checks every message, whole."""
    outcomes = "silver.int_ces__message_outcomes"
    again = spark.sql(f"select message_id from {outcomes} order by message_id limit 1").first()[0]
    # Another CES message, of another event: staging then reads and stages CES messages in the
    # build, and the outcome of the message landed again is not decided again (its event is
    # not regrouped).
    other = spark.sql(
        "select message_id from silver.int_ces__segments where event_key not in "
        f"(select event_key from silver.int_ces__segments where message_id = '{again}') "
        "order by message_id limit 1"
    ).first()[0]

    def copy(table: str, message_id: str, replaced: dict[str, str]) -> None:
        names = spark.table(table).columns
        columns = ", ".join(f"{replaced[c]} as {c}" if c in replaced else c for c in names)
        spark.sql(f"insert into {table} select {columns} from {table} where message_id = '{message_id}'")

    test = "assert_every_bronze_message_has_one_outcome"
    copy(outcomes, again, {"detail": "'a second outcome'"})
    try:
        copy("bronze.raw_ces", again, {"ingested_at": "current_timestamp()"})  # landed again
        new_id = {"message_id": "concat(message_id, '-new')", "ingested_at": "current_timestamp()"}
        copy("bronze.raw_ces", other, new_id)
        result = dbt("build", "-s", f"+{test}", "--exclude-resource-type", "unit_test", expect_success=False)
        assert [r.failures for r in result.result.results if r.node.name == test] == [1]
    finally:
        spark.sql(f"delete from {outcomes} where detail = 'a second outcome'")
    result = dbt("test", "-s", test)
    assert [str(r.status) for r in result.result.results if r.node.name == test] == ["pass"]


def test_a_lakehouse_built_before_a_rename_keeps_the_renamed_models_data(spark, dbt, built) -> None:
    """A lakehouse whose tables carry the models' old names (macros/platform/renamed_models.sql):
    the next build renames them and goes on incrementally from what they hold."""
    renamed = {
        "stg_bronze__messages": "stg_landed__messages",
        "int_bronze__batch_profiles": "int_landed__batch_profiles",
    }
    before = {new: spark.table(f"silver.{new}").count() for new in renamed.values()}
    staged_before = spark.sql("select max(staged_at) from silver.stg_landed__messages").first()[0]
    for old, new in renamed.items():
        spark.sql(f"alter table silver.{new} rename to silver.{old}")
    # One message landed since, so that staging reads something on the next build.
    spark.sql(
        "insert into bronze.raw_dataworks select concat(message_id, '-after-rename'), source_uri, "
        "source_partition, source_offset + 1000, message_key, message_value, headers, enqueued_at, "
        "current_timestamp(), concat(ingest_batch_id, '-after-rename') from bronze.raw_dataworks limit 1"
    )
    dbt("run", "-s", *renamed.values())
    names = {row.tableName for row in spark.sql("show tables in silver").collect()}
    assert not names & set(renamed) and set(renamed.values()) <= names
    staged = spark.sql(
        f"select count_if(staged_at <= timestamp'{staged_before}'), count(*) from silver.stg_landed__messages"
    ).first()
    assert tuple(staged) == (before["stg_landed__messages"], before["stg_landed__messages"] + 1)
    assert (
        spark.table("silver.int_landed__batch_profiles").count() == before["int_landed__batch_profiles"] + 1
    )


def test_relations_are_iceberg_and_python_model_ran_in_session(spark, built) -> None:
    for table in ("silver.stg_landed__messages", "silver.int_landed__batch_profiles"):
        assert spark.sql(f"select * from {table}.snapshots").count() >= 1


def test_values_that_do_not_fit_their_type_are_null_not_errors(spark, dbt, built) -> None:
    """Spark 4 turns ANSI mode on by default; the session that landing and dbt share runs with
    it off, so a message's value that does not fit its type becomes null (and is reported by
    the model's reason or a warn test) instead of failing the query."""
    assert spark.conf.get("spark.sql.ansi.enabled") == "false"
    row = spark.sql(
        "select cast('x' as int) as not_a_number, cast('99999999999' as int) as too_big, "
        "cast('2025-13-45' as timestamp) as not_a_time, element_at(array(1), 5) as beyond"
    ).first()
    assert tuple(row) == (None, None, None, None)


def test_docs_generate_documents_every_model_and_column(spark, dbt, built) -> None:
    dbt("docs", "generate")
    target = Path(os.environ.get("DBT_TARGET_PATH", ROOT / "target"))  # tests/conftest.py sets it
    manifest = json.loads((target / "manifest.json").read_text())
    catalog = json.loads((target / "catalog.json").read_text())
    models = [n for n in manifest["nodes"].values() if n["resource_type"] == "model"]
    assert models
    for node in models:
        assert node["description"].strip(), f"{node['name']} has no description"
        documented = set(node["columns"])
        built_columns = {c.lower() for c in catalog["nodes"][node["unique_id"]]["columns"]}
        assert built_columns == documented, f"{node['name']}: columns {built_columns ^ documented}"
        assert all(c["description"].strip() for c in node["columns"].values()), node["name"]
    for source in manifest["sources"].values():
        assert source["description"].strip()
        assert all(c["description"].strip() for c in source["columns"].values())
    # The row counts are what a query returns (not Iceberg's summary, which counts deleted rows).
    for name in ("cdc_history", "cdc_typed_tables"):
        stats = catalog["nodes"][f"model.cdc_lakehouse.{name}"]["stats"]
        assert stats["rows"]["value"] == spark.table(f"gold.{name}").count() > 0, (name, stats)


QUARANTINE_TEST = "warn_when_a_build_quarantines_too_many_messages"


def test_a_build_reports_what_became_of_its_messages(land, dbt, built, tmp_path) -> None:
    """A build logs, per producer, the messages it decided and their outcomes, the most frequent
    quarantine reasons and, above the threshold (var cdc_max_quarantined_share), a warning that
    names silver.cdc_quarantine; the data test warns with the number quarantined, and fails when
    its severity is set to error (macros/platform/run_report.sql)."""
    from dbt.cli.main import dbtRunner

    bad = tmp_path / "binary.jsonl"
    bad.write_bytes(b"\xff\xfe\x00\x01\n" * 3 + b"[1, 2]\n")
    assert land("--format", "dataworks", "--container", "jsonl", "--force", bad).exit_code == 0
    logged: list[str] = []

    def keep(event) -> None:
        if event.info.name == "JinjaLogInfo":
            logged.extend(event.info.msg.splitlines())

    arguments = ["--project-dir", str(ROOT), "--profiles-dir", str(ROOT), "--quiet"]
    result = dbtRunner(callbacks=[keep]).invoke(["build", "--exclude-resource-type", "unit_test", *arguments])
    assert result.success, result.exception
    # Only DataWorks messages were new: the other producers' models are idle, from their staging
    # model on (macro new_bronze_messages), instead of merging nothing and committing it.
    others = {
        r.node.name: r.message
        for r in result.result.results
        if r.node.name.startswith(
            tuple(f"{kind}_{p}__" for kind in ("stg", "int") for p in ("ces", "debezium", "qlik"))
        )
    }
    assert len(others) >= 12 and set(others.values()) == {"IDLE"}, others
    assert "Messages this build decided (silver.cdc_message_outcomes):" in logged, logged
    [dataworks] = [line for line in logged if line.startswith("  dataworks: ")]
    staged, quarantined = int(dataworks.split()[1]), int(dataworks.split()[-2])
    assert quarantined >= 4 and staged >= quarantined, dataworks
    assert any(line.startswith("    ") and " x dataworks: " in line for line in logged), logged
    [warning] = [line for line in logged if line.startswith("WARNING: ")]
    assert "silver.cdc_quarantine" in warning and "cdc_max_quarantined_share" in warning, warning
    [test] = [r for r in result.result.results if r.node.name == QUARANTINE_TEST]
    assert str(test.status) == "warn" and test.failures >= quarantined, (test.status, test.failures)

    failing = dbt(
        "test",
        "--select",
        QUARANTINE_TEST,
        "--vars",
        "{cdc_quarantined_share_severity: error, cdc_max_quarantined_share: 0}",
        expect_success=False,
    )
    assert [str(r.status) for r in failing.result.results if r.node.name == QUARANTINE_TEST] == ["fail"]


def test_status_accounts_for_every_landed_message(built, capsys) -> None:
    """`python -m python_ingest status`: per producer, the landed messages add up to their
    outcomes and those not built yet; per table, changes and live rows; the last build and the
    services (cdc_cli/status_report.py)."""
    from cdc_cli import main

    assert main(["status"]) == 0
    output = capsys.readouterr().out
    lines = output.splitlines()
    assert lines[0].startswith("lakehouse ") and lines[1].startswith("services: metastore on 127.0.0.1:")
    assert lines[2].startswith("last build: ") and "UTC" in lines[2]
    header = next(i for i, line in enumerate(lines) if line.startswith("producer") and "landed" in line)
    assert lines[header].split()[1:8] == [
        "landed",
        "applied",
        "duplicate",
        "control",
        "pending",
        "quarantined",
        "not",
    ]
    producers = {}
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        name, *counts = line.split()[:8]
        producers[name] = [int(n) for n in counts]
    assert {"ces", "debezium", "dataworks", "qlik"} <= set(producers), output
    for name, (landed, *outcomes, not_built) in producers.items():
        # Every landed message has been built by now: each has exactly one outcome.
        assert not_built == 0 and landed == sum(outcomes) > 0, (name, landed, outcomes, not_built)
    assert any(line.startswith("qlik        hr.employees") for line in lines), output
    assert "quarantined: read silver.cdc_quarantine" in output
