"""The platform macros, each run through dbt against the embedded lakehouse."""

from __future__ import annotations

import ast
import json
import random
import re
from datetime import datetime, timedelta

import pytest

from python_ingest.bronze import BRONZE_FORMATS, bronze_table

pytestmark = pytest.mark.spark

SCRATCH = "macro_tests"


def unique_combination_sql(dbt, relation: str, columns: list[str]) -> str:
    call = f"test_unique_combination_of_columns(model='{relation}', combination_of_columns={columns})"
    return compile_inline(dbt, "{{ " + call + " }}")


def scan_filters(scan: str) -> str:
    """The filters Spark handed to an Iceberg scan, from its line of `explain`."""
    found = re.search(r"\[filters=(.*?), groupedBy=", scan)
    assert found, scan
    return found.group(1)


def compile_inline(dbt, sql: str, *args: str) -> str:
    result = dbt("compile", "--inline", sql, *args)
    return result.result.results[0].node.compiled_code.strip()


@pytest.fixture(scope="module")
def scratch(spark) -> str:
    spark.sql(f"create database if not exists {SCRATCH}")
    spark.sql(f"create or replace table {SCRATCH}.dups (x int, y string) using iceberg")
    spark.sql(f"insert into {SCRATCH}.dups values (1, 'a'), (1, 'a'), (1, 'b')")
    return SCRATCH


@pytest.mark.parametrize(
    ("custom", "expected"), [("'gold'", "gold"), ("' bronze '", "bronze"), ("none", "silver")]
)
def test_generate_schema_name_uses_the_custom_schema_exactly(dbt, custom: str, expected: str) -> None:
    assert compile_inline(dbt, f"{{{{ generate_schema_name({custom}, none) }}}}") == expected


@pytest.mark.parametrize("source_format", BRONZE_FORMATS)
def test_bronze_table_ddl_matches_what_landing_creates(spark, dbt, scratch, source_format: str) -> None:
    ddl = compile_inline(dbt, f"{{{{ bronze_table_ddl('{source_format}') }}}}")
    assert ddl.startswith(f"create table if not exists bronze.raw_{source_format} (")
    spark.sql(ddl.replace(f"bronze.raw_{source_format}", f"{scratch}.ddl_{source_format}", 1))
    created = [
        (f.name, f.dataType.simpleString()) for f in spark.table(f"{scratch}.ddl_{source_format}").schema
    ]
    assert tuple(created) == bronze_table(source_format).columns
    assert spark.sql(f"select * from {scratch}.ddl_{source_format}.snapshots").count() == 0  # Iceberg


@pytest.mark.parametrize(
    ("columns", "expected"),
    [(["x", "y"], [(1, "a", 2)]), (["x"], [(1, 3)]), (["y"], [("a", 2)])],
)
def test_unique_combination_of_columns_returns_the_repeated_combinations(
    spark, dbt, scratch, columns: list[str], expected: list[tuple]
) -> None:
    sql = unique_combination_sql(dbt, f"{scratch}.dups", columns)
    assert [tuple(row) for row in spark.sql(sql).collect()] == expected


def test_unique_combination_of_columns_passes_on_a_unique_grain(spark, dbt, scratch) -> None:
    spark.sql(
        f"create or replace table {scratch}.uniq using iceberg as select distinct * from {scratch}.dups"
    )
    assert spark.sql(unique_combination_sql(dbt, f"{scratch}.uniq", ["x", "y"])).count() == 0


def grain_sql(dbt, relation: str, arguments: str) -> str:
    return compile_inline(dbt, "{{ test_grain(model='" + relation + "', " + arguments + ") }}")


def test_grain_returns_each_key_with_its_count_and_broken_rules(spark, dbt, scratch) -> None:
    spark.sql(
        f"create or replace table {scratch}.grain using iceberg as select * from values "
        "(1, 'a', 'ok', 'x'), (1, 'a', 'ok', 'x'), (2, 'b', 'bad\\'s', 'x'), (3, null, 'ok', null), "
        "(4, 'd', null, 'x'), (5, 'e', 'ok', 'x') as t(id, label, status, note)"
    )
    arguments = "columns=['id'], not_null=['label'], accepted_values={'status': ['ok', \"it's\"]}"
    rows = spark.sql(grain_sql(dbt, f"{scratch}.grain", arguments)).collect()
    assert sorted((r.id, r.n_records, sorted(r.problems)) for r in rows) == [
        (1, 2, []),
        (2, 1, ["status is not an accepted value"]),
        (3, 1, ["label is null"]),
    ]


def test_grain_passes_a_valid_model_and_allows_nullable_key_columns(spark, dbt, scratch) -> None:
    spark.sql(
        f"create or replace table {scratch}.grain_ok using iceberg as select * from values "
        "('ces', 't1', 1), ('ces', null, 2), ('qlik', null, 2) as t(producer, table_id, version)"
    )
    passing = "columns=['producer', 'table_id'], nullable=['table_id'], accepted_values={'version': [1, 2]}"
    assert spark.sql(grain_sql(dbt, f"{scratch}.grain_ok", passing)).count() == 0
    failing = "columns=['producer', 'table_id'], accepted_values={'version': [1]}"
    rows = spark.sql(grain_sql(dbt, f"{scratch}.grain_ok", failing)).collect()
    assert sorted((r.producer, sorted(r.problems)) for r in rows) == [
        ("ces", ["table_id is null", "version is not an accepted value"]),
        ("qlik", ["table_id is null", "version is not an accepted value"]),
    ]


@pytest.mark.parametrize(
    ("key", "expected"),
    [("'id'", "a.id = b.id"), ("['id', 'part']", "a.id = b.id and a.part = b.part")],
)
def test_key_condition_joins_two_aliases_on_every_key_column(dbt, key: str, expected: str) -> None:
    assert compile_inline(dbt, f"{{{{ key_condition({key}, 'a', 'b') }}}}") == expected


