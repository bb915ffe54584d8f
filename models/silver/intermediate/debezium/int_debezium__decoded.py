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
import hashlib
import json
import re
import struct
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from pyspark.sql import functions as F
from pyspark.sql import types as T

UNAVAILABLE = "__debezium_unavailable_value"
MAX_SCALE = 16_383  # the largest scale a source database gives a decimal (PostgreSQL numeric)
UNAVAILABLE_BYTES = base64.b64encode(UNAVAILABLE.encode()).decode()
# Java's UUID.nameUUIDFromBytes of the placeholder: an MD5 name-based (version 3) UUID.
_UNAVAILABLE_MD5 = bytearray(hashlib.md5(UNAVAILABLE.encode()).digest())  # noqa: S324 - Java's UUID v3 is MD5
_UNAVAILABLE_MD5[6] = (_UNAVAILABLE_MD5[6] & 0x0F) | 0x30
_UNAVAILABLE_MD5[8] = (_UNAVAILABLE_MD5[8] & 0x3F) | 0x80
UNAVAILABLE_UUID = str(uuid.UUID(bytes=bytes(_UNAVAILABLE_MD5)))
# What the PostgreSQL connector sends for an unchanged TOASTed value, by the column's type
# (docs/real_producers.md, "Unchanged TOASTed values"): the placeholder as text, as bytes, as a
# one-element text, bytes or uuid array, as an int or bigint array of the placeholder's bytes,
# and as an hstore (a map or its JSON text) from the placeholder to itself.
UNAVAILABLE_FORMS = (
    UNAVAILABLE,
    UNAVAILABLE_BYTES,
    [UNAVAILABLE],
    [UNAVAILABLE_BYTES],
    [UNAVAILABLE_UUID],
    list(UNAVAILABLE.encode()),
    {UNAVAILABLE: UNAVAILABLE},
    json.dumps({UNAVAILABLE: UNAVAILABLE}, separators=(",", ":")),
)
# The geometry placeholders (PostGIS): a point at (-99999999, -99999999), and these WKB values.
UNAVAILABLE_POINT = (-99999999.0, -99999999.0)
UNAVAILABLE_WKB = {
    base64.b64encode(bytes.fromhex(h)).decode()
    for h in (
        "0101000020E6100000000000FC83D797C1000000FC83D797C1",
        "0101000020E61000000C21E7FDFF7F66401842CEFBFF7F5640",
    )
}
BITS = "io.debezium.data.Bits"
INTERVAL = "io.debezium.time.Interval"
POINT = "io.debezium.data.geometry.Point"
GEOMETRIES = ("io.debezium.data.geometry.Geometry", "io.debezium.data.geometry.Geography")
ISO_INTERVAL = re.compile(
    r"P(?P<years>-?\d+)Y(?P<months>-?\d+)M(?P<days>-?\d+)D"
    r"T(?P<hours>-?\d+)H(?P<minutes>-?\d+)M(?P<seconds>-?\d+(?:\.\d+)?)S"
)
ZONED_TIME = re.compile(
    r"(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,9}))?)?"
    r"(?:Z|(?P<sign>[+-])(?P<offset_hour>\d{2})(?::?(?P<offset_minute>\d{2}))?)"
)
FLOAT32 = ("float32", "float")  # Connect's FLOAT32 (JsonConverter writes `float`)
FLOATS = (*FLOAT32, "float64", "double")
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
    # Not strftime: its %Y does not pad years below 1000 to four digits on every platform.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    ) + _fraction(moment.microsecond)


def time_text(microseconds: int) -> str:
    """`[-]HH:mm:ss[.ffffff]` for a time given in microseconds: a time of day, or a MariaDB
    TIME, which runs from -838:59:59 to 838:59:59 (the sign applies to the whole value)."""
    sign = "-" if int(microseconds) < 0 else ""
    seconds, micros = divmod(abs(int(microseconds)), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{sign}{hour:02d}:{minute:02d}:{second:02d}" + _fraction(micros)


def zoned_time_text(text: str) -> str:
    """io.debezium.time.ZonedTime (a time with its offset, PostgreSQL `timetz`) in UTC as
    `HH:mm:ss[.ffffff]Z`: `11:45:30.5Z`; `13:45:30.5+02:00` gives the same."""
    found = ZONED_TIME.fullmatch(text.strip())
    if not found:
        raise DecodeError(f"{text!r} is not a time with an offset")
    part = found.groupdict()
    fraction = (part["fraction"] or "").ljust(6, "0")[:6]
    micros = (
        int(part["hour"]) * 3600 + int(part["minute"]) * 60 + int(part["second"] or 0)
    ) * 1_000_000 + int(fraction or 0)
    if part["sign"]:
        offset = (int(part["offset_hour"]) * 3600 + int(part["offset_minute"] or 0) * 60) * 1_000_000
        micros -= offset if part["sign"] == "+" else -offset
        micros %= 86_400_000_000
    return time_text(micros) + "Z"


def float_text(value: float) -> str:
    """A floating-point number as the shortest decimal that reads back as the same value, an
    integral one without `.0`: `100`, `1.5`, `3.4028235e+38`, `NaN`, `Infinity`, `-Infinity`."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def float32_text(value: float) -> str:
    """A single-precision number as the shortest decimal that reads back as the same
    single-precision value (as PostgreSQL prints a `real`), in float_text's spelling."""
    if value != value or value in (float("inf"), float("-inf")):
        return float_text(value)
    single = _single(value)
    if single is None:
        return float_text(value)
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if _single(float(text)) == single:
            return float_text(float(text))
    return float_text(single)


def _single(value: float) -> float | None:
    """`value` rounded to single precision; None beyond its range."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return None


def bits_text(encoded: str) -> str:
    """io.debezium.data.Bits (BIT(n), bit varying): base64 of the bits as a little-endian
    unsigned integer; the number, as MariaDB's `b + 0` prints it (`b'1111111111'` → `1023`)."""
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError) as exc:
        raise DecodeError(f"{encoded!r} is not base64") from exc
    return str(int.from_bytes(raw, "little", signed=False))


