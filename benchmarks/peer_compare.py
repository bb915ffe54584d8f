"""The project and Spark 4.3's own AUTO CDC on the same Debezium traffic: times per phase, and
each one's history diffed per key against the history the generator recorded (issue 42).

    bash benchmarks/peer/setup.sh                      # once: the peer's own venv and jars
    .venv/bin/python benchmarks/peer_compare.py --changes 25000 --workdir /tmp/peer-compare

Steps, in one work directory:

1. Generate the Debezium traffic (cdc_tools/generators/debezium_traffic.py) with its expected
   history: every key's versions, and the causes in the traffic that could make a consumer get
   that key wrong (`CAUSES`: truncates, primary-key changes, partial images, ...). Cut every
   file as benchmarks/pipeline.py does: the first 1/(1 + increment) of its lines are the full
   run's, the rest the incremental run's.
2. The project: `land` and `dbt build` (full), then `land` and `dbt build` (incremental), each a
   process of its own on a fresh lakehouse, as a user runs them; then gold.cdc_history of the
   traffic's tables is read back.
2b. The project's warm pipeline (`--warm`), on a fresh lakehouse of its own: one `pipeline
   --continuous` process (docs/pipeline.md) over an inbox that holds the full run's files; once
   its cycles have landed and built them all, the incremental run's files appear in the inbox,
   and the cycle that lands and builds them is timed by its own line (benchmarks/warm.py). This
   is the project's counterpart of the peer's second run, which also runs in a JVM already
   warm. Its gold.cdc_history is read back and diffed too.
3. The peer: benchmarks/peer_auto_cdc.py in its own venv (`--input` the full run's files,
   `--more` the rest), which exports every history table.
4. Each system's history of each key against the expected one, in the form both systems can
   state: the key's row images in order, and whether it is live at the end. The project is
   compared in the contract's text forms (decoded values); the peer keeps each value as the
   message sent it, so it is compared with the values as sent. A key that differs is
   classified by the first of its causes (in CAUSES order); one with none is "unexplained".

Writes WORKDIR/report.md (phases, the diff per class, one example per class the peer gets
wrong: the key, what was expected, what it holds, and one of the key's messages) and
WORKDIR/report.json. Not a test: run it by hand (docs/benchmarks.md).

`--producer goldengate`, `canal`, `ces` or `dataworks`: the same steps on that producer's generated
traffic (cdc_tools/generators/<producer>_traffic.py), the peer with its pipeline for it
(benchmarks/peer/pipeline/<producer>_auto_cdc.py). Those generators know only the live rows
the traffic must end in, not each key's history, so step 4 compares each system's live rows
(the project's gold.cdc_current, the peer's open versions) with them, per key, and the causes
are read from the traffic (benchmarks/peer_live.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import peer_live  # noqa: E402
from benchmarks.pipeline import (  # noqa: E402
    BUILD,
    PYTHON,
    SEED,
    fresh_home,
    land_commands,
    run_process,
    split_files,
)
from benchmarks.warm import PipelineProcess  # noqa: E402
from cdc_tools.generators import land_sources  # noqa: E402
from cdc_tools.generators.debezium_traffic import (  # noqa: E402
    CAUSES,
    HISTORY_FILE,
    default_feeds,
    generate,
)

PEER_PYTHON = ROOT / "benchmarks" / "peer" / ".venv" / "bin" / "python"
UNEXPLAINED = "unexplained"
# Writes gold.<argv[3]> (cdc_history or cdc_current) of the tables argv[1] (a JSON list) to
# argv[2], a JSON line a row: [table_id, primary_key, version_number, is_deleted, row_data] of
# the history, [table_id, primary_key, row_data] of the current rows.
EXPORT = """
import json, sys
from dbt.adapters.spark_embedded.api import active_session
from python_ingest.profile import target_spark_parameters
spark = active_session(target_spark_parameters())
tables, relation = json.loads(sys.argv[1]), sys.argv[3]
columns = {
    "cdc_history": "table_id, primary_key, version_number, is_deleted, row_data",
    "cdc_current": "table_id, primary_key, coalesce(row_data, cast(map() as map<string, string>))",
}[relation]
rows = spark.sql(
    "select " + columns + " from gold." + relation + " "
    "where table_id in (" + ",".join("'" + t + "'" for t in tables) + ")"
).collect()
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for r in rows:
        out.write(json.dumps(list(r)) + "\\n")
