"""The Debezium value decoding of the dbt Python model int_debezium__decoded,
tested as plain functions (the model file is a module without dbt)."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

MODELS = Path(__file__).resolve().parents[2] / "models"
MODEL = MODELS / "silver" / "intermediate" / "debezium" / "int_debezium__decoded.py"
spec = importlib.util.spec_from_file_location("int_debezium__decoded", MODEL)
decoded = importlib.util.module_from_spec(spec)
spec.loader.exec_module(decoded)

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def connect_decimal(unscaled: int) -> str:
    """Base64 of the minimal big-endian two's-complement bytes of `unscaled`."""
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


def decimal_field(scale: int) -> dict:
    return {"field": "d", "type": "bytes", "name": DECIMAL, "parameters": {"scale": str(scale)}}


@pytest.mark.parametrize("length", range(1, 17))
@pytest.mark.parametrize("sign", [1, -1])
def test_decimal_bytes_of_every_length_decode_exactly(length: int, sign: int) -> None:
    unscaled = sign * (2 ** (8 * length - 1) - 1 - 12345 % length)  # fills `length` bytes
    encoded = connect_decimal(unscaled)
    assert len(base64.b64decode(encoded)) == length
    digits = str(abs(unscaled)).rjust(4, "0")
    expected = ("-" if sign < 0 else "") + f"{int(digits[:-3])}.{digits[-3:]}"
    assert decoded.decode_value(encoded, decimal_field(3)) == expected


@pytest.mark.parametrize(
    ("unscaled", "scale", "text"),
    [
        (1250, 2, "12.50"),
        (-30000, 4, "-3.0000"),
        (0, 2, "0.00"),
        (-1, 0, "-1"),
        (5, 3, "0.005"),
        (-128, 1, "-12.8"),
    ],
)
def test_decimal_text_keeps_the_scale_in_plain_notation(unscaled: int, scale: int, text: str) -> None:
    assert decoded.decode_value(connect_decimal(unscaled), decimal_field(scale)) == text


def test_variable_scale_decimal_takes_its_scale_from_the_value() -> None:
    field = {"field": "v", "type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}
    value = {"scale": 3, "value": connect_decimal(-123456)}
    assert decoded.decode_value(value, field) == "-123.456"


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("io.debezium.time.Date", 20161, "2025-03-14"),
        ("io.debezium.time.Date", -1, "1969-12-31"),
        ("io.debezium.time.Time", 37_800_500, "10:30:00.5"),
        ("io.debezium.time.MicroTime", 37_800_000_001, "10:30:00.000001"),
        ("io.debezium.time.NanoTime", 37_800_123_456_789, "10:30:00.123456"),
        ("io.debezium.time.Timestamp", 1_741_946_400_000, "2025-03-14 10:00:00"),
        ("io.debezium.time.Timestamp", 1_741_946_400_120, "2025-03-14 10:00:00.12"),
        ("io.debezium.time.MicroTimestamp", 1_741_946_400_123_456, "2025-03-14 10:00:00.123456"),
        ("io.debezium.time.NanoTimestamp", 1_741_946_400_123_456_789, "2025-03-14 10:00:00.123456"),
        ("io.debezium.time.MicroTimestamp", -1, "1969-12-31 23:59:59.999999"),
        (
            "io.debezium.time.ZonedTimestamp",
            "2025-03-14T10:00:00.1234567+05:30",
            "2025-03-14 04:30:00.123456",
        ),
        ("io.debezium.time.ZonedTimestamp", "2025-03-14T23:30:00Z", "2025-03-14 23:30:00"),
        ("io.debezium.time.ZonedTimestamp", "2025-03-14T23:30:00.5-01:00", "2025-03-15 00:30:00.5"),
    ],
)
def test_temporal_types_decode_to_the_contract_text_in_utc(name: str, value, text: str) -> None:
    assert decoded.decode_value(value, {"field": "t", "type": "int64", "name": name}) == text


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [
        ({"type": "boolean"}, True, "true"),
        ({"type": "boolean"}, False, "false"),
        ({"type": "int32"}, 105, "105"),
        ({"type": "int64"}, "9007199254740993", "9007199254740993"),
        ({"type": "float64"}, 1.5, "1.5"),
        ({"type": "bytes"}, "AQL/", "AQL/"),
        ({"type": "string"}, "text", "text"),
        ({"type": "string"}, None, None),
        # As real Debezium 3.5 sends them (tests/e2e/test_real_producers.py): a PostgreSQL
        # text[] as a JSON array, written back compact with its characters as they are (as
        # PostgreSQL's array_to_json writes it); interval as MicroDuration, uuid, json and
        # enum as text; MariaDB's BOOLEAN (TINYINT(1)) as an int16.
        (
            {"type": "array", "items": {"type": "string", "optional": True}},
            ["x", "y z", None, 'q"', "Zoë", "back\\slash"],
            '["x","y z",null,"q\\"","Zoë","back\\\\slash"]',
        ),
        ({"type": "array", "items": {"type": "int32", "optional": True}}, [], "[]"),
        ({"type": "int64", "name": "io.debezium.time.MicroDuration"}, 37_091_106_789_000, "37091106789000"),
        (
            {"type": "string", "name": "io.debezium.data.Uuid"},
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ),
        ({"type": "string", "name": "io.debezium.data.Json"}, '{"b": 1, "a": [1,2]}', '{"b": 1, "a": [1,2]}'),
        (
            {"type": "string", "name": "io.debezium.data.Enum", "parameters": {"allowed": "sad,ok"}},
            "ok",
            "ok",
        ),
        ({"type": "int16"}, 1, "1"),
    ],
)
def test_plain_types_pass_in_their_text_form(field: dict, value, text: str | None) -> None:
    assert decoded.decode_value(value, {"field": "c", **field}) == text