def test_iceberg_rows_after_reads_only_the_files_committed_after_a_sequence(spark, dbt, scratch) -> None:
    table = f"{scratch}.appended"
    spark.sql(f"create or replace table {table} (id int, staged_at timestamp) using iceberg")
    spark.sql(f"insert into {table} values (1, timestamp'2026-01-01 00:00:00')")
    later = "(2, timestamp'2026-01-02 00:00:00'), (3, timestamp'2026-01-03'), (4, null)"
    spark.sql(f"insert into {table} values {later}")
    first, last = spark.sql(f"select min(sequence_number), max(sequence_number) from {table}.entries").first()

    def read(after: int, bound: str = "none") -> tuple[str, list[int]]:
        sql = compile_inline(dbt, f"{{{{ iceberg_rows_after('{table}', {after}, {bound}).sql }}}}")
        return sql, sorted(row.id for row in spark.sql(sql).collect())

    def is_empty(after: int) -> str:
        return compile_inline(dbt, f"{{{{ iceberg_rows_after('{table}', {after}).is_empty }}}}")

    files = f"{{{{ iceberg_new_files('{table}', {first}, 'staged_at') }}}}"
    second_insert = spark.sql(f"select count(*) from {table}.files").first()[0] - 1  # the first wrote one
    assert compile_inline(dbt, files.replace(") }}", ").count }}")) == str(second_insert)
    assert compile_inline(dbt, files.replace(") }}", ").lower_bound }}")) == "2026-01-02 00:00:00"
    assert read(-1)[1] == [1, 2, 3, 4]
    assert read(first)[1] == [2, 3, 4]
    sql, ids = read(first, "'staged_at'")
    assert ids == [2, 3, 4]  # a null in the bound column does not lose its row
    # Iceberg prunes the first file: all its values are below the bound, and it holds no null.
    assert "(rows_after.staged_at >= timestamp'2026-01-02 00:00:00' or rows_after.staged_at is null)" in sql
    sql, ids = read(last, "'staged_at'")
    assert ids == []
    assert "where false" in sql  # nothing new: the table is not read
    assert (is_empty(last), is_empty(first), is_empty(-1)) == ("True", "False", "False")


def test_iceberg_new_files_each_answers_for_every_table_at_once_with_their_landing_bound(
    spark, dbt, scratch
) -> None:
    """One query for several tables gives each what iceberg_new_files gives, and the smallest
    ingested_at of its new files: the end of time with none, none without every file's
    statistic (a table whose metrics are off) or at parse time."""
    columns = "id int, staged_at timestamp, ingested_at timestamp"
    tables = {name: f"{scratch}.files_each_{name}" for name in ("two", "one", "blind")}
    for table in tables.values():
        spark.sql(f"create or replace table {table} ({columns}) using iceberg")
    spark.sql(f"alter table {tables['blind']} set tblproperties ('write.metadata.metrics.default' = 'none')")
    two, one, blind = tables.values()
    for table, row_id, staged, ingested in (
        (two, 1, "2026-01-01", "2026-01-01"),
        (two, 2, "2026-01-03", "2026-01-02"),
        (one, 3, "2026-01-05", "2026-01-04"),
        (blind, 4, "2026-01-05", "2026-01-04"),
    ):
        spark.sql(f"insert into {table} values ({row_id}, timestamp'{staged}', timestamp'{ingested}')")
    first_of_two = spark.sql(f"select min(sequence_number) from {two}.entries").first()[0]
    last_of_one = spark.sql(f"select max(sequence_number) from {one}.entries").first()[0]

    def each(after: list[int], landed: str = "true") -> list[str]:
        call = f"iceberg_new_files_each({list(tables.values())}, {after}, 'staged_at', {landed})"
        sql = "{% for f in " + call + " %}{{ f.count }},{{ f.lower_bound }},{{ f.landed_since }};{% endfor %}"
        return compile_inline(dbt, sql).rstrip(";").split(";")

    assert each([first_of_two, -1, -1]) == [
        "1,2026-01-03 00:00:00,2026-01-02 00:00:00",
        "1,2026-01-05 00:00:00,2026-01-04 00:00:00",
        "1,None,None",  # no statistics: nothing known, so no bound
    ]
    assert each([-1, last_of_one, -1])[:2] == [
        "2,2026-01-01 00:00:00,2026-01-01 00:00:00",
        "0,None,9999-12-31 23:59:59",  # nothing new
    ]
    assert each([-1, -1, -1], landed="false")[0] == "2,2026-01-01 00:00:00,None"
    one_by_one = "{% set f = iceberg_new_files('" + two + f"', {first_of_two}, 'staged_at') %}}"
    one_by_one = compile_inline(dbt, one_by_one + "{{ f.count }},{{ f.lower_bound }}")
    assert one_by_one == "1,2026-01-03 00:00:00"


def test_new_or_held_reads_new_and_held_rows_with_bounds_iceberg_can_skip_files_on(
    spark, dbt, scratch
) -> None:
    """New rows, and with something held the held ids' rows too, in a branch bounded by the
    oldest held row's landing time: each branch's bound reaches Iceberg's scan."""
    upstream = f"{scratch}.held_upstream"
    columns = "message_id string, ingested_at timestamp, staged_at timestamp"
    spark.sql(f"create or replace table {upstream} ({columns}) using iceberg")
    for day, ids in (("01", "ab"), ("02", "cd"), ("03", "e")):
        at = f"timestamp'2026-01-{day} 00:00:00'"
        spark.sql(f"insert into {upstream} values " + ", ".join(f"('{i}', {at}, {at})" for i in ids))
    new_rows = "staged_at > timestamp'2026-01-02 12:00:00'"
    held_ids = "select held.id from values ('c'), ('e') as held (id)"

    def query(held_since: str) -> str:
        call = f'new_or_held(\'{upstream}\', "{new_rows}", "{held_ids}", {held_since})'
        return compile_inline(dbt, "{{ " + call + " }}")

    def ids(sql: str) -> list[str]:
        return sorted(r.message_id for r in spark.sql(sql).collect())

    assert query("none") == f"select * from {upstream} where {new_rows}"
    assert ids(query("none")) == ["e"]
    held = query("'2026-01-02 00:00:00'")
    assert ids(held) == ["c", "e"]  # e once: new, and held too
    # Each branch's bounds reach Iceberg's scan, which skips the older files by their statistics.
    plan = spark.sql(f"explain {held}").first()[0]
    scans = [line for line in plan.splitlines() if "BatchScan" in line and ".held_upstream" in line]
    assert [sorted(c for c in ("staged_at", "ingested_at") if c in scan_filters(s)) for s in scans] == [
        ["staged_at"],
        ["ingested_at", "staged_at"],
    ], plan


def test_merge_new_keys_inserts_new_keys_and_leaves_held_rows_alone(spark, dbt, scratch) -> None:
    spark.sql(
        f"create or replace table {scratch}.held using iceberg as "
        "select * from values (1, 'x', 'first'), (2, 'x', 'first') as t(id, part, label)"
    )
    spark.sql(
        f"create or replace table {scratch}.arriving using iceberg as "
        "select * from values (2, 'x', 'again'), (2, 'y', 'new'), (3, 'x', 'new') as t(id, part, label)"
    )
    call = f"merge_new_keys('{scratch}.held', '{scratch}.arriving', ['id', 'part'])"
    merge = compile_inline(dbt, "{{ " + call + " }}")
    spark.sql(merge)
    spark.sql(merge)  # a second run inserts nothing
    assert sorted(tuple(r) for r in spark.table(f"{scratch}.held").collect()) == [
        (1, "x", "first"),
        (2, "x", "first"),
        (2, "y", "new"),
        (3, "x", "new"),
    ]