"""


# -- the normalized history of a key --------------------------------------------------------
# A key's history as both systems can state it: its row images in order, with None where the
# key did not exist (after a delete or a truncate, until it came back); live at the end when
# the last item is an image.
STRUCTURAL = ("truncates", "primary-key changes", "deletes and re-inserts", "redelivery")
STRUCTURAL += ("out-of-order delivery", "transactions")
VALUES = ("partial images", "schema changes")


def gone(items: list) -> None:
    """The key ceased to exist: one None however many deletes in a row."""
    if items and items[-1] is not None:
        items.append(None)


def expected_forms(entry: dict[str, Any]) -> tuple[tuple, tuple]:
    """(as text, as sent) of one key's expected history."""
    text: list = []
    sent: list = []
    for op, row_text, row_sent in entry["versions"]:
        if op in ("d", "t"):
            gone(text)
            gone(sent)
        else:
            text.append(row_text)
            sent.append(row_sent)
    return tuple(text), tuple(sent)


def same_text(got: dict | None, want: dict | None) -> bool:
    """A project row image against the expected text row (a missing column is null)."""
    got, want = got or {}, want or {}
    return all(got.get(c) == want.get(c) for c in set(got) | set(want))


def same_sent(got: str | None, want: Any) -> bool:
    """One peer value (the JSON text of the value as sent) against the value as sent."""
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, str):
        return got == want
    try:
        return json.loads(got) == want
    except ValueError:
        return False


def difference(got: tuple, want: tuple, same_row) -> str | None:
    """None when the histories agree; "structure" when the key's versions, or when it existed,
    differ; "values" when only the values of some version do."""
    if len(got) != len(want) or any((g is None) != (w is None) for g, w in zip(got, want, strict=True)):
        return "structure"
    if all(g is None or same_row(g, w) for g, w in zip(got, want, strict=True)):
        return None
    return "values"


def peer_row_same(got: dict, want: dict | None) -> bool:
    want = want or {}
    return all(same_sent(got.get(c), want.get(c)) for c in set(want) | set(got))


# -- reading each system's histories ------------------------------------------------------
def project_histories(path: Path, keys_of: dict[str, list[str]]) -> dict[tuple[str, str], tuple]:
    """(table_id, key text) -> the key's history (row images, None while deleted)."""
    versions: dict[tuple[str, str], list] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            table_id, primary_key, number, deleted, row = json.loads(line)
            key = ",".join(f"{c}={primary_key.get(c)}" for c in keys_of[table_id])
            versions.setdefault((table_id, key), []).append((number, deleted, row))
    out = {}
    for found, rows in versions.items():
        items: list = []
        for _, deleted, row in sorted(rows, key=lambda r: r[0]):
            if deleted:
                gone(items)
            else:
                items.append(row)
        out[found] = tuple(items)
    return out


def position_order(position: dict | None) -> tuple:
    """Spark's ascending order of the peer's `_position` struct (nulls first in each field)."""
    fields = ("commit_lsn", "change_lsn", "event_serial_no", "lsn", "file", "pos", "row")
    position = position or {}
    return tuple((position.get(f) is not None, position.get(f) or 0) for f in fields)


def peer_histories(directory: Path, tables: dict[str, dict]) -> dict[tuple[str, str], tuple]:
    """The peer's history tables (WORKDIR/history/<target>.parquet), keyed like the expected
    history: the key's values as sent are looked up in `tables[table_id]["key_of_sent"]`."""
    import pyarrow.parquet as pq

    out = {}
    for table_id, spec in tables.items():
        path = directory / f"{spec['target']}.parquet"
        if not path.exists():
            continue
        rows = pq.read_table(path).to_pylist()
        by_key: dict[str, list] = {}
        for row in rows:
            sent_key = tuple(row.get(c) for c in spec["keys"])
            key = spec["key_of_sent"].get(sent_key, "?" + json.dumps(sent_key))
            by_key.setdefault(key, []).append(row)
        for key, found in by_key.items():
            found.sort(key=lambda r: position_order(r.get("__START_AT")))
            items: list = []
            for number, row in enumerate(found):
                if number and found[number - 1].get("__END_AT") != row.get("__START_AT"):
                    gone(items)  # closed by a delete before this version began
                items.append({c: v for c, v in row.items() if not c.startswith("_")})
            if found[-1].get("__END_AT") is not None:
                gone(items)
            out[(table_id, key)] = tuple(items)
    return out


