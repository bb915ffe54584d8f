"""Time the Qlik mask decoding macro (`change_mask_ordinals`, macros/qlik/change_mask.sql) on
masks of growing width, to show that its cost is linear in the mask's length.

    .venv/bin/python benchmarks/mask_decoding.py [--digits 100 10000 1000000] [--previous REV]

The macro is rendered with Jinja from the file (it needs nothing of dbt) and evaluated by a
local Spark session on one row holding a mask of random hex digits; each width is timed three
times after a warm-up and the best time is printed, with its ratio to the narrowest width's.
`--previous REV` renders the macro as it was at git revision REV instead (e.g. the quadratic
version it replaced, da44eac), to compare; give it small widths only.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from pathlib import Path

import jinja2

ROOT = Path(__file__).resolve().parent.parent
MACROS = "macros/qlik/change_mask.sql"


def macro_sql(revision: str | None) -> str:
    if revision:
        text = subprocess.run(
            ["git", "show", f"{revision}:{MACROS}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    else:
        text = (ROOT / MACROS).read_text(encoding="utf-8")
    module = jinja2.Environment().from_string(text).module
    return str(module.change_mask_ordinals("mask"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--digits", type=int, nargs="+", default=[100, 10_000, 1_000_000])
    parser.add_argument("--previous", metavar="REV", help="time the macro as it was at this git revision")
    args = parser.parse_args()
    expression = macro_sql(args.previous)

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rng = random.Random(1)
    timings: list[tuple[int, float, int]] = []
    for digits in args.digits:
        mask = "".join(rng.choice("0123456789ABCDEF") for _ in range(digits))
        spark.createDataFrame([(mask,)], "mask string").createOrReplaceTempView("masks")
        query = f"select size({expression}) as ordinals from masks"
        spark.sql(query).collect()  # warm-up: planning, code generation
        best, ordinals = float("inf"), 0
        for _ in range(3):
            started = time.perf_counter()
            ordinals = spark.sql(query).first()[0]
            best = min(best, time.perf_counter() - started)
        timings.append((digits, best, ordinals))
    narrowest = timings[0][1]
    print(f"change_mask_ordinals ({args.previous or 'working tree'}), one row, local[1], best of 3:")
    print(f"{'digits':>10} {'set bits':>10} {'seconds':>9} {'÷ first':>8} {'µs/digit':>9}")
    for digits, seconds, ordinals in timings:
        ratio = seconds / narrowest
        print(f"{digits:>10,} {ordinals:>10,} {seconds:>9.3f} {ratio:>8.1f} {seconds / digits * 1e6:>9.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
