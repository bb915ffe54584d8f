"""Debezium row images and keys decoded into the contract's text forms.

A dbt Python model because Debezium's value schema travels with every
message, nested and per field: a column's meaning depends on the schema's
`type`, its logical `name` and its `parameters` (a Decimal's scale is only
there). Walking that schema and decoding big-endian two's-complement
decimals of any length, epoch days, milli/micro/nanosecond times and zoned
timestamps is a few lines of Python with exact integer arithmetic, where SQL
would need one expression per type and still overflow on 16-byte decimals.

Schemaless messages (Kafka Connect sinks with schemas.enable=false) pass
their values through as sent, unless the user declares the table's column
types in the seed cdc_declared_columns, which then also names key columns
when no Kafka key travels with the message.

Incremental: a run decodes the row changes staged since its last run.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from pyspark.sql import functions as F
from pyspark.sql import types as T

UNAVAILABLE = "__debezium_unavailable_value"
MAX_SCALE = 16_383  # the largest scale a source database gives a decimal (PostgreSQL numeric)
UNAVAILABLE_BYTES = base64.b64encode(UNAVAILABLE.encode()).decode()
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DATE = EPOCH.date()

# Debezium / Kafka Connect type → Spark SQL type, for the column registry.
SPARK_TYPES = {
    "int8": "smallint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float32": "float",
    "float": "float",
    "float64": "double",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "binary",
    "io.debezium.time.Date": "date",
    "io.debezium.time.Timestamp": "timestamp",
    "io.debezium.time.MicroTimestamp": "timestamp",
    "io.debezium.time.NanoTimestamp": "timestamp",
    "io.debezium.time.ZonedTimestamp": "timestamp",
    "org.apache.kafka.connect.data.Date": "date",
    "org.apache.kafka.connect.data.Timestamp": "timestamp",
}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"


class DecodeError(ValueError):
    """A value that does not match its declared type."""


# -- text forms -----------------------------------------------------------
def _fraction(microseconds: int) -> str:
    return f".{microseconds:06d}".rstrip("0") if microseconds else ""


def timestamp_text(moment: datetime) -> str:
    """`yyyy-MM-dd HH:mm:ss[.ffffff]` in UTC, trailing zeros of the fraction dropped."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + _fraction(moment.microsecond)