def peer_key_text(value: Any) -> Any:
    """A key value as the peer holds it (the JSON text of the value sent, as a string)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


# -- the diff ---------------------------------------------------------------------------------
def diff(
    expected: dict[str, dict[str, dict]], got: dict[tuple[str, str], tuple], form: int, same_row
) -> tuple[Counter, dict[str, tuple[str, str]]]:
    """Keys whose history differs, per class: the first of the key's causes (in CAUSES order)
    that can make that kind of difference (STRUCTURAL or VALUES), else "unexplained"; and the
    first such key of each class."""
    per_class: Counter = Counter()
    first: dict[str, tuple[str, str]] = {}
    for table_id, keys in expected.items():
        for key, entry in keys.items():
            want = expected_forms(entry)[form]
            kind = difference(got.get((table_id, key), ()), want, same_row)
            if kind is None:
                continue
            possible = STRUCTURAL if kind == "structure" else VALUES
            cause = next((c for c in entry["causes"] if c in possible), UNEXPLAINED)
            per_class[cause] += 1
            first.setdefault(cause, (table_id, key))
    extra = [k for k in got if k[1] not in expected.get(k[0], {})]
    if extra:
        per_class["keys the source never had"] += len(extra)
        first.setdefault("keys the source never had", extra[0])
    return per_class, first


def example_message(files: list[Path], topic: str, cause: str, sent_key: dict) -> str:
    """One message of the key (or, for a truncate, of its table) that shows the cause."""
    for path in files:
        if topic not in str(path):
            continue
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                text = line.strip()
                record = json.loads(text)
                value = record.get("payload", record) if "topic" in record else record
                if isinstance(value, str):
                    value = json.loads(value)
                body = (value or {}).get("payload", value) or {}
                if cause == "truncates":
                    if body.get("op") == "t":
                        return text
                    continue
                image = body.get("after") or body.get("before") or {}
                if any(image.get(c) != v for c, v in sent_key.items()):
                    continue
                if cause == "partial images" and "__debezium_unavailable_value" not in text:
                    continue
                if cause == "primary-key changes" and "__debezium." not in text:
                    continue
                return text
    return ""


# -- the runs ---------------------------------------------------------------------------------
def run_project(
    home: Path, base: Path, more: Path, tables: list[str], relation: str = "cdc_history"
) -> list[dict]:
    """The project's phases, each a process of its own; gold.cdc_history of `tables` is written
    to HOME/history.jsonl (with `relation="cdc_current"`, gold.cdc_current)."""
    log, env = fresh_home(home)
    phases = []
    for name, commands in (
        ("land", land_commands(base)),
        ("dbt build (full)", [BUILD]),
        ("land (+more)", land_commands(more)),
        ("dbt build (incremental)", [BUILD]),
    ):
        seconds = sum(run_process(command, env, log)[0] for command in commands)
        phases.append({"phase": name, "seconds": round(seconds, 2)})
        print(f"   project {name}: {seconds:.1f}s", flush=True)
    phases.append(export_history(home, env, log, tables, relation))
    return phases


def export_history(
    home: Path, env: dict[str, str], log: Path, tables: list[str], relation: str = "cdc_history"
) -> dict:
    """gold.`relation` (cdc_history or cdc_current) of `tables` to HOME/history.jsonl (EXPORT),
    then the lakehouse's services stop."""
    started = time.perf_counter()
    command = [str(PYTHON), "-c", EXPORT, json.dumps(tables), str(home / "history.jsonl"), relation]
    run_process(command, env, log)
    seconds = round(time.perf_counter() - started, 2)
    run_process([str(PYTHON), "-m", "python_ingest", "lakehouse", "stop"], env, log)
    return {"phase": "export history (not the project's work)", "seconds": seconds}