def test_a_merge_target_bound_joins_the_merge_condition_and_reaches_the_target_scan(
    spark, dbt, scratch
) -> None:
    """What a model's SQL remembers with bound_merge_target (in node_memo, for its node and the
    invocation) is added to its merges' condition: the target's files below it are skipped, and
    a row matching a target row above it is still not inserted again."""
    spark.sql(
        f"create or replace table {scratch}.bounded (id int, landed timestamp, label string) using iceberg"
    )
    spark.sql(f"insert into {scratch}.bounded values (1, timestamp'2026-01-01 00:00:00', 'first')")
    spark.sql(f"insert into {scratch}.bounded values (2, timestamp'2026-01-02 00:00:00', 'first')")
    spark.sql(
        f"create or replace table {scratch}.arriving_bounded using iceberg as select * from values "
        "(2, timestamp'2026-01-02 00:00:00', 'again'), (3, timestamp'2026-01-03 00:00:00', 'new') "
        "as t(id, landed, label)"
    )
    bound = "dbt_internal_dest.landed >= timestamp'2026-01-02 00:00:00'"
    remember = (
        "{% do adapter.node_memo(invocation_id ~ ':' ~ model.unique_id ~ ':merge_target_bound', \""
        + bound
        + '") %}'
    )
    call = f"merge_new_keys('{scratch}.bounded', '{scratch}.arriving_bounded', 'id')"
    merge = compile_inline(dbt, remember + "{{ " + call + " }}")
    assert f"on dbt_internal_source.id = dbt_internal_dest.id and {bound}" in " ".join(merge.split())
    spark.sql(merge)
    rows = spark.sql(f"select id, label from {scratch}.bounded order by id").collect()
    assert [tuple(r) for r in rows] == [(1, "first"), (2, "first"), (3, "new")]
    # The bound reaches Iceberg's scan of the target (the anti join's side), as a filter.
    plan = spark.sql("explain " + merge).first()[0]
    scans = [line for line in plan.splitlines() if "BatchScan" in line and ".bounded" in line]
    assert scans and all("landed" in scan_filters(line) for line in scans), plan
    # Outside an incremental build (here: an inline compile), the model's SQL bounds nothing.
    unbounded = "{% do bound_merge_target('landed', '2026-01-02 00:00:00') %}{{ merge_target_bound() }}"
    assert compile_inline(dbt, unbounded) in ("", "None")


def test_previous_key_hash_is_the_key_hash_of_the_key_columns_of_a_before_image(spark, dbt) -> None:
    sql = compile_inline(
        dbt,
        "select {{ previous_key_hash(\"'t'\", 'b', 'k') }} as previous, "
        "{{ key_hash(\"'t'\", 'old') }} as old "
        "from values (map('id', '1', 'v', 'x'), map('id', '2'), map('id', '1')), "
        "(map('v', 'x'), map('id', '2'), cast(map() as map<string, string>)), "
        "(cast(null as map<string, string>), map('id', '2'), cast(null as map<string, string>)) "
        "as t(b, k, old)",
    )
    rows = spark.sql(sql).collect()
    # The key columns' values only; a before image without them, or none, names no key's values.
    assert [row.previous == row.old for row in rows] == [True, True, True]
    assert rows[0].previous != rows[1].previous != rows[2].previous


SEVENTY = (1 << 0) | (1 << 63) | (1 << 64) | (1 << 69)
MASKS = [
    ("0B", [1, 2, 4]),
    ("008080", [8, 16]),
    ("00FFFF", list(range(1, 17))),
    ("0b", [1, 2, 4]),
    ("80", [8]),
    ("0000000000000000000001", [1]),
    (f"{SEVENTY:018X}", [1, 64, 65, 70]),  # a 70-column table: wider than 64 bits
    (f"{SEVENTY:x}", [1, 64, 65, 70]),
    ("3F" + "F" * 16, list(range(1, 71))),
    (" 0B ", [1, 2, 4]),
    ("8" + "0" * 2_499, [10_000]),  # a 10,000-column mask: one set bit, found in linear time
    ("", []),
    (None, None),
]


def test_change_mask_ordinals_decode_any_width(spark, dbt) -> None:
    values = ", ".join("(null)" if m is None else f"('{m}')" for m, _ in MASKS)
    sql = compile_inline(
        dbt,
        "select mask, {{ change_mask_ordinals('mask') }} as ordinals, "
        "{{ change_mask_is_valid('mask') }} as ok "
        f"from values {values} as masks(mask)",
    )
    rows = spark.sql(sql).collect()
    assert [(r.mask, r.ordinals) for r in rows] == MASKS
    assert [r.ok for r in rows] == [True] * (len(MASKS) - 1) + [False]
    assert spark.sql(compile_inline(dbt, "select {{ change_mask_is_valid(\"'0x1G'\") }}")).first()[0] is False


def test_change_mask_columns_names_the_set_bits_from_the_metadata(spark, dbt) -> None:
    sql = compile_inline(
        dbt, "select {{ change_mask_columns(\"'1F'\", \"map(1, 'ID', 2, 'NAME', 4, 'SALARY', 5, 'NOTE')\") }}"
    )
    assert spark.sql(sql).first()[0] == ["ID", "NAME", "SALARY", "NOTE"]
    # Bits beyond the metadata's columns are left out (the model quarantines such a mask),
    # whatever order the metadata lists its ordinals in.
    sql = compile_inline(
        dbt, "select {{ change_mask_columns(\"'3FF'\", \"map(2, 'NAME', 1, 'ID', 3, 'X')\") }}"
    )
    assert spark.sql(sql).first()[0] == ["ID", "NAME", "X"]


def test_qlik_unknown_columns_names_the_row_columns_a_version_lacks(spark, dbt) -> None:
    version = "map(1, 'ID', 2, 'TEXT')"
    rows = [
        ("map('ID', '1', 'TEXT', 'a')", "null", []),  # every column known
        ("map('ID', '1', 'LANG', 'en', 'A', null)", "map('ID', '1', 'OLD', 'x')", ["A", "LANG", "OLD"]),
        ("null", "null", []),
    ]
    for data, before, expected in rows:
        call = '{{ qlik_unknown_columns("' + data + '", "' + before + '", "' + version + '") }}'
        [(found,)] = inline_rows(spark, dbt, f"select {call}")
        assert found == expected, (data, before)
    # No version at all: every column of the row is unknown.
    [(found,)] = inline_rows(
        spark, dbt, "select {{ qlik_unknown_columns(\"map('B', '1', 'A', '2')\", 'null', 'null') }}"
    )
    assert found == ["A", "B"]


