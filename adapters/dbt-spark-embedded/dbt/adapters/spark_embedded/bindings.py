"""Query parameters of the ``session`` method as SQL literals.

dbt-spark's session cursor turns every parameter that is not a number or a
datetime into ``'<str(value)>'``: an empty seed cell (``None``) becomes the
text ``'None'`` instead of NULL, and a text holding a quote breaks the
statement. Seeds are loaded through these parameters, so this module
replaces that conversion, once, when the plugin is imported: ``None`` gives
``null`` and texts are quoted with their quotes and backslashes escaped.
Numbers and datetimes keep dbt-spark's conversion.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark.session import SessionConnectionWrapper

_dbt_spark_fix_binding = SessionConnectionWrapper._fix_binding


def sql_literal(value: Any) -> str | float:
    """``value`` as dbt-spark's session cursor should bind it."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return _dbt_spark_fix_binding(value)


def install() -> None:
    SessionConnectionWrapper._fix_binding = staticmethod(sql_literal)  # type: ignore[method-assign]