def time_text(microseconds: int) -> str:
    """`HH:mm:ss[.ffffff]` for a time of day given in microseconds."""
    seconds, micros = divmod(int(microseconds), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{hour:02d}:{minute:02d}:{second:02d}" + _fraction(micros)


def epoch_text(value: int, per_second: int) -> str:
    """A timestamp counted in 1/per_second units since the epoch (integer arithmetic, no float)."""
    micros = (
        int(value) * 1_000_000 // per_second
        if per_second >= 1_000_000
        else int(value) * (1_000_000 // per_second)
    )
    return timestamp_text(EPOCH + timedelta(microseconds=micros))


def decimal_text(unscaled: int, scale: int) -> str:
    """Plain notation with exactly `scale` fractional digits: 1250, 2 → `12.50` (exact at any length)."""
    if abs(scale) > MAX_SCALE:
        raise DecodeError(f"the scale {scale} is beyond ±{MAX_SCALE}, more than any database gives a decimal")
    sign, digits = ("-" if unscaled < 0 else ""), str(abs(unscaled))
    if scale <= 0:
        return sign + digits + "0" * -scale
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def unscaled_integer(encoded: str) -> int:
    """Connect Decimal bytes: base64 of a big-endian two's-complement integer, any length."""
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError) as exc:
        raise DecodeError(f"{encoded!r} is not base64") from exc
    if not raw:
        raise DecodeError("an empty decimal")
    return int.from_bytes(raw, "big", signed=True)


def plain_text(value) -> str | None:
    """A JSON value as sent: strings as they are, numbers as JSON writes them, the rest (arrays,
    structs) as compact JSON with non-ASCII characters as they are, as JsonConverter writes
    them and PostgreSQL's array_to_json renders an array (`["Zoë",null]`)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def decode_value(value, field: dict) -> str | None:
    """One column value in the contract's text form, by its field schema."""
    if value is None:
        return None
    name = field.get("name") or ""
    kind = (field.get("type") or "").lower()
    parameters = field.get("parameters") or {}
    try:
        if name in ("io.debezium.time.Date", "org.apache.kafka.connect.data.Date"):
            return (EPOCH_DATE + timedelta(days=int(value))).isoformat()
        if name in ("io.debezium.time.Time", "org.apache.kafka.connect.data.Time"):
            return time_text(int(value) * 1000)
        if name == "io.debezium.time.MicroTime":
            return time_text(int(value))
        if name == "io.debezium.time.NanoTime":
            return time_text(int(value) // 1000)
        if name in ("io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp"):
            return epoch_text(value, 1000)
        if name == "io.debezium.time.MicroTimestamp":
            return epoch_text(value, 1_000_000)
        if name == "io.debezium.time.NanoTimestamp":
            return epoch_text(value, 1_000_000_000)
        if name == "io.debezium.time.ZonedTimestamp":
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            return timestamp_text(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
        if name == DECIMAL:
            if isinstance(value, int | float):  # decimal.handling.mode=double
                return plain_text(value)
            if isinstance(value, str) and not parameters.get("scale") and "." in value:
                return value  # decimal.handling.mode=string
            return decimal_text(unscaled_integer(value), int(parameters.get("scale", 0)))
        if name == VARIABLE_DECIMAL:
            if not isinstance(value, dict):
                return plain_text(value)
            return decimal_text(unscaled_integer(value["value"]), int(value["scale"]))
        if kind == "boolean" and isinstance(value, str):
            return {"true": "true", "1": "true", "false": "false", "0": "false"}[value.lower()]
        if kind in ("int8", "int16", "int32", "int64") and isinstance(value, str):
            return str(int(value))
    except (KeyError, TypeError, ValueError) as exc:
        raise DecodeError(
            f"column {field.get('field')!r}: {value!r} is not a valid {name or kind} ({exc})"
        ) from exc
    return plain_text(value)


def declared_field(column: str, declared_type: str) -> dict:
    """A field schema from a declared type: a Connect / Debezium type name, or decimal(p,s)."""
    text = declared_type.strip()
    if text.lower().startswith("decimal(") and text.endswith(")"):
        precision, _, scale = text[8:-1].partition(",")
        return {
            "field": column,
            "type": "bytes",
            "name": DECIMAL,
            "parameters": {"scale": scale.strip() or "0", "connect.decimal.precision": precision.strip()},
        }
    if "." in text:
        return {"field": column, "type": "", "name": text}
    return {"field": column, "type": text.lower()}


def spark_type(field: dict) -> str:
    name = field.get("name") or ""
    if name == DECIMAL:
        parameters = field.get("parameters") or {}
        scale = int(parameters.get("scale", 0))
        precision = int(parameters.get("connect.decimal.precision", 38))
        return f"decimal({max(precision, scale, 1)},{scale})" if precision <= 38 else "string"
    return SPARK_TYPES.get(name) or ("string" if name else SPARK_TYPES.get(field.get("type", ""), "string"))


def schema_fields(schema_text: str | None) -> list[dict]:
    """Field schemas of a struct, in JsonConverter form (`field`, `type`) or Connect's internal
    form (`name`, `index`, `schema`), as JsonConverter-form dicts in order."""
    if not schema_text:
        return []
    parsed = json.loads(schema_text)
    fields = parsed.get("fields", []) if isinstance(parsed, dict) else parsed
    result = []
    for field in fields or []:
        if "field" in field:
            result.append(field)
        elif "name" in field and isinstance(field.get("schema"), dict):
            inner = field["schema"]
            result.append({"field": field["name"], "type": inner.get("type"), "name": inner.get("name")})
    return result


def decode_image(text: str | None, fields: dict[str, dict]) -> dict[str, str | None] | None:
    """A row image as column → text; unavailable (TOAST) values are left out: not carried."""
    if text is None:
        return None
    image = json.loads(text)
    if not isinstance(image, dict):
        raise DecodeError("a row image is not a JSON object")
    decoded = {}
    for column, value in image.items():
        if value in (UNAVAILABLE, UNAVAILABLE_BYTES):
            continue
        field = fields.get(column)
        decoded[column] = decode_value(value, field) if field else plain_text(value)
    return decoded


def failure_text(exc: BaseException) -> str:
    """Why a message could not be decoded, in one line of bounded length."""
    if isinstance(exc, RecursionError):
        text = "a value is nested deeper than the decoder goes"
    elif isinstance(exc, DecodeError | ValueError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:300] + "…"


def decode_message(row, declared: dict) -> dict:
    """Images, key and columns of one Debezium row change (or truncate). Never raises: a
    message whose values do not fit their schema (whatever the exception) gets `decode_error`."""
    try:
        return _decode_message(row, declared)
    except Exception as exc:  # noqa: BLE001 - any failure is the message's, and is reported with it
        return {**EMPTY_RESULT, "decode_error": failure_text(exc)}


EMPTY_RESULT = dict.fromkeys(("primary_key", "before", "after", "source_columns", "decode_error"))


def _decode_message(row, declared: dict) -> dict:
    table = declared.get(row.table_id, {})
    declared_fields = {c: declared_field(c, t) for c, (t, _, _) in table.items()}
    after_fields = schema_fields(row.after_schema_text) or schema_fields(row.before_schema_text)
    fields = {**declared_fields, **{f["field"]: f for f in after_fields}}
    result = dict(EMPTY_RESULT)
    try:
        before = decode_image(row.before_text, fields)
        after = decode_image(row.after_text, fields)
        if row.message_kind == "truncate":
            key = {}
        elif row.key_text:
            key_object = json.loads(row.key_text)
            if not isinstance(key_object, dict):
                raise DecodeError("the Kafka key is not a JSON object")
            key_fields = {f["field"]: f for f in schema_fields(row.key_schema_text)} or fields
            key = {
                c: decode_value(v, key_fields[c]) if c in key_fields else plain_text(v)
                for c, v in key_object.items()
            }
        else:
            key_columns = [c for c, (_, is_key, _) in sorted(table.items(), key=lambda i: i[1][2]) if is_key]
            image = after if row.operation_code != "d" else before
            key = {c: image[c] for c in key_columns if image and c in image} if key_columns else None
            if key is not None and len(key) < len(key_columns):
                key = None
        result.update(primary_key=key, before=before, after=after)
    except (DecodeError, ValueError) as exc:
        result["decode_error"] = failure_text(exc)
        return result
    if row.message_kind == "truncate":
        return result  # no row: says nothing about the table's columns
    key_columns = set(result["primary_key"] or ())
    if after_fields:
        columns = [
            (f["field"], i + 1, f.get("name") or f.get("type"), spark_type(f))
            for i, f in enumerate(after_fields)
        ]
    else:
        columns = [
            (c, ordinal, t, spark_type(declared_field(c, t)))
            for c, (t, _, ordinal) in sorted(table.items(), key=lambda i: i[1][2])
        ]
    result["source_columns"] = [
        {
            "column_name": c,
            "ordinal": o,
            "source_type": t,
            "spark_type": s,
            "is_primary_key": c in key_columns,
        }
        for c, o, t, s in columns
    ]
    return result


TEXT_MAP = T.MapType(T.StringType(), T.StringType())
DECODED = T.StructType(
    [
        T.StructField("primary_key", TEXT_MAP),
        T.StructField("before", TEXT_MAP),
        T.StructField("after", TEXT_MAP),
        T.StructField(
            "source_columns",
            T.ArrayType(
                T.StructType(
                    [
                        T.StructField("column_name", T.StringType()),
                        T.StructField("ordinal", T.IntegerType()),
                        T.StructField("source_type", T.StringType()),
                        T.StructField("spark_type", T.StringType()),
                        T.StructField("is_primary_key", T.BooleanType()),
                    ]
                )
            ),
        ),
        T.StructField("decode_error", T.StringType()),
    ]
)
INPUT_COLUMNS = [
    "table_id",
    "message_kind",
    "operation_code",
    "before_text",
    "after_text",
    "before_schema_text",
    "after_schema_text",
    "key_text",
    "key_schema_text",
]


def model(dbt, session):
    dbt.config(
        # dbt makes a Python model a table unless its own config says otherwise; the
        # strategy (merge) and on_schema_change (fail) come from dbt_project.yml.
        materialized="incremental",
        unique_key="message_id",
        submission_method="session",
        tags=["python"],  # runs in a Spark session: `dbt build --target thrift --exclude tag:python`
    )
    messages = dbt.ref("stg_debezium__messages").where(
        F.col("message_kind").isin("row", "truncate") & F.col("quarantine_reason").isNull()
    )
    if dbt.is_incremental:
        newest = session.table(str(dbt.this)).agg(F.max("staged_at")).first()[0]
        if newest is not None:
            messages = messages.where(F.col("staged_at") > F.lit(newest))

    declared: dict[str, dict[str, tuple[str, bool, int]]] = {}
    for column in dbt.ref("cdc_declared_columns").collect():
        declared.setdefault(column.table_id.lower(), {})[column.column_name] = (
            column.declared_type,
            bool(column.is_primary_key),
            int(column.ordinal),
        )

    from pyspark.sql import Row

    def decode(*values):
        return decode_message(Row(**dict(zip(INPUT_COLUMNS, values, strict=True))), declared)

    decoded = F.udf(decode, DECODED)(*[F.col(c) for c in INPUT_COLUMNS])
    return messages.select(
        "message_id",
        decoded.alias("decoded"),
    ).select(
        "message_id",
        "decoded.primary_key",
        "decoded.before",
        "decoded.after",
        "decoded.source_columns",
        "decoded.decode_error",
        F.current_timestamp().alias("staged_at"),
    )