def inline_rows(spark, dbt, sql: str) -> list:
    return [tuple(r) for r in spark.sql(compile_inline(dbt, sql)).collect()]


def test_map_of_never_throws_on_null_or_repeated_keys(spark, dbt) -> None:
    items = "transform(array('b', null, 'a', 'b'), (k, i) -> named_struct('k', k, 'v', i + 1))"
    [(built,)] = inline_rows(spark, dbt, 'select {{ map_of("' + items + "\", 'map_item.k', 'map_item.v') }}")
    assert built == {"a": 3, "b": 4}  # the null key left out, the last b wins
    [(empty, missing)] = inline_rows(
        spark,
        dbt,
        "select {{ map_of('cast(array() as array<string>)', 'map_item', 'map_item') }}, "
        "{{ map_of('cast(null as array<string>)', 'map_item', '1') }}",
    )
    assert empty == {} and missing is None


def test_map_join_pairs_each_entry_with_the_same_key_of_another_map(spark, dbt) -> None:
    image = "map('id', '7', 'name', null, 'blob', '0A')"
    types = "map('blob', 'varbinary', 'id', 'int', 'other', 'date')"
    call = (
        'map_join("' + image + '", "' + types + "\", 'string', \"concat_ws(':', image_value, lookup_value)\")"
    )
    [(joined,)] = inline_rows(spark, dbt, "select {{ " + call + " }}")
    assert joined == {"id": "7:int", "name": "", "blob": "0A:varbinary"}
    kept = 'map_join("' + image + "\", 'null', 'string', keep='lookup_value is null')"
    [(unmatched,)] = inline_rows(spark, dbt, "select {{ " + kept + " }}")
    assert unmatched == {"id": "7", "name": None, "blob": "0A"}  # a null lookup map matches nothing
    [(some,)] = inline_rows(
        spark, dbt, 'select {{ map_keep_keys("' + image + "\", \"array('blob', 'x', 'blob')\") }}"
    )
    assert some == {"blob": "0A"}


def test_changed_keys_and_merge_images_in_linear_time(spark, dbt) -> None:
    before, after = (
        "map('a', '1', 'b', null, 'c', '3')",
        "map('c', '4', 'b', null, 'd', null, 'a', '1', 'e', '5')",
    )
    [(changed, merged, from_nothing)] = inline_rows(
        spark,
        dbt,
        'select {{ changed_keys("' + before + '", "' + after + '") }}, '
        '{{ merge_images("' + before + "\", \"map('c', '9', 'b', '2')\") }}, "
        "{{ changed_keys('null', \"" + after + '") }}',
    )
    assert changed == ["c", "e"]  # sorted; a null that stays null is no change
    assert merged == {"a": "1", "c": "9", "b": "2"}
    assert from_nothing == ["a", "c", "e"]


def generated_key_changes(rng: random.Random, changes: int) -> list[dict]:
    """One key's changes in sequence order, of every kind history_fold treats apart: inserts,
    snapshots, updates of some columns (c4 is the one the test ignores), deletes, truncates,
    changes sharing a source transaction, images left out, commit times out of order."""
    generated = []
    for number in range(changes):
        operation = rng.choice(["insert", "update", "update", "update", "delete", "snapshot", "truncate"])
        operation = "insert" if number == 0 and operation == "truncate" else operation
        columns = rng.sample(["c1", "c2", "c3", "c4"], rng.randint(0, 4))
        image = {column: rng.choice(["a", "b", None]) for column in columns}
        generated.append(
            {
                "sequence": f"{number:06d}",
                "change_id": f"change-{number}",
                "operation": operation,
                "commit_ts": datetime(2026, 1, 1) + timedelta(seconds=rng.randint(0, 99)),
                "transaction_id": rng.choice([None, f"t{number // 3}", f"t{number // 3}"]),
                "before": rng.choice([None, {"c1": "was"}]),
                "after": None if operation in ("delete", "truncate") or rng.random() < 0.1 else image,
                # An insert may continue another key's row (a key change): its carried image.
                "carried": rng.choice([None, {"c2": "old", "c3": None}]) if operation == "insert" else None,
            }
        )
    return generated


def test_history_fold_in_chunks_makes_the_versions_of_one_fold(spark, dbt) -> None:
    """history_fold folds a long key in chunks (linear time); the versions must be those of one
    fold over all its changes, for every per-table setting and chunk boundary."""
    rng = random.Random(20)
    keys = []
    for key in range(240):  # each setting alone and combined: SCD type, ignored columns, collapse
        settings = (1 if key % 2 else 2, ["c4"] if key // 2 % 2 else [], key // 4 % 2 == 1)
        keys.append((key, *settings, generated_key_changes(rng, rng.choice([1, 2, 5, 7, 9, 40]))))
    schema = (
        "key int, scd_type int, ignore array<string>, collapse boolean, changes array<struct<"
        "sequence: string, change_id: string, operation: string, commit_ts: timestamp, "
        "transaction_id: string, before: map<string, string>, after: map<string, string>, "
        "carried: map<string, string>>>"
    )
    spark.createDataFrame(keys, schema).createOrReplaceTempView("fold_keys")
    arguments = "scd_type='scd_type', ignore_columns='ignore', collapse_transactions='collapse'"
    compared = compile_inline(
        dbt,
        "select key, size(changes) as changes, "
        "to_json({{ history_fold('changes', " + arguments + ", chunk_size=3) }}) as chunked, "
        "to_json({{ history_fold('changes', " + arguments + ", chunk_size=1000) }}) as whole "
        "from fold_keys",
    )
    rows = spark.sql(compared).collect()
    assert [row.key for row in rows if row.chunked != row.whole] == []
    versions = {row.key: len(json.loads(row.whole)) for row in rows}
    assert sum(row.changes > 3 for row in rows) > 100  # folded in chunks
    assert any(0 < versions[row.key] < row.changes for row in rows if row.changes > 3)  # in place


def continuing_changes(spark, links: list[tuple[str, ...]]) -> str:
    """A view of marked_changes' columns that history_passes reads: a change of k1 that continues
    no key and holds the column `big`, one whose before image names its own key, and each link
    (key, old key, sequence, and "all" for an insert that sends `big` too), a continuing insert.
    Returns the CTE that reads it as marked_changes."""
    rows = [("k1", None, "01", False, {"id": "1", "big": "X"}), ("k9", "k9", "02", False, {"id": "9"})]
    for key, old, sequence, *sends in links:
        rows.append((key, old, sequence, True, {"id": key, **({"big": "Y"} if sends else {})}))
    schema = (
        "key_hash string, previous_key_hash string, sequence string, continues_key boolean, "
        "after map<string, string>"
    )
    spark.createDataFrame(rows, schema).createOrReplaceTempView("continuing_changes")
    return (
        "with marked_changes as (select *, 'db.public.docs' as table_id, "
        "cast(null as map<string, string>) as before from continuing_changes)"
    )


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        ([], 1),  # no change continues another key: one fold
        ([("k2", "k1", "03"), ("k3", "k1", "04")], 2),  # k1 continues no key: its first fold is final
        ([("k2", "k1", "03"), ("k1", "k2", "05")], 3),  # perhaps a chain: there and back
        ([("k2", "k1", "05"), ("k3", "k2", "03")], 3),  # perhaps a chain, whatever the order
    ],
)
def test_history_passes_sql_tells_no_key_change_single_links_and_perhaps_a_chain(
    spark, dbt, links: list[tuple[str, ...]], expected: int
) -> None:
    ctes = continuing_changes(spark, links)
    sql = compile_inline(dbt, '{{ history_passes_sql("' + ctes + '") }}')
    assert spark.sql(sql).collect()[0].passes == expected