def appear(files: list[Path], source: Path, inbox: Path) -> None:
    """Copy `files` (under `source`) into `inbox` at their place under a `more/` folder, each
    whole at once (copied beside the inbox, then renamed into it)."""
    staging = inbox.parent / (inbox.name + ".staging")
    for path in files:
        target = inbox / path.relative_to(source).parent / "more" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, staging / path.name)
        (staging / path.name).rename(target)


def run_project_warm(
    home: Path,
    base: Path,
    more: Path,
    counts: dict[str, int],
    tables: list[str],
    relation: str = "cdc_history",
) -> list[dict]:
    """The project's warm pipeline (step 2b of the module's docstring): its phases, timed by its
    cycle lines; gold.cdc_history of `tables` is written to HOME/history.jsonl."""
    log, env = fresh_home(home)
    inbox = home / "inbox"
    shutil.copytree(base, inbox)
    pipeline = PipelineProcess(PYTHON, ROOT, land_sources(inbox), env, log)
    phases = []
    try:

        def landed_and_built(since: int, total: int) -> bool:
            cycles = pipeline.cycles[since:]
            return sum(c.landed for c in cycles) >= total and bool(cycles) and cycles[-1].built

        full = pipeline.wait_for("cycles of the full run", lambda: landed_and_built(0, counts["full"]))
        spent = sum(c.seconds for c in pipeline.cycles)
        phases.append(
            {
                "phase": "warm pipeline: start to the full run in gold",
                "seconds": round(full.at - pipeline.started, 2),
            }
        )
        phases.append({"phase": "warm pipeline: its cycles of the full run", "seconds": round(spent, 2)})
        idle = len(pipeline.cycles) + 1
        pipeline.wait_for("an idle cycle", lambda: len(pipeline.cycles) >= idle)
        count = len(pipeline.cycles)
        appeared = time.time()
        files = sorted(p for p in more.rglob("*") if p.is_file() and not p.name.startswith("_"))
        appear(files, more, inbox)
        built = pipeline.wait_for("the cycle of +more", lambda: landed_and_built(count, counts["more"]))
        cycles = pipeline.cycles[count:]
        phases.append(
            {"phase": "warm pipeline: +more, files appear to gold", "seconds": round(built.at - appeared, 2)}
        )
        phases.append(
            {
                "phase": "warm cycle (+more)",
                "seconds": round(sum(c.seconds for c in cycles if c.landed or c.built), 2),
            }
        )
    finally:
        pipeline.stop()
    for phase in phases:
        print(f"   project {phase['phase']}: {phase['seconds']:.1f}s", flush=True)
    phases.append(export_history(home, env, log, tables, relation))
    return phases


def run_peer(
    workdir: Path, base: Path, more: Path, producer: str = "debezium", memory: str | None = None
) -> list[dict]:
    if not PEER_PYTHON.exists():
        raise SystemExit(f"{PEER_PYTHON} is missing: run `bash benchmarks/peer/setup.sh` first")
    args = [str(PEER_PYTHON), "benchmarks/peer_auto_cdc.py", "--input", str(base), "--more", str(more)]
    args += ["--workdir", str(workdir), "--producer", producer]
    args += ["--driver-memory", memory] if memory else []
    with (workdir.parent / "peer.log").open("w", encoding="utf-8") as log:
        subprocess.run(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False)
    results = json.loads((workdir / "results.json").read_text(encoding="utf-8"))
    for phase in results["phases"]:
        print(f"   peer {phase['phase']}: {phase.get('seconds')}s", flush=True)
    return results["phases"]


