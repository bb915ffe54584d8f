"""The Spark settings of a dbt target, read from the repository's profiles.yml.

Landing must write to the same lakehouse (warehouse, metastore, Iceberg
catalog) that dbt reads, so it takes its Spark settings from the same
profile, rendered the way dbt renders it (``env_var`` with defaults), and
completed by the adapter plugin's own :func:`spark_parameters`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import yaml
from dbt.adapters.spark_embedded.api import spark_parameters

PROFILE_NAME = "cdc_lakehouse"


class ProfileError(RuntimeError):
    """The profile cannot give a Spark session for landing."""


def _env_var(name: str, default: str | None = None) -> str:
    if name in os.environ:
        return os.environ[name]
    if default is not None:
        return default
    raise ProfileError(f"profiles.yml needs the environment variable {name}, which is not set.")


_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined)
_JINJA.globals["env_var"] = _env_var
_JINJA.filters.update(as_number=lambda v: v, as_text=lambda v: v, as_bool=lambda v: v)


def _render(value: Any) -> Any:
    if isinstance(value, str):
        return _JINJA.from_string(value).render()
    if isinstance(value, Mapping):
        return {key: _render(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item) for item in value]
    return value


def profiles_dir() -> Path:
    """Where profiles.yml is: ``$DBT_PROFILES_DIR``, else the working directory."""
    return Path(os.environ.get("DBT_PROFILES_DIR", "."))


def load_target(target: str | None = None, directory: Path | None = None) -> dict[str, Any]:
    """The rendered output ``target`` (default: the profile's default target)."""
    path = (directory or profiles_dir()) / "profiles.yml"
    if not path.is_file():
        raise ProfileError(f"{path} not found: run from the repository root or set DBT_PROFILES_DIR.")
    profile = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get(PROFILE_NAME)
    if not profile:
        raise ProfileError(f"{path} has no profile named {PROFILE_NAME!r}.")
    name = target or os.environ.get("DBT_TARGET") or _render(profile.get("target", "local"))
    outputs = profile.get("outputs", {})
    if name not in outputs:
        raise ProfileError(f"{path}: profile {PROFILE_NAME!r} has no target {name!r} ({', '.join(outputs)}).")
    output = _render(outputs[name])
    output["name"] = name
    return output


def target_spark_parameters(target: str | None = None, directory: Path | None = None) -> dict[str, str]:
    """Complete Spark settings of a session-method target."""
    output = load_target(target, directory)
    if output.get("method") != "session":
        raise ProfileError(
            f"target {output['name']!r} uses method {output.get('method')!r}; landing starts its own "
            "Spark session and needs a target with `method: session` (local or cluster)."
        )
    params = spark_parameters(
        output.get("server_side_parameters") or {},
        output.get("lakehouse_dir") or None,
        output.get("iceberg_jar") or None,
    )
    params["spark.sql.ansi.enabled"] = "false"  # as dbt-spark sets it, whatever the profile says
    return params


def lakehouse_dir(target: str | None = None, directory: Path | None = None) -> Path | None:
    """The target's lakehouse directory, if it has one: all state of the local target; landing
    checkpoints and the build lock of the cluster target."""
    value = load_target(target, directory).get("lakehouse_dir")
    return Path(value).resolve() if value else None