@pytest.mark.parametrize(
    ("links", "most", "expected"),
    [
        ([("k2", "k1", "03"), ("k1", "k2", "05")], 3, 3),  # there and back, 1 -> 2 -> 1
        ([("k2", "k1", "03"), ("k3", "k2", "04")], 3, 3),  # 1 -> 2 -> 3
        ([("k2", "k1", "05"), ("k3", "k2", "03")], 3, 2),  # k3 continued k2 before k2 began
        ([("k2", "k1", "03"), ("k3", "k2", "04"), ("k4", "k3", "05")], 3, 4),  # one link too many
        ([("k2", "k1", "03"), ("k3", "k2", "04"), ("k4", "k3", "05"), ("k5", "k4", "06")], 3, 4),
        ([("k2", "k1", "03"), ("k3", "k2", "04"), ("k4", "k3", "05")], 5, 4),
        # An insert that sends every column of the chain's images needs no carried image: the
        # chain through it counts as two (1 -> 2, and 3 -> 4), and a chain of such inserts as none.
        ([("k2", "k1", "03"), ("k3", "k2", "04", "all"), ("k4", "k3", "05")], 3, 2),
        ([("k2", "k1", "03", "all"), ("k3", "k2", "04", "all"), ("k4", "k3", "05", "all")], 3, 1),
    ],
)
def test_history_chain_sql_counts_the_links_of_the_longest_chain_in_source_order(
    spark, dbt, links: list[tuple[str, ...]], most: int, expected: int
) -> None:
    """history_chain_sql: the passes a chain needs (its links that leave out a column, plus one) in
    the order the fold takes the changes, up to `most` + 1, which history_passes reports as too
    long to carry."""
    ctes = continuing_changes(spark, links)
    sql = compile_inline(dbt, '{{ history_chain_sql("' + ctes + '", most=' + str(most) + ") }}")
    assert spark.sql(sql).collect()[0].passes == expected


def test_history_chain_links_take_the_columns_of_the_chain_keys_stored_versions(spark, dbt) -> None:
    """history_chain_links with `stored`: inserts that send every column of this run's changes
    still count as links when a stored version of a chain's key holds one more (`extra`)."""
    links = [("k2", "k1", "03", "all"), ("k3", "k2", "04", "all")]
    ctes = continuing_changes(spark, links)
    spark.sql(
        "create or replace temp view stored_chain_versions as select 'db.public.docs' as table_id, "
        "'k1' as key_hash, map('id', '1', 'big', 'X', 'extra', 'E') as row_data"
    )
    call = '{{ history_chain_sql("' + ctes + '", most=3, links=history_chain_links(@)) }}'
    without = compile_inline(dbt, call.replace("@", "none"))
    stored = compile_inline(dbt, call.replace("@", "'stored_chain_versions'"))
    assert spark.sql(without).collect()[0].passes == 1
    assert spark.sql(stored).collect()[0].passes == 3


def test_declared_list_splits_trims_and_drops_empty_names(spark, dbt) -> None:
    cells = ["'id'", "' order_id ; line_no ;'", "';'", "''", "null"]
    sql = compile_inline(
        dbt,
        "select {{ declared_list('cell') }} as names from values "
        + ", ".join(f"({c})" for c in cells)
        + " as cells(cell)",
    )
    assert [r.names for r in spark.sql(sql).collect()] == [["id"], ["order_id", "line_no"], [], [], []]


def test_not_null_columns_returns_the_rows_with_a_null_and_names_the_columns(spark, dbt, scratch) -> None:
    spark.sql(
        f"create or replace table {scratch}.nulls using iceberg as "
        "select * from values (1, 'a', true), (null, 'b', true), (3, null, null) as t(x, y, z)"
    )
    call = f"test_not_null_columns(model='{scratch}.nulls', columns=['x', 'y', 'z'])"
    rows = spark.sql(compile_inline(dbt, "{{ " + call + " }}")).collect()
    assert sorted(r.null_columns for r in rows) == [["x"], ["y", "z"]]
    spark.sql(f"create or replace table {scratch}.no_nulls using iceberg as select 1 as x, 'a' as y")
    passing = f"test_not_null_columns(model='{scratch}.no_nulls', columns=['x', 'y'])"
    assert spark.sql(compile_inline(dbt, "{{ " + passing + " }}")).count() == 0


def test_json_shape_tells_deep_json_from_what_is_not_json_in_linear_time(spark, dbt) -> None:
    deep = '{"a": ' + "[" * 5_000 + "]" * 5_000 + "}"  # beyond what Spark's parser re-writes
    texts = {
        "object": '{"a": [1, {"b": "x"}], "c": null}',
        "deep_100": '{"a": ' + '{"b": ' * 100 + "1" + "}" * 100 + "}",
        "deep_5000": deep,
        "brackets_in_a_string": '{"a": "' + "[" * 100 + '\\\\" ]"}',
        "not_json": "nope",
        "an_array": "[1, 2]",
        "cut_short": deep[:-3000],
    }
    values = ", ".join(f"('{name}', '{text}')" for name, text in texts.items())
    sql = compile_inline(
        dbt,
        "select name, {{ json_shape('text') }} as shape, {{ json_depth('text') }} as depth "
        f"from values {values} as texts(name, text)",
    )
    found = {r.name: (r.shape, r.depth) for r in spark.sql(sql).collect()}
    assert found == {
        "object": ("object", 3),
        "deep_100": ("too_deep", 101),
        "deep_5000": ("too_deep", 5_001),
        "brackets_in_a_string": ("object", 1),
        "not_json": ("not_object", 0),
        "an_array": ("not_object", 1),
        "cut_short": ("too_deep", 5_001),  # deeper than the limit before it breaks off
    }


