"""Hostile input end to end: a few hundred seeded mutants of every producer's traffic, in every
container, beside valid traffic (tests/helpers/hostile_run.py, in a process and a lakehouse of
its own, so the shared test lakehouse never sees them).

The run lands and builds twice (valid traffic, then the mutants) and reports; this test asserts
its checks: no land crashed or failed but for the damaged Avro files it names, the build with the
mutants succeeded with every one of the project's data tests (accounting, history consistency,
grain), every distinct bronze message has one outcome and every quarantined one a reason, and
gold of the tables no mutant came from is unchanged. Its Spark compiles generated code, as users'
Spark does by default, where the rest of the suite runs Spark interpreted (tests/conftest.py): so
the hostile messages meet the generated code here. A larger budget runs by hand:
`python -m tests.helpers.hostile_run --workdir DIR --mutants 2000 --seed N` (docs/operations.md, "Limits").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = int(os.environ.get("CDC_HOSTILE_MUTANTS", "250"))
SEED = int(os.environ.get("CDC_HOSTILE_SEED", "1"))


def test_mutants_of_every_producer_and_container_crash_nothing_and_lose_nothing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.helpers.hostile_run", "--workdir", str(tmp_path)]
        + ["--mutants", str(MUTANTS), "--seed", str(SEED)],
        cwd=ROOT,
        env={**os.environ, "CDC_SPARK_CODEGEN": "true"},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr[-3000:]
    report = json.loads(lines[-1])
    assert report["problems"] == [], json.dumps(report, indent=1)[:8000]
    assert result.returncode == 0

    # Every mutant landed: only the damaged capture files were refused, one line each.
    for where, landed in report["land"].items():
        assert landed["exit"] == (1 if where.endswith("eventhubs-avro") else 0), (where, landed)
        assert all(".avro" in line for line in landed["errors"]), landed["errors"]
    assert report["accounting"]["landed"] == report["accounting"]["with_outcome"] > 0
    assert report["compared_versions"] > 0 and report["compared_tables"]

    # The largest mutants reached quarantine with the reason naming the limit and its var.
    outcomes = report["special_outcomes"]
    masks = [text for name, text in outcomes.items() if name.startswith("qlik/") and "Mask" in name]
    assert len(masks) == 2 and all("dbt var cdc_max_mask_digits" in text for text in masks), masks
    deep = [text for name, text in outcomes.items() if name.endswith("/deep_value")]
    assert any("dbt var cdc_max_json_depth" in text for text in deep), deep