def test_a_value_that_does_not_fit_its_type_is_an_error_naming_the_column() -> None:
    with pytest.raises(decoded.DecodeError, match="'amount'"):
        decoded.decode_value("not base64!", {**decimal_field(2), "field": "amount"})


def test_declared_types_decode_schemaless_values() -> None:
    assert decoded.declared_field("w", "decimal(10,3)")["parameters"]["scale"] == "3"
    fields = {
        c: decoded.declared_field(c, t)
        for c, t in [("d", "io.debezium.time.Date"), ("w", "decimal(10,3)"), ("n", "int32")]
    }
    image = json.dumps({"d": 20161, "w": connect_decimal(-1500), "n": 7, "x": "as sent"})
    assert decoded.decode_image(image, fields) == {"d": "2025-03-14", "w": "-1.500", "n": "7", "x": "as sent"}


def test_the_toast_placeholder_is_left_out_of_the_image() -> None:
    image = json.dumps({"id": 1, "body": "__debezium_unavailable_value", "raw": decoded.UNAVAILABLE_BYTES})
    assert decoded.decode_image(image, {}) == {"id": "1"}


# The placeholder in the form each column type gives it, as the PostgreSQL connector 3.5 sent
# them for unchanged TOASTed columns (docs/real_producers.md, "Unchanged TOASTed values").
PLACEHOLDERS = {
    "text": "__debezium_unavailable_value",
    "jsonb": "__debezium_unavailable_value",
    "bytea": "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==",
    "text[]": ["__debezium_unavailable_value"],
    "int[]": [95, 95, 100, 101, 98, 101, 122, 105, 117, 109, 95, 117, 110, 97, 118, 97, 105, 108]
    + [97, 98, 108, 101, 95, 118, 97, 108, 117, 101],
    "bytea[]": ["X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="],
    "uuid[]": ["b68a35a7-17ad-35b3-af2a-ae46edb4545a"],
    "hstore (json)": '{"__debezium_unavailable_value":"__debezium_unavailable_value"}',
    "hstore (map)": {"__debezium_unavailable_value": "__debezium_unavailable_value"},
    "point": {"x": -99999999.0, "y": -99999999.0, "wkb": "AQ==", "srid": None},
}


@pytest.mark.parametrize("column_type", sorted(PLACEHOLDERS))
def test_the_placeholder_of_every_column_type_is_left_out(column_type: str) -> None:
    image = json.dumps({"id": 1, "c": PLACEHOLDERS[column_type]})
    assert decoded.decode_image(image, {}) == {"id": "1"}