def test_cdc_is_json_object_accepts_one_strict_json_object_only(spark, dbt) -> None:
    """The lakehouse function behind int_landed__batch_profiles' not_json_object (its Java source:
    adapters/dbt-spark-embedded/dbt/include/spark_embedded/functions/IsJsonObject.java)."""
    spark.sql(compile_inline(dbt, "{{ create_cdc_function('cdc_is_json_object') }}"))
    texts = {
        "object": ('{"a": [1, {"b": null}], "c": "x\\u00e9", "d": -1.5e3}', True),
        "whitespace_around": (' \n {"a": 1} \r\n\t', True),
        "empty_object": ("{}", True),
        "repeated_keys": ('{"a": 1, "a": 2}', True),
        "an_array": ("[1, 2]", False),
        "a_string": ('"text"', False),
        "single_quotes": ("{'a': 1}", False),
        "unquoted_name": ("{a: 1}", False),
        "nan": ('{"a": NaN}', False),
        "leading_zero": ('{"a": 01}', False),
        "trailing_comma": ('{"a": 1,}', False),
        "comment": ('{"a": 1 /* no */}', False),
        "trailing_text": ('{"a": 1} x', False),
        "two_objects": ('{"a": 1} {"b": 2}', False),
        "cut_short": ('{"a": [1, 2', False),
        "control_character": ('{"a": "\u0001"}', False),
        "plain_text": ("plain text", False),
        "empty": ("", False),
        "deep_999": ('{"a": ' + "[" * 998 + "]" * 998 + "}", True),
        "deep_5000": ('{"a": ' + "[" * 5_000 + "]" * 5_000 + "}", False),
        "long_number": ('{"a": ' + "9" * 5_000 + "}", False),
    }
    rows = [(name, text) for name, (text, _) in texts.items()]
    spark.createDataFrame(rows, "name string, text string").createOrReplaceTempView("json_texts")
    checked = spark.sql("select name, cdc_is_json_object(text) as ok from json_texts").collect()
    found = {r.name: r.ok for r in checked}
    assert found == {name: ok for name, (_, ok) in texts.items()}
    assert spark.sql("select cdc_is_json_object(cast(null as string))").first()[0] is None


def test_query_scalar_gives_the_first_value_or_none(dbt) -> None:
    """A watermark query may find no row at all (an empty table read through a filter)."""
    found = compile_inline(
        dbt,
        "{{ query_scalar('select 7') }},{{ query_scalar('select 1 where false') }},"
        "{{ query_scalar('select cast(null as int)') }}",
    )
    assert found == "7,None,None"


def test_query_rows_gives_every_row_with_its_values_in_order(dbt) -> None:
    """The few values a test writes into its SQL as literals
    (tests/dbt/assert_every_bronze_message_has_one_outcome.sql)."""
    found = compile_inline(
        dbt,
        "{% for row in query_rows(\"select 'a' as f, 3 as n union all select 'b', null order by f\") %}"
        "{{ row[0] }}={{ row[1] }};{% endfor %}|{{ query_rows('select 1 where false') | length }}",
    )
    assert found == "a=3;b=None;|0"


def test_create_cdc_functions_registers_every_lakehouse_function(spark, dbt) -> None:
    """The on-run-start hook (dbt_project.yml): after it, a session knows every function of
    cdc_function_classes, as the dbt unit tests of the models that use one need (they run before
    the model's pre-hook)."""
    names = ["cdc_is_json_object", "cdc_json_numbers_as_text"]
    for name in names:
        spark.sql(f"drop temporary function if exists {name}")
    with pytest.raises(Exception, match="UNRESOLVED_ROUTINE"):
        spark.sql("select cdc_is_json_object('{}')").collect()
    dbt("run-operation", "create_cdc_functions")
    row = spark.sql(f"select {names[0]}('{{}}') as a, {names[1]}('[1.50]') as b").collect()[0]
    assert (row.a, row.b) == (True, '["1.50"]')


def test_cdc_json_numbers_as_text_keeps_every_number_as_sent(spark, dbt) -> None:
    """The lakehouse function GoldenGate's staging reads messages through (Java source:
    adapters/dbt-spark-embedded/dbt/include/spark_embedded/functions/JsonNumbersAsText.java):
    from_json of its output has each number's digits as sent, where from_json alone goes
    through a double; text strict JSON rejects comes back as it was."""
    spark.sql(compile_inline(dbt, "{{ create_cdc_function('cdc_json_numbers_as_text') }}"))
    message = (
        '{"a": 17520.00, "b": 123456789012345678901234.50, "c": -0.0, "d": 1.5E+10, "e": 7, '
        '"f": "17520.00", "g": null, "h": true, "i": {"j": [1.10, "x\\u00e9\\"y"]}, "a": 2}'
    )
    texts = [
        ("object", message),
        ("lenient", "{'a': 1.50}"),
        ("truncated", '{"a": 1.50'),
        ("two_values", '{"a": 1.50} {"b": 2}'),
        ("empty", ""),
        ("deep", "[" * 1500 + "]" * 1500),
    ]
    spark.createDataFrame(texts, "name string, text string").createOrReplaceTempView("number_texts")
    found = {
        r.name: r
        for r in spark.sql(
            "select name, text, cdc_json_numbers_as_text(text) as out, "
            "from_json(cdc_json_numbers_as_text(text), 'map<string,string>') as image from number_texts"
        ).collect()
    }
    image = found["object"].image
    assert {k: image[k] for k in "abcdefgh"} == {
        "a": "2",  # the last of a repeated name, as from_json takes it
        "b": "123456789012345678901234.50",
        "c": "-0.0",
        "d": "1.5E+10",
        "e": "7",
        "f": "17520.00",
        "g": None,
        "h": "true",
    }
    assert json.loads(image["i"]) == {"j": ["1.10", 'x\u00e9"y']}
    for name in ("lenient", "truncated", "empty", "deep"):
        assert found[name].out == found[name].text, name
    assert found["two_values"].out == '{"a":"1.50"} {"b":"2"}'
    assert spark.sql("select cdc_json_numbers_as_text(cast(null as string))").first()[0] is None