def _count(value: int, unit: str, signed: bool) -> str:
    plus = "+" if signed and value > 0 else ""
    return f"{plus}{value} {unit}{'' if value == 1 else 's'}"


def interval_text(iso: str) -> str:
    """io.debezium.time.Interval (`interval.handling.mode=string`, ISO 8601 with a sign per
    field: `P1Y2M3DT4H5M6.789S`, `P0Y0M-3DT4H0M0S`) in PostgreSQL's own output style
    (IntervalStyle `postgres`): `1 year 2 mons 3 days 04:05:06.789`, `-3 days +04:00:00`."""
    found = ISO_INTERVAL.fullmatch(iso.strip())
    if not found:
        raise DecodeError(f"{iso!r} is not an ISO 8601 interval as Debezium writes it")
    part = found.groupdict()
    months = int(part["years"]) * 12 + int(part["months"])
    days = int(part["days"])
    seconds = Decimal(part["seconds"])
    micros = (int(part["hours"]) * 3600 + int(part["minutes"]) * 60) * 1_000_000 + int(
        (seconds * 1_000_000).to_integral_value()
    )
    pieces: list[str] = []
    negative_before = False
    for value, unit in ((int(months / 12), "year"), (months - int(months / 12) * 12, "mon"), (days, "day")):
        if value:
            pieces.append(_count(value, unit, negative_before))
            negative_before = value < 0
    if micros or not pieces:
        sign = "-" if micros < 0 else "+" if negative_before else ""
        whole, fraction = divmod(abs(micros), 1_000_000)
        minutes, second = divmod(whole, 60)
        hour, minute = divmod(minutes, 60)
        pieces.append(f"{sign}{hour:02d}:{minute:02d}:{second:02d}{_fraction(fraction)}")
    return " ".join(pieces)


def geometry_text(value, name: str) -> str:
    """A point as PostgreSQL prints one, `(x,y)`; other geometries (struct `wkb`, `srid`) as
    their WKB in base64, after `SRID=n;` when the value has a spatial reference."""
    if not isinstance(value, dict):
        raise DecodeError("a geometry is not a struct")
    if name == POINT and value.get("x") is not None and value.get("y") is not None:
        return f"({float_text(float(value['x']))},{float_text(float(value['y']))})"
    wkb = value.get("wkb")
    if not isinstance(wkb, str):
        raise DecodeError("a geometry without its WKB")
    return f"SRID={int(value['srid'])};{wkb}" if value.get("srid") else wkb


def is_unavailable(value) -> bool:
    """Whether `value` is the connector's placeholder for an unchanged TOASTed value, in the
    form the column's type gives it (UNAVAILABLE_FORMS, and the geometry placeholders)."""
    if isinstance(value, dict) and ("wkb" in value or "x" in value):
        return value.get("wkb") in UNAVAILABLE_WKB or (value.get("x"), value.get("y")) == UNAVAILABLE_POINT
    return any(type(value) is type(form) and value == form for form in UNAVAILABLE_FORMS)


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
        if name == "io.debezium.time.ZonedTime" and isinstance(value, str):
            return zoned_time_text(value)
        if name == BITS and isinstance(value, str):
            return bits_text(value)
        if name == INTERVAL and isinstance(value, str):
            return interval_text(value)
        if name == POINT or name in GEOMETRIES:
            return geometry_text(value, name)
        if kind in FLOATS and isinstance(value, int | float | str) and not isinstance(value, bool):
            # Jackson writes NaN and the infinities as the strings "NaN", "Infinity", "-Infinity".
            return (float32_text if kind in FLOAT32 else float_text)(float(value))
        if kind == "boolean" and isinstance(value, str):
            return {"true": "true", "1": "true", "false": "false", "0": "false"}[value.lower()]
        if kind in ("int8", "int16", "int32", "int64") and isinstance(value, str):
            return str(int(value))
    except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
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
    if name == BITS:  # the number of up to 64 bits fits decimal(20,0)
        length = int((field.get("parameters") or {}).get("length") or 65)
        return "decimal(20,0)" if length <= 64 else "string"
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
        if is_unavailable(value):
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


EMPTY_RESULT = dict.fromkeys(
    ("primary_key", "previous_key", "before", "after", "source_columns", "decode_error")
)


def decode_key(key_object: dict, key_fields: dict[str, dict]) -> dict[str, str | None]:
    """A Kafka key (or the old key of a key change) as column → text, by the key's fields."""
    return {
        c: decode_value(v, key_fields[c]) if c in key_fields else plain_text(v) for c, v in key_object.items()
    }


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
            key = decode_key(key_object, key_fields)
            if row.old_key_text and row.operation_code == "c":
                # A primary-key change: the create of the new key names the old key in the header
                # __debezium.oldkey, the key's JSON without its schema (the key's fields decode it).
                old_key = json.loads(row.old_key_text)
                if not isinstance(old_key, dict):
                    raise DecodeError("the header __debezium.oldkey is not a JSON object")
                result["previous_key"] = decode_key(old_key, key_fields)
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
        T.StructField("previous_key", TEXT_MAP),
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
    "old_key_text",
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
        "decoded.previous_key",
        "decoded.before",
        "decoded.after",
        "decoded.source_columns",
        "decoded.decode_error",
        F.current_timestamp().alias("staged_at"),
    )