def table_specs(expected: dict[str, dict[str, dict]]) -> dict[str, dict]:
    """Per table_id: its topic, the peer's target table, key columns, and the key text of each
    key as the peer holds its values (the JSON text of the values sent)."""
    tables: dict[str, dict] = {}
    for feed in default_feeds("gendb"):  # generate()'s tables, as generate() names them
        table = feed.table
        key_of_sent = {}
        for key, entry in expected.get(table.table_id, {}).items():
            sent = next((v[2] for v in entry["versions"] if v[2]), None)
            if sent:
                key_of_sent[tuple(peer_key_text(sent[c]) for c in table.key)] = key
        tables[table.table_id] = {
            "topic": table.topic,
            "target": "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in table.topic.lower()),
            "keys": list(table.key),
            "key_of_sent": key_of_sent,
        }
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, help="row changes the generator simulates")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/peer-compare"))
    parser.add_argument(
        "--increment", type=float, default=0.01, help="share of the messages in the second run"
    )
    parser.add_argument("--skip-peer", action="store_true", help="only the project")
    parser.add_argument(
        "--peer-driver-memory",
        help="the peer's Spark driver memory (its own default: 2g); its target is in memory",
    )
    parser.add_argument(
        "--warm", action="store_true", help="also the project's warm pipeline, on a lakehouse of its own"
    )
    parser.add_argument(
        "--diff-only", action="store_true", help="diff the histories of a finished run in WORKDIR again"
    )
    parser.add_argument(
        "--producer",
        choices=("debezium", *peer_live.PRODUCERS),
        default="debezium",
        help="whose generated traffic (other than debezium: live rows diffed, benchmarks/peer_live.py)",
    )
    parser.add_argument(
        "--skip-project",
        action="store_true",
        help="--producer other than debezium: only the peer (and --warm), diffed against the expected rows",
    )
    parser.add_argument(
        "--ces-large-every",
        type=int,
        default=CES_SPLIT_EVERY,
        help=f"--producer ces: one change in this many has large values, split (default {CES_SPLIT_EVERY})",
    )
    args = parser.parse_args(argv)
    if args.producer != "debezium":
        return compare_live(args, parser)
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    generated, base, more = work / "generated" / "debezium", work / "base", work / "more"
    runs = work / "runs.json"

    if not args.diff_only:
        if not args.changes:
            parser.error("--changes is needed (but with --diff-only)")
        started = time.perf_counter()
        traffic = generate(args.changes, SEED, record_history=True)
        traffic.write(generated)
        del traffic  # the files hold it now
        for directory in (base, more):
            shutil.rmtree(directory, ignore_errors=True)
        kept, moved = split_files(generated, base / "debezium", more / "debezium", args.increment)
        print(
            f"generated {kept + moved:,} messages ({kept:,} + {moved:,}) "
            f"in {time.perf_counter() - started:.1f}s"
        )
        done: dict[str, Any] = {"changes": args.changes, "messages": {"full": kept, "more": moved}}
        tables = [feed.table.table_id for feed in default_feeds("gendb")]
        done["project"] = {"phases": run_project(work / "project", base, more, tables)}
        if args.warm:
            warm = run_project_warm(work / "project-warm", base, more, done["messages"], tables)
            done["project warm"] = {"phases": warm}
        if not args.skip_peer:
            done["peer"] = {
                "phases": run_peer(
                    work / "peer", base / "debezium", more / "debezium", memory=args.peer_driver_memory
                )
            }
        runs.write_text(json.dumps(done, indent=1), encoding="utf-8")
    report = json.loads(runs.read_text(encoding="utf-8"))
    with (generated / HISTORY_FILE).open(encoding="utf-8") as handle:
        expected = json.load(handle)
    tables = table_specs(expected)

    got = project_histories(work / "project" / "history.jsonl", {t: s["keys"] for t, s in tables.items()})
    report["project"]["differing_keys"] = dict(diff(expected, got, 0, same_text)[0])
    if "project warm" in report:
        keys_of = {t: s["keys"] for t, s in tables.items()}
        got = project_histories(work / "project-warm" / "history.jsonl", keys_of)
        report["project warm"]["differing_keys"] = dict(diff(expected, got, 0, same_text)[0])
    if "peer" in report:
        got = peer_histories(work / "peer" / "history", tables)
        per_class, first = diff(expected, got, 1, peer_row_same)
        report["peer"]["differing_keys"] = dict(per_class)
        files = sorted(p for p in (base / "debezium").rglob("*") if p.is_file())
        examples = {}
        for cause, (table_id, key) in first.items():
            entry = expected.get(table_id, {}).get(key)
            sent = next((v[2] for v in entry["versions"] if v[2]), {}) if entry else {}
            sent_key = {c: sent.get(c) for c in tables[table_id]["keys"]} if sent else {}
            examples[cause] = {
                "table_id": table_id,
                "key": key,
                "expected": entry and expected_forms(entry)[1],
                "peer": got.get((table_id, key)),
                "message": example_message(files, tables[table_id]["topic"], cause, sent_key)[:2000],
            }
        report["peer"]["examples"] = examples
    causes = Counter(c for keys in expected.values() for e in keys.values() for c in e["causes"])
    report["keys"] = {"total": sum(len(keys) for keys in expected.values()), "with_cause": dict(causes)}
    (work / "report.json").write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    (work / "report.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


def ratio_lines(seconds: dict[str, dict[str, float]]) -> list[str]:
    """Issue 42's ratios (project ÷ peer, target ≤ 1.0) from the phases that ran. The peer's
    full run counts its Spark start-up, as the project's counts its processes' start-ups."""
    project, warm, peer = (seconds.get(key, {}) for key in ("project", "project warm", "peer"))
    if not peer:
        return []
    peer_full = peer.get("spark start-up", 0) + peer.get("pipeline run (full)", 0)
    peer_more = peer.get("pipeline run (+more)")
    pairs = [
        (
            "project full (land + build) ÷ peer full (start-up + run)",
            project.get("land", 0) + project.get("dbt build (full)", 0),
            peer_full,
        ),
        (
            "project +more, cold commands (land + build) ÷ peer +more",
            project.get("land (+more)", 0) + project.get("dbt build (incremental)", 0),
            peer_more,
        ),
        (
            "project full, warm pipeline (start to gold) ÷ peer full (start-up + run)",
            warm.get("warm pipeline: start to the full run in gold"),
            peer_full,
        ),
        ("project +more, warm pipeline (its cycle) ÷ peer +more", warm.get("warm cycle (+more)"), peer_more),
    ]
    lines = ["", "| ratio (target ≤ 1.0) | project (s) | peer (s) | ratio |", "|---|---:|---:|---:|"]
    for name, mine, theirs in pairs:
        if mine and theirs:
            lines.append(f"| {name} | {mine:.1f} | {theirs:.1f} | {mine / theirs:.2f} |")
    return lines


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"Debezium traffic: {report['changes']:,} changes, {report['messages']['full']:,} messages in the "
        f"full run and {report['messages']['more']:,} more in the incremental run; "
        f"{report['keys']['total']:,} keys.",
        "",
    ]
    systems = [
        ("project", "project (s)"),
        ("project warm", "project, warm pipeline (s)"),
        ("peer", "peer (s)"),
    ]
    systems = [(key, title) for key, title in systems if key in report]
    seconds = {key: {p["phase"]: p.get("seconds") for p in report[key]["phases"]} for key, _ in systems}
    lines += ["| phase | " + " | ".join(title for _, title in systems) + " |"]
    lines += ["|---|" + "---:|" * len(systems)]
    for name in dict.fromkeys(name for key, _ in systems for name in seconds[key]):
        lines.append(
            f"| {name} | " + " | ".join(str(seconds[key].get(name, "")) for key, _ in systems) + " |"
        )
    lines += ratio_lines(seconds)
    lines += [
        "",
        "| class | keys with the cause | "
        + " | ".join(f"{key}: keys differing" for key, _ in systems)
        + " |",
    ]
    lines += ["|---|---:|" + "---:|" * len(systems)]
    by_cause = report["keys"]["with_cause"]
    differing = {key: report[key].get("differing_keys", {}) for key, _ in systems}
    for cause in [*CAUSES, UNEXPLAINED, "keys the source never had"]:
        if by_cause.get(cause) or any(d.get(cause) for d in differing.values()):
            counts = (by_cause.get(cause, 0), *(differing[key].get(cause, 0) for key, _ in systems))
            lines.append(f"| {cause} | " + " | ".join(f"{n:,}" for n in counts) + " |")
    for cause, example in report.get("peer", {}).get("examples", {}).items():
        lines += [
            "",
            f"Peer, {cause}: `{example['table_id']}` key `{example['key']}`",
            "- expected (images as sent, null while deleted): "
            f"`{json.dumps(example['expected'], default=str)[:600]}`",
            f"- peer: `{json.dumps(example['peer'], default=str)[:600]}`",
            f"- a message: `{example['message'][:600]}`",
        ]
    return "\n".join(lines) + "\n"