def test_time_conversions_of_message_values_never_overflow(spark, dbt) -> None:
    """timestamp_millis / timestamp_micros throw on overflow even with ANSI mode off: the macros
    give null beyond the years 1 to 9999, and calendar_timestamp keeps only those years."""
    sql = compile_inline(
        dbt,
        "select {{ epoch_millis_timestamp('9223372036854775807') }}, {{ epoch_millis_timestamp('0') }}, "
        "{{ epoch_micros_timestamp('-9223372036854775808') }}, "
        "{{ calendar_timestamp(\"timestamp'9999-12-31 23:59:59'\") }}, "
        "{{ calendar_timestamp(\"to_timestamp('+10000-01-01')\") }}",
    )
    row = tuple(spark.sql(sql).first())
    assert row[0] is None and row[1] is not None and row[2] is None
    assert row[3] is not None and row[4] is None


def last_commits_call(tables: list[str], skipped: list[str]) -> str:
    # Called at run time only, as the models call it (it reads the tables).
    return f"{{% if execute %}}{{{{ iceberg_last_commits({tables}, {skipped}) }}}}{{% endif %}}"


def last_commits(dbt, tables: list[str], skipped: list[str]) -> dict:
    return ast.literal_eval(compile_inline(dbt, last_commits_call(tables, skipped)))


def test_iceberg_last_commits_skips_the_given_operations_back_to_the_last_write(spark, dbt, scratch) -> None:
    table, empty = f"{scratch}.commits", f"{scratch}.no_commits"
    spark.sql(f"create or replace table {table} (id int) using iceberg")
    spark.sql(f"create or replace table {empty} (id int) using iceberg")
    spark.sql(f"insert into {table} values (1)")
    spark.sql(f"insert into {table} values (2)")
    # A compaction (replace), then a metadata-only delete of every row (delete).
    spark.sql(
        f"call spark_catalog.system.rewrite_data_files(table => '{table}', "
        "options => map('min-input-files', '2'))"
    )
    spark.sql(f"delete from {table} where true")
    commits = {
        r.operation: r.millis
        for r in spark.sql(
            f"select operation, max(unix_millis(committed_at)) as millis from {table}.snapshots "
            "group by operation"
        ).collect()
    }
    assert set(commits) == {"append", "replace", "delete"}
    assert commits["append"] < commits["replace"] < commits["delete"]
    assert last_commits(dbt, [table, empty], []) == {table: commits["delete"], empty: None}
    assert last_commits(dbt, [table], ["delete"]) == {table: commits["replace"]}
    assert last_commits(dbt, [table], ["replace", "delete"]) == {table: commits["append"]}
    # Only the newest snapshots are skipped: a write after them is the last commit again.
    spark.sql(f"insert into {table} values (3)")
    newest = spark.sql(f"select max(unix_millis(committed_at)) from {table}.snapshots").first()[0]
    assert last_commits(dbt, [table], ["replace", "delete"]) == {table: newest}


def test_iceberg_last_commits_counts_the_first_snapshot_of_a_table_built_empty(spark, dbt, scratch) -> None:
    # A model's first build with an empty result, as dbt-spark creates it: its one snapshot is a
    # `delete`, which is still the build (its children are idle against it, not rebuilt forever).
    table = f"{scratch}.built_empty"
    spark.sql(f"drop table if exists {table}")
    spark.sql(f"create or replace table {table} using iceberg as select 1 as id where false")
    [(operation, parent, millis)] = spark.sql(
        f"select operation, parent_id, unix_millis(committed_at) from {table}.snapshots"
    ).collect()
    assert (operation, parent) == ("delete", None)
    assert last_commits(dbt, [table], ["replace", "delete"]) == {table: millis}


def test_iceberg_last_commits_names_a_table_it_cannot_load(dbt, scratch) -> None:
    result = dbt("compile", "--inline", last_commits_call([f"{scratch}.missing"], []), expect_success=False)
    assert not result.success
    # A clear failure that names the table (not a commit time of none, as for a table with no snapshot).
    assert re.search(rf"`?{scratch}`?\.`?missing", str(result.exception)), result.exception


SCOPED = f"{SCRATCH}.scoped"


def scope_condition(dbt, node: dict, key: list[str] | None = None, *args: str) -> str:
    relation = f"api.Relation.create(schema='{SCRATCH}', identifier='scoped')"
    call = f"cdc_test_scope_condition({relation}, {node}, {key if key else 'none'})"
    return compile_inline(dbt, "{{ " + call + " }}", *args)


def scoped_ids(spark, condition: str) -> list[int]:
    if condition == "None":
        return sorted(r.id for r in spark.table(SCOPED).collect())
    return sorted(r.id for r in spark.sql(f"select id from {SCOPED} where {condition}").collect())


def model_node(
    materialized: str, columns: list[str], unique_key: str | None = None, test_scope_bound: str | None = None
) -> dict:
    """What cdc_test_scope_condition reads of a graph node."""
    return {
        "unique_id": f"model.cdc_lakehouse.{SCOPED}",
        "resource_type": "model",
        "config": {
            "materialized": materialized,
            "unique_key": unique_key,
            "test_scope_bound": test_scope_bound,
        },
        "columns": {c: {"name": c} for c in columns},
    }


def test_cdc_test_scope_condition_reads_what_the_last_build_added(spark, dbt, scratch) -> None:
    """A `dbt test` on its own: the rows with the newest staged_at of an incremental model
    (and, for a grain test on another key than the merge key, the older rows sharing a key
    with them); without staged_at, the rows of the last commit's files; whole tables with
    `cdc_test_scope: all`, or for a table (not incremental) that changed."""
    spark.sql(f"create or replace table {SCOPED} (id int, k string, staged_at timestamp) using iceberg")
    spark.sql(
        f"insert into {SCOPED} values "
        "(1, 'a', timestamp'2026-01-01 00:00:00'), (2, 'b', timestamp'2026-01-01 00:00:00')"
    )
    spark.sql(
        f"insert into {SCOPED} values "
        "(3, 'a', timestamp'2026-01-02 00:00:00'), (4, 'c', timestamp'2026-01-02 00:00:00')"
    )
    staged = model_node("incremental", ["id", "k", "staged_at"], unique_key="id")
    condition = scope_condition(dbt, staged)
    assert condition == "staged_at >= timestamp'2026-01-02 00:00:00'"
    assert scoped_ids(spark, condition) == [3, 4]
    # A grain test on the merge key: the new rows are enough.
    assert scoped_ids(spark, scope_condition(dbt, staged, ["id"])) == [3, 4]
    # On another key: also the older row that shares key `a` with a new one.
    assert scoped_ids(spark, scope_condition(dbt, staged, ["k"])) == [1, 3, 4]
    # No staged_at: the rows of the files the last commit added.
    files = scope_condition(dbt, model_node("incremental", ["id", "k"]))
    assert "_file in (select data_file.file_path" in files
    assert scoped_ids(spark, files) == [3, 4]
    # A seed (or other table that is not incremental) that changed: all of it.
    seed = {"unique_id": "seed.cdc_lakehouse.scoped", "resource_type": "seed", "config": {}, "columns": {}}
    assert scope_condition(dbt, seed) == "None"
    # Whole tables when asked.
    assert scope_condition(dbt, staged, None, "--vars", "{cdc_test_scope: all}") == "None"