@pytest.mark.parametrize(
    "value", [["x", "__debezium_unavailable_value"], [95, 95], {"a": "__debezium_unavailable_value"}, "x"]
)
def test_values_that_only_resemble_a_placeholder_are_kept(value) -> None:
    assert "c" in decoded.decode_image(json.dumps({"c": value}), {})


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [
        # MariaDB TIME: negative and beyond a day; the sign is the whole value's.
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, -3_020_399_000_000, "-838:59:59"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, -5_400_250_000, "-01:30:00.25"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, -1_000_000, "-00:00:01"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, 3_020_399_000_000, "838:59:59"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, 86_400_000_000, "24:00:00"),
        # Bits: little-endian bytes, as the number MariaDB's `b + 0` prints.
        ({"type": "bytes", "name": "io.debezium.data.Bits"}, "/wM=", "1023"),
        ({"type": "bytes", "name": "io.debezium.data.Bits"}, "AQA=", "1"),
        ({"type": "bytes", "name": "io.debezium.data.Bits"}, "", "0"),
        ({"type": "bytes", "name": "io.debezium.data.Bits"}, "//////////8=", "18446744073709551615"),
        # interval.handling.mode=string, in PostgreSQL's own output style.
        (
            {"type": "string", "name": "io.debezium.time.Interval"},
            "P1Y2M3DT4H5M6.789S",
            "1 year 2 mons 3 days 04:05:06.789",
        ),
        ({"type": "string", "name": "io.debezium.time.Interval"}, "P0Y0M-3DT4H0M0S", "-3 days +04:00:00"),
        (
            {"type": "string", "name": "io.debezium.time.Interval"},
            "P-1Y-2M3DT-4H-5M-6.000001S",
            "-1 years -2 mons +3 days -04:05:06.000001",
        ),
        (
            {"type": "string", "name": "io.debezium.time.Interval"},
            "P0Y0M0DT0H0M1.003690999S",
            "00:00:01.003691",
        ),
        ({"type": "string", "name": "io.debezium.time.Interval"}, "P0Y0M0DT25H0M0S", "25:00:00"),
        ({"type": "string", "name": "io.debezium.time.Interval"}, "P0Y0M0DT0H0M0S", "00:00:00"),
        (
            {"type": "string", "name": "io.debezium.time.Interval"},
            "P-178000000Y0M0DT0H0M0S",
            "-178000000 years",
        ),
        # timetz in UTC.
        ({"type": "string", "name": "io.debezium.time.ZonedTime"}, "10:00Z", "10:00:00Z"),
        ({"type": "string", "name": "io.debezium.time.ZonedTime"}, "13:45:30.5+02:00", "11:45:30.5Z"),
        # Floating point: the shortest text that reads back as the same number.
        ({"type": "double"}, 100.0, "100"),
        ({"type": "double"}, "NaN", "NaN"),
        ({"type": "double"}, "-Infinity", "-Infinity"),
        ({"type": "float"}, 3.4028234663852886e38, "3.4028235e+38"),
        ({"type": "float"}, 0.10000000149011612, "0.1"),
        ({"type": "float"}, -0.0, "-0"),
        # BIGINT UNSIGNED, bigint.unsigned.handling.mode=precise: a Decimal of scale 0.
        (
            {
                "type": "bytes",
                "name": DECIMAL,
                "parameters": {"scale": "0", "connect.decimal.precision": "20"},
            },
            "AP//////////",
            "18446744073709551615",
        ),
        # Geometries: a point as PostgreSQL prints one, others as WKB in base64.
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Point"},
            {"x": 1.5, "y": 2.0, "wkb": "AQ==", "srid": None},
            "(1.5,2)",
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Geometry"},
            {"wkb": "AQE=", "srid": None},
            "AQE=",
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Geometry"},
            {"wkb": "AQE=", "srid": 4326},
            "SRID=4326;AQE=",
        ),
    ],
)
def test_lossless_connector_settings_decode_to_the_databases_values(field: dict, value, text: str) -> None:
    assert decoded.decode_value(value, {"field": "c", **field}) == text


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("io.debezium.time.MicroTimestamp", -62_135_596_800_000_000, "0001-01-01 00:00:00"),
        ("io.debezium.time.Timestamp", -62_135_596_800_000, "0001-01-01 00:00:00"),
        ("io.debezium.time.ZonedTimestamp", "0999-12-31T23:59:59.5Z", "0999-12-31 23:59:59.5"),
    ],
)
def test_years_below_1000_keep_four_digits(name: str, value, text: str) -> None:
    assert decoded.decode_value(value, {"field": "c", "type": "", "name": name}) == text


def test_an_interval_debezium_did_not_write_is_an_error() -> None:
    with pytest.raises(decoded.DecodeError, match="ISO 8601"):
        decoded.decode_value("1 year", {"field": "c", "type": "string", "name": "io.debezium.time.Interval"})