# -- other producers: live rows per key (benchmarks/peer_live.py) ----------------------------------
# CES: one change in this many carries large values, split into segments. benchmarks/pipeline.py's
# 1 in 1,000 leaves none at a few thousand changes; 1 in 200 gives a dozen or more.
CES_SPLIT_EVERY = 200


def generate_producer(
    producer: str, changes: int, out: Path, ces_large_every: int = CES_SPLIT_EVERY
) -> list[str]:
    """`producer`'s generated traffic (its generator's defaults, SEED) written to `out`; returns
    the table_ids of its tables."""
    if producer == "goldengate":
        from cdc_tools.generators.goldengate_traffic import generate as generate_goldengate

        traffic = generate_goldengate(changes, SEED)
        tables = [table.table_id for table in traffic.tables.values()]
    elif producer == "canal":
        from cdc_tools.generators.canal_traffic import generate as generate_canal

        traffic = generate_canal(changes, SEED)
        tables = [table.table_id for table in traffic.tables]
    elif producer == "dataworks":
        from cdc_tools.generators.dataworks_traffic import generate as generate_dataworks

        traffic = generate_dataworks(changes, SEED)
        tables = list(traffic.expected_current)
    else:
        from cdc_tools.generators.ces_traffic import generate as generate_ces

        traffic = generate_ces(changes, SEED, big_every=ces_large_every)
        tables = [table.table_id for table in traffic.tables]
    traffic.write(out)
    return tables