def test_cdc_test_scope_condition_bounds_the_new_files_by_a_column(spark, dbt, scratch) -> None:
    """Without staged_at, the rows of the last commit's files; with the model's
    `test_scope_bound`, bounded below by that column's smallest value in those files, which
    Iceberg can skip the older files on (it cannot on `_file`). A null in a new file is kept."""
    spark.sql(f"create or replace table {SCOPED} (id int, k string, written_at timestamp) using iceberg")
    spark.sql(
        f"insert into {SCOPED} values "
        "(1, 'a', timestamp'2026-01-01 00:00:00'), (2, 'b', timestamp'2026-01-01 00:00:00')"
    )
    spark.sql(f"insert into {SCOPED} values (3, 'a', timestamp'2026-01-02 00:00:00'), (4, 'c', null)")
    columns = ["id", "k", "written_at"]
    bounded = model_node("incremental", columns, unique_key="id", test_scope_bound="written_at")
    condition = scope_condition(dbt, bounded)
    assert condition.startswith("(written_at >= timestamp'2026-01-02 00:00:00' or written_at is null) and ")
    assert "_file in (select data_file.file_path" in condition
    assert scoped_ids(spark, condition) == [3, 4]
    # The bound reaches Iceberg's scan, which skips the first insert's file by its statistics.
    plan = spark.sql(f"explain select id from {SCOPED} where {condition}").first()[0]
    scans = [line for line in plan.splitlines() if "BatchScan" in line and "entries" not in line]
    [scan] = [line for line in scans if ".scoped" in line]
    assert "written_at" in scan, scan
    # A grain test on another key than the merge key: also the older row sharing key `a`.
    assert scoped_ids(spark, scope_condition(dbt, bounded, ["k"])) == [1, 3, 4]


def test_keys_in_scope_selects_the_rows_sharing_a_key_with_a_row_in_scope(spark, dbt, scratch) -> None:
    keyed = f"{scratch}.keyed"
    spark.sql(f"create or replace table {keyed} (id int, k string, j int) using iceberg")
    spark.sql(f"insert into {keyed} values (1, 'a', 1), (2, 'a', 2), (3, 'b', 1), (4, 'c', 1)")

    def ids(key: list[str], scope: str) -> list[int]:
        condition = compile_inline(dbt, "{{ keys_in_scope(" + f"{key}, '{keyed}', \"{scope}\"" + ") }}")
        return sorted(r.id for r in spark.sql(f"select id from {keyed} where {condition}").collect())

    assert ids(["k"], "id in (1, 3)") == [1, 2, 3]  # keys a and b: row 2 shares a with row 1
    assert ids(["k", "j"], "id = 1") == [1]  # (a, 1): not row 2, (a, 2)
    assert ids(["k"], "false") == []


NAMES = ["Order Date", "9lives", "__", "#alibaba_rds_row_id#", "EMPLOYEE_ID", "a.b-c"]


def test_typed_identifier_sql_names_a_column_or_table_as_scaffold_does(spark, dbt) -> None:
    from cdc_tools.scaffold import sanitize_identifier

    values = ", ".join(f"('{name}')" for name in NAMES)
    sql = compile_inline(
        dbt,
        "select {{ typed_identifier_sql('text', 'c_') }} as column_name, "
        "{{ typed_identifier_sql('text', 't_') }} as table_name "
        f"from values {values} as names (text)",
    )
    found = [(r.column_name, r.table_name) for r in spark.sql(sql).collect()]
    assert found == [(sanitize_identifier(n, "c_"), sanitize_identifier(n, "t_")) for n in NAMES]
    assert found[1:3] == [("c_9lives", "t_9lives"), ("c", "t")]


def test_typed_checked_type_sql_keeps_the_types_a_view_can_declare_and_else_says_string(spark, dbt) -> None:
    cases = {
        "int": "int",
        "Decimal(10, 2)": "decimal(10,2)",
        "decimal(38,38)": "decimal(38,38)",
        "decimal(40,2)": "string",
        "decimal(5,7)": "string",
        "long": "bigint",
        "timestamp": "timestamp",
        "varchar(10)": "string",
        "int) as x from y; --": "string",
    }
    values = ", ".join(f"('{t}')" for t in cases) + ", (null)"
    sql = compile_inline(
        dbt,
        "select {{ typed_checked_type_sql('spark_type') }} as checked "
        f"from values {values} as t (spark_type)",
    )
    assert [r.checked for r in spark.sql(sql).collect()] == [*cases.values(), "string"]


def test_cdc_as_of_returns_the_versions_live_at_a_time(spark, dbt, scratch) -> None:
    # k1: inserted at 10:00, deleted at 11:00, inserted again at 12:00; k2: inserted at 10:30.
    spark.sql(
        f"create or replace table {scratch}.history using iceberg as select * from values "
        "('k1', 1, timestamp'2025-07-01 10:00:00', timestamp'2025-07-01 10:59:59.999999'), "
        "('k1', 2, timestamp'2025-07-01 11:00:00', null), "
        "('k1', 3, timestamp'2025-07-01 12:00:00', timestamp'9999-12-31 00:00:00'), "
        "('k2', 1, timestamp'2025-07-01 10:30:00', timestamp'9999-12-31 00:00:00') "
        "as t (key_hash, version_number, valid_from, live_until)"
    )
    sql = compile_inline(
        dbt,
        "select key_hash, version_number from {{ cdc_as_of('"
        + scratch
        + ".history', \"timestamp'@'\") }} as live",
    )

    def live(at: str) -> list[tuple]:
        return sorted(tuple(r) for r in spark.sql(sql.replace("@", at)).collect())

    assert live("2025-07-01 09:59:59") == []
    assert live("2025-07-01 10:00:00") == [("k1", 1)]
    assert live("2025-07-01 10:45:00") == [("k1", 1), ("k2", 1)]
    assert live("2025-07-01 10:59:59.999999") == [("k1", 1), ("k2", 1)]
    assert live("2025-07-01 11:00:00") == [("k2", 1)]  # deleted: no row
    assert live("2025-07-01 12:30:00") == [("k1", 3), ("k2", 1)]
