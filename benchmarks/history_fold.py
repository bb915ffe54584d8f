"""Time cdc_history's fold (`history_fold`, macros/history/history_fold.sql) over one key with a
growing number of changes, to show how its cost grows with a key's history.

    .venv/bin/python benchmarks/history_fold.py [--changes 1000 2000 4000 8000 16000] [--workdir DIR]

The macro calls other macros of the project, so it is rendered by `dbt compile --inline` (in a
lakehouse of its own under the work directory, whose services are stopped at the end) and
evaluated by a local Spark session on one row: a key whose first change inserts ten columns,
then updates of one column, with a delete and a new insert every thousand changes. Each size is
timed once after a warm-up at the smallest; printed with the ratio to the smallest size and the
time per change. A fold that is linear in a key's changes keeps the time per change flat.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
DBT = ROOT / ".venv" / "bin" / "dbt"

# One key's changes in the shape cdc_history folds (sequence order), for `k` from a one-row table.
CHANGES = """
select {{ history_fold('changes') }} as history
from (
    select transform(sequence(1, k), i -> struct(
        lpad(cast(i as string), 12, '0') as sequence,
        cast(i as string) as change_id,
        case
            when i = 1 or i % 1000 = 501 then 'insert'
            when i % 1000 = 500 then 'delete'
            else 'update'
        end as operation,
        timestamp_millis(i) as commit_ts,
        cast(null as string) as transaction_id,
        cast(null as map<string, string>) as before,
        case
            when i % 1000 = 500 then cast(null as map<string, string>)
            when i = 1 or i % 1000 = 501
                then map_from_arrays(
                    transform(sequence(1, 10), c -> concat('c', c)),
                    transform(sequence(1, 10), c -> concat('v', i, '_', c))
                )
            else map(concat('c', 1 + i % 10), cast(i as string))
        end as after,
        cast(null as map<string, string>) as carried
    )) as changes
    from keys
)
"""


def compiled_fold(workdir: Path) -> str:
    """The query above compiled by dbt, in a lakehouse under `workdir` (stopped afterwards)."""
    env = {
        **os.environ,
        "CDC_LAKEHOUSE_DIR": str(workdir / "lakehouse"),
        "DBT_TARGET_PATH": str(workdir / "target"),
        "DBT_LOG_PATH": str(workdir / "logs"),
        "DBT_PROFILES_DIR": str(ROOT),
    }
    (workdir / "lakehouse").mkdir(parents=True, exist_ok=True)  # dbt creates no lakehouse
    try:
        result = subprocess.run(
            [str(DBT), "compile", "--inline", CHANGES, "--output", "text", "-q"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        stop = [str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"]
        subprocess.run(stop, cwd=ROOT, env=env, capture_output=True, check=False)
    if result.returncode != 0 or "aggregate(" not in result.stdout:
        sys.exit(f"dbt compile failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return result.stdout[result.stdout.index("select") :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, nargs="+", default=[1000, 2000, 4000, 8000, 16000])
    parser.add_argument("--workdir", type=Path, help="dbt's lakehouse, target and logs (default: temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-fold-") as temporary:
        query = compiled_fold(args.workdir or Path(temporary))

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.ansi.enabled", "false")  # as the project's sessions run
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    timings: list[tuple[int, float]] = []
    for number, changes in enumerate(args.changes):
        spark.createDataFrame([(changes,)], "k int").createOrReplaceTempView("keys")
        counted = f"select size(history) from ({query})"
        if number == 0:
            spark.sql(counted).collect()  # warm-up: planning, class loading
        started = time.perf_counter()
        [(versions,)] = spark.sql(counted).collect()
        timings.append((changes, time.perf_counter() - started))
        if versions != changes:
            sys.exit(f"the fold made {versions} versions of {changes} changes, one each was expected")
    smallest = timings[0][1]
    print("history_fold over one key, one row, local[1], one timing each after a warm-up:")
    print(f"{'changes':>10} {'seconds':>9} {'÷ first':>8} {'ms/change':>10}")
    for changes, seconds in timings:
        print(f"{changes:>10,} {seconds:>9.3f} {seconds / smallest:>8.1f} {seconds / changes * 1e3:>10.3f}")
    spark.stop()


if __name__ == "__main__":
    main()