def compare_live(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The module's steps for `args.producer` (not Debezium): live rows diffed per key."""
    producer = args.producer
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    generated, base, more = work / "generated" / producer, work / "base", work / "more"
    runs = work / "runs.json"
    if not args.diff_only:
        if not args.changes:
            parser.error("--changes is needed (but with --diff-only)")
        started = time.perf_counter()
        shutil.rmtree(generated, ignore_errors=True)
        tables = generate_producer(producer, args.changes, generated, args.ces_large_every)
        for directory in (base, more):
            shutil.rmtree(directory, ignore_errors=True)
        kept, moved = split_files(generated, base / producer, more / producer, args.increment)
        print(
            f"generated {kept + moved:,} {producer} messages ({kept:,} + {moved:,}) "
            f"in {time.perf_counter() - started:.1f}s"
        )
        done: dict[str, Any] = {
            "producer": producer,
            "changes": args.changes,
            "messages": {"full": kept, "more": moved},
            "tables": tables,
        }
        if not args.skip_project:
            done["project"] = {"phases": run_project(work / "project", base, more, tables, "cdc_current")}
        if args.warm:
            warm = run_project_warm(
                work / "project-warm", base, more, done["messages"], tables, "cdc_current"
            )
            done["project warm"] = {"phases": warm}
        if not args.skip_peer:
            done["peer"] = {
                "phases": run_peer(
                    work / "peer", base / producer, more / producer, producer, args.peer_driver_memory
                )
            }
        runs.write_text(json.dumps(done, indent=1), encoding="utf-8")
    report = json.loads(runs.read_text(encoding="utf-8"))
    for name, found in diff_live_report(producer, generated, work).items():
        report.setdefault(name, {}).update(found)  # beside each system's phases
    (work / "report.json").write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    (work / "report.md").write_text(live_markdown(report), encoding="utf-8")
    print(live_markdown(report))
    return 0


def diff_live_report(producer: str, generated: Path, work: Path) -> dict[str, Any]:
    """The per-key live-row diff of each system that ran, by class, with one example per class:
    the key, its expected row, the system's row, and the message that showed the cause."""
    import pyarrow.parquet as pq

    tables = peer_live.Tables()
    files = sorted(p for p in generated.rglob("*") if p.is_file() and not p.name.startswith("_"))
    events = peer_live.EVENTS[producer](peer_live.message_lines(files), tables)
    key_causes = peer_live.causes(events)
    with (generated / "_expected_current.json").open(encoding="utf-8") as handle:
        expected = json.load(handle)
    systems: dict[str, dict] = {}
    for name, directory in (("project", "project"), ("project warm", "project-warm")):
        path = work / directory / "history.jsonl"
        if path.exists():
            with path.open(encoding="utf-8") as handle:
                systems[name] = peer_live.project_live(handle, tables)
    history = work / "peer" / "history"
    if history.is_dir():
        rows = {}
        for table_id in expected:
            path = history / f"{peer_live.target_name(table_id)}.parquet"
            if path.exists():
                rows[table_id] = pq.read_table(path).to_pylist()
        systems["peer"] = peer_live.peer_live(producer, rows, tables)
    out: dict[str, Any] = {
        "keys": {
            "expected_live": sum(len(keys) for keys in expected.values()),
            "in_traffic": sum(len(keys) for keys in key_causes.values()),
            "with_cause": dict(peer_live.cause_counts(key_causes)),
        }
    }
    for name, got in systems.items():
        per_class, first = peer_live.diff_live(expected, got, key_causes)
        examples = {}
        for cause, (table_id, key) in first.items():
            noted = key_causes.get(table_id, {}).get(key, {})
            examples[cause] = {
                "table_id": table_id,
                "key": key,
                "expected": expected.get(table_id, {}).get(key),
                "got": got.get(table_id, {}).get(key),
                "message": peer_live.abbreviated(
                    noted.get(cause) or peer_live.first_text(events, table_id, key)
                ),
            }
        out[name] = {"differing_keys": dict(per_class), "examples": examples}
    return out


def live_markdown(report: dict[str, Any]) -> str:
    """report.md of a live-row comparison (`--producer` other than debezium)."""
    keys = report["keys"]
    lines = [
        f"{report['producer']} traffic: {report['changes']:,} changes, {report['messages']['full']:,} "
        f"messages in the full run and {report['messages']['more']:,} more in the incremental run; "
        f"{keys['in_traffic']:,} keys in the traffic, {keys['expected_live']:,} live at the end. "
        "Compared per key: the live rows (the generator records no history).",
        "",
    ]
    systems = [
        ("project", "project (s)"),
        ("project warm", "project, warm pipeline (s)"),
        ("peer", "peer (s)"),
    ]
    systems = [(key, title) for key, title in systems if key in report and "phases" in report[key]]
    seconds = {key: {p["phase"]: p.get("seconds") for p in report[key]["phases"]} for key, _ in systems}
    lines += ["| phase | " + " | ".join(title for _, title in systems) + " |"]
    lines += ["|---|" + "---:|" * len(systems)]
    for name in dict.fromkeys(name for key, _ in systems for name in seconds[key]):
        lines.append(
            f"| {name} | " + " | ".join(str(seconds[key].get(name, "")) for key, _ in systems) + " |"
        )
    ratios = ratio_lines(seconds)
    lines += ratios if len(ratios) > 3 else []  # none without the project (--skip-project)
    lines += [
        "",
        "| class | keys with the cause | "
        + " | ".join(f"{key}: keys differing" for key, _ in systems)
        + " |",
    ]
    lines += ["|---|---:|" + "---:|" * len(systems)]
    differing = {key: report[key].get("differing_keys", {}) for key, _ in systems}
    for cause in [*peer_live.ALL_CAUSES, peer_live.UNEXPLAINED, peer_live.NEVER_HAD]:
        if keys["with_cause"].get(cause) or any(d.get(cause) for d in differing.values()):
            counts = (keys["with_cause"].get(cause, 0), *(differing[key].get(cause, 0) for key, _ in systems))
            lines.append(f"| {cause} | " + " | ".join(f"{n:,}" for n in counts) + " |")
    for key, _ in systems:
        for cause, example in report[key].get("examples", {}).items():
            lines += [
                "",
                f"{key.capitalize()}, {cause}: `{example['table_id']}` key `{example['key']}`",
                f"- expected live row (null: not live): "
                f"`{json.dumps(example['expected'], default=str)[:600]}`",
                f"- {key}: `{json.dumps(example['got'], default=str)[:600]}`",
                f"- a message: `{example['message'][:600]}`",
            ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
