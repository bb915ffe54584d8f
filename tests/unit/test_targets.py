"""Every target of profiles.yml parses with dbt (no Spark is started)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DBT = Path(sys.executable).parent / "dbt"


@pytest.mark.parametrize(
    ("target", "environment"),
    [
        ("local", {}),
        (
            "cluster",
            {
                "CDC_SPARK_MASTER": "spark://spark-master:7077",
                "CDC_WAREHOUSE_URI": "s3a://lake/warehouse",
                "CDC_METASTORE_URI": "thrift://metastore:9083",
            },
        ),
        ("thrift", {"CDC_THRIFT_HOST": "spark-thrift.internal"}),
    ],
)
def test_target_parses(target: str, environment: dict[str, str], tmp_path: Path) -> None:
    result = subprocess.run(
        [str(DBT), "parse", "--target", target, "--target-path", str(tmp_path), "--no-partial-parse"],
        cwd=ROOT,
        env={**os.environ, **environment, "DBT_PROFILES_DIR": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "manifest.json").is_file()


def test_cluster_target_without_its_environment_names_the_variable(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CDC_SPARK_MASTER")}
    result = subprocess.run(
        [str(DBT), "parse", "--target", "cluster", "--target-path", str(tmp_path)],
        cwd=ROOT,
        env={**environment, "DBT_PROFILES_DIR": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "CDC_SPARK_MASTER" in result.stdout + result.stderr