def test_a_key_change_names_the_old_key_decoded_with_the_keys_schema() -> None:
    key_schema = {
        "type": "struct",
        "fields": [{"field": "day", "type": "int32", "name": "io.debezium.time.Date"}],
    }
    create = message(
        key_text=json.dumps({"day": 20161}),
        key_schema_text=json.dumps(key_schema),
        old_key_text=json.dumps({"day": 20160}),
        after_text="{}",
    )
    result = decoded.decode_message(create, {})
    assert result["primary_key"] == {"day": "2025-03-14"} and result["previous_key"] == {"day": "2025-03-13"}
    assert decoded.decode_message(message(key_text='{"id": 1}', after_text="{}"), {})["previous_key"] is None
    broken = message(key_text='{"id": 1}', old_key_text="[1]", after_text="{}")
    assert "__debezium.oldkey" in decoded.decode_message(broken, {})["decode_error"]


def message(**values) -> SimpleNamespace:
    row = dict.fromkeys(decoded.INPUT_COLUMNS)
    row.update(table_id="t.s.x", message_kind="row", operation_code="c")
    row.update(values)
    return SimpleNamespace(**row)


def test_the_key_comes_from_the_kafka_key_decoded_with_its_schema() -> None:
    key_schema = {
        "type": "struct",
        "fields": [{"field": "day", "type": "int32", "name": "io.debezium.time.Date"}],
    }
    row = message(
        key_text=json.dumps({"day": 20161}), key_schema_text=json.dumps(key_schema), after_text="{}"
    )
    assert decoded.decode_message(row, {})["primary_key"] == {"day": "2025-03-14"}


def test_the_key_schema_in_connect_internal_form_is_understood() -> None:
    key_schema = {"fields": [{"name": "id", "index": "0", "schema": {"type": "INT32", "optional": "false"}}]}
    row = message(key_text='{"id": "1"}', key_schema_text=json.dumps(key_schema), after_text='{"id": 1}')
    assert decoded.decode_message(row, {})["primary_key"] == {"id": "1"}


def test_without_a_kafka_key_the_declared_key_columns_are_used() -> None:
    declared = {"t.s.x": {"id": ("int32", True, 1), "v": ("string", False, 2)}}
    insert = message(after_text='{"id": 4, "v": "a"}')
    delete = message(operation_code="d", before_text='{"id": 4, "v": null}')
    assert decoded.decode_message(insert, declared)["primary_key"] == {"id": "4"}
    assert decoded.decode_message(delete, declared)["primary_key"] == {"id": "4"}
    assert decoded.decode_message(insert, {})["primary_key"] is None


def test_columns_come_from_the_value_schema_with_spark_types() -> None:
    fields = [
        {"field": "id", "type": "int32"},
        {
            "field": "amount",
            "type": "bytes",
            "name": DECIMAL,
            "parameters": {"scale": "2", "connect.decimal.precision": "10"},
        },
        {"field": "at", "type": "int64", "name": "io.debezium.time.MicroTimestamp"},
    ]
    row = message(
        key_text='{"id": 1}',
        after_text='{"id": 1, "amount": "AQ==", "at": 0}',
        after_schema_text=json.dumps(fields),
    )
    columns = decoded.decode_message(row, {})["source_columns"]
    assert [(c["column_name"], c["ordinal"], c["spark_type"], c["is_primary_key"]) for c in columns] == [
        ("id", 1, "int", True),
        ("amount", 2, "decimal(10,2)", False),
        ("at", 3, "timestamp", False),
    ]


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        # a date or timestamp beyond Python's years (OverflowError), a scale no database has
        (
            {
                "after_text": '{"d": 99999999999}',
                "after_schema_text": '[{"field": "d", "type": "int32", "name": "io.debezium.time.Date"}]',
            },
            "OverflowError",
        ),
        (
            {
                "after_text": '{"t": 1e400}',
                "after_schema_text": '[{"field": "t", "type": "int64", '
                '"name": "io.debezium.time.MicroTimestamp"}]',
            },
            "OverflowError",
        ),
        ({"after_text": '{"d": "AQ=="}', "after_schema_text": json.dumps([decimal_field(10**9)])}, "scale"),
        # a schema whose fields are not objects, a key nested deeper than Python's parser goes
        ({"after_text": '{"a": 1}', "after_schema_text": "[5, 6]"}, "TypeError"),
        ({"key_text": "[" * 5000 + "]" * 5000, "after_text": "{}"}, "nested deeper"),
        ({"after_text": '{"a": ' + "9" * 5000 + "}"}, "4300"),  # Python's digit limit: no quadratic int
    ],
)
def test_a_value_that_breaks_decoding_is_reported_never_raised(values: dict, reason: str) -> None:
    result = decoded.decode_message(message(**values), {})
    assert reason in result["decode_error"] and len(result["decode_error"]) <= 301
    assert result["before"] is None and result["after"] is None and result["primary_key"] is None
