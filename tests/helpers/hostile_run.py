"""Hostile input end to end: land mutants of every producer's traffic in every container beside
valid traffic, build, and check that nothing crashed, nothing was lost and untouched tables
did not change.

    python -m tests.helpers.hostile_run --workdir DIR [--mutants 200] [--seed 1] [--huge 1000000]

One process, one Spark session, a lakehouse of its own under DIR:

1. Two generated traffics of every producer with a generator (the registry's, found by
   name: cdc_tools/generators/__init__.py): *clean* and *source*, whose database / schema
   names carry `clean` and `hostile` so that they share no table. Both land as they are;
   `dbt build`; gold.cdc_history of the clean tables is kept as the baseline.
2. Mutants of the source traffic's messages (tests/helpers/mutants.py: a few hundred per
   producer, plus 1 MB values and masks, 2,000-deep nesting and huge keys), spread over the
   three containers (JSON lines, kcat -J, Event Hubs Capture Avro), and container-level damage
   (broken kcat envelopes, truncated or corrupted Avro files). They land; `dbt build` again.
3. Checks: every `land` exits 0, or 1 naming each refused file on one line, never with a
   traceback; the build succeeds (its own tests included: accounting, history consistency,
   grain); every distinct bronze message has exactly one outcome, every quarantined one a
   reason; gold of the clean tables equals the baseline.
4. With `--full-refresh`: `dbt build --full-refresh` with the mutants succeeds and leaves
   gold.cdc_history as the incremental builds left it (its time against the first build's
   is in the report).

Prints a JSON report as its last line and exits 0 when every check holds, 1 otherwise.
`tests/e2e/test_hostile_input.py` runs it with a small budget; run it by hand with a larger
one (docs/operations.md, "Limits").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from cdc_tools.generators import generated_producers, landings, traffic_module
from tests.helpers.tables import SNAPSHOT, history

ROOT = Path(__file__).resolve().parents[2]
PRODUCERS = generated_producers()
CONTAINERS = ("jsonl", "kcat", "eventhubs-avro")
CLEAN, SOURCE = "clean", "source"
NAMESPACES = {CLEAN: "clean", SOURCE: "hostile"}  # in the source names of each traffic's tables


# -- traffic -------------------------------------------------------------------
def generate(producer: str, kind: str, directory: Path, changes: int) -> list[str]:
    """Write one traffic; return the source table ids it holds. Tables whose columns the seeds
    declare keep their declared names in the source traffic only, so that its mutants of them
    are parsed all the way."""
    seed = 11 if kind == CLEAN else 29
    module = traffic_module(producer)
    traffic = module.generate_named(changes, seed, 3, NAMESPACES[kind], keep_declared=kind == SOURCE)
    traffic.write(directory)
    return list(traffic.expected_current)


def valid_messages(producer: str, directory: Path) -> list[tuple[str | None, str | None]]:
    """(key, value) of every message of a written traffic."""
    found: list[tuple[str | None, str | None]] = []
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name.startswith("_"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            if path.parent.name == "kcat":
                record = json.loads(line)
                found.append((record.get("key"), record.get("payload")))
            else:
                found.append((None, line))
    return found


# -- writing mutants into the containers ------------------------------------------
def _json_string(data: bytes) -> bytes:
    """`data` as the inside of a JSON string; bytes that are not UTF-8 stay raw, as a dump
    of a binary Kafka value would carry them."""
    try:
        return json.dumps(data.decode("utf-8"), ensure_ascii=False)[1:-1].encode("utf-8")
    except UnicodeDecodeError:
        out = bytearray()
        for byte in data:
            if byte in (0x22, 0x5C):
                out += b"\\" + bytes([byte])
            elif byte < 0x20:
                out += f"\\u{byte:04x}".encode()
            else:
                out.append(byte)
        return bytes(out)


def kcat_line(topic: str, partition: int, offset: int, key: str | None, value: bytes | None) -> bytes:
    head = {"topic": topic, "partition": partition, "offset": offset, "tstype": "create"}
    head.update(ts=1735689600000 + offset, broker=0, headers=["mutant", str(offset)], key=key)
    text = json.dumps(head)[:-1].encode("utf-8")
    payload = b"null" if value is None else b'"' + _json_string(value) + b'"'
    return text + b', "payload": ' + payload + b"}\n"


def capture_path(directory: Path, partition: int, minute: int = 0) -> Path:
    hour = directory / "ns" / "mutants" / str(partition) / "2025" / "01" / "01" / "00"
    return hour / f"{minute:02d}" / "00.avro"


def write_capture(path: Path, records: list[tuple[str | None, bytes | None]]) -> None:
    from tests.helpers.eventhubs_capture import write_capture_file

    write_capture_file(
        path,
        [
            {
                "SequenceNumber": n,
                "Offset": str(n * 100),
                "SystemProperties": {"x-opt-kafka-key": key.encode()} if key is not None else {},
                "Properties": {"mutant": str(n)},
                "Body": value,
            }
            for n, (key, value) in enumerate(records)
        ],
    )


def corrupt_kcat_lines(topic: str) -> list[bytes]:
    """kcat -J lines whose envelope is broken: each must land as raw text with its reason."""
    good = {"topic": topic, "partition": 0, "offset": 1, "key": None, "payload": "{}"}
    lines = [
        json.dumps({**good, "partition": 2**40}),
        json.dumps({**good, "offset": 2**70}),
        json.dumps({**good, "offset": -5}),
        json.dumps({**good, "partition": "0"}),
        json.dumps({k: v for k, v in good.items() if k != "topic"}),
        json.dumps({**good, "headers": {"not": "an array"}}),
        json.dumps({**good, "headers": [["nested"], {"x": 1}, 5, None]}),
        json.dumps({**good, "key": {"an": "object"}, "payload": 12}),
        json.dumps({**good, "ts": 10**30, "offset": 2}),
        json.dumps({**good, "ts": -(10**30), "offset": 3}),
        json.dumps({**good, "payload": "\ud800 lone surrogate", "offset": 4}),
        json.dumps({**good, "key": "\udfff", "offset": 5, "headers": ["\ud800", "\udbff"]}),
        '{"topic": ' + "[" * 2000 + "]" * 2000 + "}",
        "[" * 5000 + "]" * 5000,
        '{"topic": "t", "partition": 0, "offset": 1e400}',
    ]
    encoded = [line.encode("utf-8", "surrogatepass") + b"\n" for line in lines]
    return [*encoded, b"\xff\xfe{}\n", b"{" * 1000 + b"\n"]


def corrupt_capture_files(directory: Path) -> list[Path]:
    """Avro files that cannot be read to their end: truncated, a damaged block, a bad sync
    marker, not Avro at all. Each must be refused on one line; what precedes the damage lands."""
    records = [(None, json.dumps({"n": n, "pad": "x" * 300}).encode()) for n in range(40)]
    made = []
    for minute, damage in enumerate(("truncated", "block", "sync", "not_avro"), start=10):
        path = capture_path(directory, 9, minute)
        write_capture(path, records)
        data = bytearray(path.read_bytes())
        if damage == "truncated":
            data = data[: len(data) * 2 // 3]
        elif damage == "block":
            middle = len(data) // 2
            data[middle : middle + 40] = os.urandom(40)
        elif damage == "sync":
            data[-16:] = bytes(16)
        else:
            data = bytearray(b"this is not an avro file\n" * 10)
        path.write_bytes(bytes(data))
        made.append(path)
    return made


def fresh_identity(producer: str, text: str, n: int) -> str:
    """The message made a new one of its producer: what identifies it (and makes a copy a
    duplicate) set to values no other message has, so that its mutant is parsed all the way
    (the producer's `message_body` and `fresh_identity`, cdc_tools/generators/__init__.py)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        return text
    module = traffic_module(producer)
    module.fresh_identity(module.message_body(value), n)
    return json.dumps(value)


def write_mutants(
    producer: str,
    messages: list[tuple[str | None, str | None]],
    directory: Path,
    count: int,
    seed: int,
    huge: int,
) -> dict[str, list[dict[str, Any]]]:
    """Write `count` random mutants plus the special ones over the three containers; return
    the manifest (operator per container, in file order)."""
    from tests.helpers.mutants import Mutator

    rng = random.Random(f"{seed}-{producer}")
    mutator = Mutator(producer, rng, huge=huge)
    bases = [(k, v) for k, v in messages if v is not None]
    made: list[tuple[str, str | None, bytes]] = []
    specials_base = rng.choice([v for _, v in bases if mutator.has_mask(v)] or [v for _, v in bases])
    specials_base = fresh_identity(producer, specials_base, 0)
    made.extend((name, None, data) for name, data in mutator.specials(specials_base))
    for n in range(1, count + 1):
        key, value = rng.choice(bases)
        if rng.random() < 0.5:
            value = fresh_identity(producer, value, n)
        if key is not None and rng.random() < 0.2:  # a Kafka key (kcat): some mutants are of it
            operator, mutated_key = mutator.mutate(key)
            made.append((f"key_{operator}", mutated_key.decode("utf-8", "replace"), value.encode("utf-8")))
        else:
            operator, data = mutator.mutate(value)
            made.append((operator, key, data))

    manifest: dict[str, list[dict[str, Any]]] = {c: [] for c in CONTAINERS}
    split: dict[str, list[tuple[str, str | None, bytes]]] = {c: [] for c in CONTAINERS}
    for index, mutant in enumerate(made):
        split[CONTAINERS[index % len(CONTAINERS)]].append(mutant)
    topic = f"mutants.{producer}"
    jsonl = directory / "jsonl" / "mutants.jsonl"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_bytes(b"".join(data.replace(b"\n", b" ") + b"\n" for _, _, data in split["jsonl"]))
    kcat = directory / "kcat" / "mutants.kcat"
    kcat.parent.mkdir(parents=True, exist_ok=True)
    kcat.write_bytes(
        b"".join(kcat_line(topic, 0, n, key, data) for n, (_, key, data) in enumerate(split["kcat"]))
        + b"".join(corrupt_kcat_lines(topic))
    )
    capture = capture_path(directory / "eventhubs-avro", 0)
    write_capture(capture, [(key, data) for _, key, data in split["eventhubs-avro"]])
    corrupt_capture_files(directory / "eventhubs-avro")
    from python_ingest.containers import iter_messages

    files = {"jsonl": jsonl, "kcat": kcat, "eventhubs-avro": capture}
    for container in CONTAINERS:
        ids = [m.message_id for m in iter_messages(container, files[container])]
        manifest[container] = [
            {"operator": operator, "message_id": ids[n] if n < len(ids) else None}
            for n, (operator, _, _) in enumerate(split[container])
        ]
    return manifest


# -- running the product in this process ------------------------------------------
def land(*args: str | Path) -> tuple[int, str]:
    from cdc_cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            code = main(["land", *map(str, args)])
        except BaseException:  # noqa: BLE001 - a crash is what this run looks for
            traceback.print_exc()
            code = -1
    return code, buffer.getvalue()


def dbt_build(*args: str) -> tuple[bool, float, list[str]]:
    from dbt.cli.main import dbtRunner

    started = time.perf_counter()
    result = dbtRunner().invoke(
        ["build", *args, "--project-dir", str(ROOT), "--profiles-dir", str(ROOT), "--quiet"]
    )
    failures = [
        f"{r.node.unique_id}: {r.status}: {(r.message or '')[:600]}"
        for r in getattr(result.result, "results", None) or []
        if str(r.status) in ("error", "fail", "runtime error")
    ]
    if result.exception is not None:
        failures.append(f"dbt raised: {result.exception!r}"[:2000])
    return bool(result.success), time.perf_counter() - started, failures


def land_problems(code: int, output: str) -> list[str]:
    """What is wrong with a land run: a crash, a traceback, an exit other than 0 or 1, an error
    line that names no file."""
    problems = []
    if code not in (0, 1):
        problems.append(f"exit {code}")
    if "Traceback" in output:
        problems.append("traceback: " + output[output.index("Traceback") :][:1500])
    for line in output.splitlines():
        if line.startswith("error:") and "/" not in line:
            problems.append(f"an error line names no file: {line[:300]}")
    if code == 1 and not any(line.startswith("error:") for line in output.splitlines()):
        problems.append("exit 1 without an error line")
    return problems


def run(
    workdir: Path, mutants: int, seed: int, huge: int, changes: int, full_refresh: bool = False
) -> dict[str, Any]:
    report: dict[str, Any] = {"mutants_per_producer": mutants, "seed": seed, "problems": []}
    problems: list[str] = report["problems"]
    traffic = workdir / "traffic"
    clean_tables: set[str] = set()
    source_tables: set[str] = set()
    for producer in PRODUCERS:
        clean_tables.update(generate(producer, CLEAN, traffic / CLEAN / producer, changes))
        source_tables.update(generate(producer, SOURCE, traffic / SOURCE / producer, changes))
    compared = sorted(clean_tables - source_tables)
    report["compared_tables"] = compared

    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest.profile import target_spark_parameters

    spark = active_session(target_spark_parameters())
    for kind in (CLEAN, SOURCE):
        for producer in PRODUCERS:
            for container, path in landings(producer, traffic / kind):
                code, output = land("--format", producer, "--container", container, path)
                if code != 0:
                    problems.append(f"valid {kind} {producer} traffic did not land: {output[-1500:]}")

    ok, seconds, failures = dbt_build()
    report["baseline_build"] = {"success": ok, "seconds": round(seconds, 1), "failures": failures}
    if not ok:
        problems.append("the build of valid traffic failed")
        return report
    baseline = history(spark, compared, columns=SNAPSHOT)

    manifests: dict[str, Any] = {}
    landed: dict[str, Any] = {}
    for producer in PRODUCERS:
        directory = workdir / "mutants" / producer
        manifests[producer] = write_mutants(
            producer, valid_messages(producer, traffic / SOURCE / producer), directory, mutants, seed, huge
        )
        for container in CONTAINERS:
            started = time.perf_counter()
            # --force: a file of mutants may hold NUL bytes, which land refuses without it.
            code, output = land(
                "--format", producer, "--container", container, "--force", directory / container
            )
            landed[f"{producer}/{container}"] = {
                "exit": code,
                "seconds": round(time.perf_counter() - started, 1),
                "errors": [line[:300] for line in output.splitlines() if line.startswith("error:")],
            }
            problems.extend(f"land {producer} {container}: {p}" for p in land_problems(code, output))
    report["land"] = landed
    report["mutants"] = {
        p: {c: dict(Counter(m["operator"] for m in manifests[p][c])) for c in CONTAINERS} for p in PRODUCERS
    }

    ok, seconds, failures = dbt_build()
    report["hostile_build"] = {"success": ok, "seconds": round(seconds, 1), "failures": failures}
    if not ok:
        problems.append("the build with the mutants failed")
        return report

    from python_ingest.bronze import BRONZE_FORMATS

    landed_sql = "\n            union all ".join(
        f"select distinct '{f}' as f, message_id from bronze.raw_{f}" for f in BRONZE_FORMATS
    )
    accounting = spark.sql(
        f"""
        with landed as (
            {landed_sql}
        ),
        outcomes as (
            select source_format as f, message_id, count(*) as n,
                   max(case when outcome = 'quarantined' and coalesce(trim(detail), '') = ''
                       then 1 else 0 end) as no_reason
            from silver.cdc_message_outcomes group by source_format, message_id
        )
        select count(*) as landed,
               count(outcomes.message_id) as with_outcome,
               coalesce(sum(case when outcomes.n <> 1 then 1 else 0 end), 0) as not_one,
               coalesce(sum(outcomes.no_reason), 0) as without_reason
        from landed left join outcomes on landed.f = outcomes.f and landed.message_id = outcomes.message_id
        """
    ).first()
    report["accounting"] = accounting.asDict()
    if accounting.landed != accounting.with_outcome or accounting.not_one or accounting.without_reason:
        problems.append(f"accounting: {accounting.asDict()}")
    report["outcomes"] = {
        f"{r.source_format}/{r.outcome}": r.n
        for r in spark.sql(
            "select source_format, outcome, count(*) as n from silver.cdc_message_outcomes group by 1, 2"
        ).collect()
    }
    # By producer and message id: the capture files of two producers share a source URI, so
    # their messages at one partition and offset share a message id.
    specials = {
        (p, m["message_id"]): f"{p}/{c}/{m['operator']}"
        for p in PRODUCERS
        for c in CONTAINERS
        for m in manifests[p][c]
        if m["message_id"] and m["operator"].startswith(("huge_", "deep_"))
    }
    if specials:
        listed = ", ".join(f"('{p}', '{i}')" for p, i in specials)
        report["special_outcomes"] = {
            specials[(r.source_format, r.message_id)]: f"{r.outcome}: {(r.detail or '')[:160]}"
            for r in spark.sql(
                "select source_format, message_id, outcome, detail from silver.cdc_message_outcomes "
                f"where (source_format, message_id) in ({listed})"
            ).collect()
        }
    after = history(spark, compared, columns=SNAPSHOT)
    report["compared_versions"] = len(baseline)
    if after != baseline:
        changed = sorted({row[0] for row in set(after) ^ set(baseline)})
        problems.append(f"gold.cdc_history changed for tables no mutant came from: {changed}")
    if full_refresh:
        every_table = [r[0] for r in spark.sql("select distinct table_id from gold.cdc_history").collect()]
        incremental = history(spark, every_table, columns=SNAPSHOT)
        ok, seconds, failures = dbt_build("--full-refresh")
        report["full_refresh_build"] = {"success": ok, "seconds": round(seconds, 1), "failures": failures}
        if not ok:
            problems.append("the full refresh with the mutants failed")
        elif (refreshed := history(spark, every_table, columns=SNAPSHOT)) != incremental:
            only_incremental = sorted(set(incremental) - set(refreshed))
            only_full = sorted(set(refreshed) - set(incremental))
            tables = sorted({row[0] for row in only_incremental + only_full})
            problems.append(
                f"gold.cdc_history after a full refresh differs from the incremental builds in {tables}: "
                f"incremental only {only_incremental[:6]}; full refresh only {only_full[:6]}"
            )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--mutants", type=int, default=200, help="random mutants per producer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--huge", type=int, default=1_000_000, help="size of the huge values (bytes)")
    parser.add_argument("--changes", type=int, default=60, help="row changes per generated traffic")
    parser.add_argument(
        "--full-refresh",
        action="store_true",
        help="then rebuild with --full-refresh: it must succeed and give the same gold (timed)",
    )
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    os.environ["CDC_LAKEHOUSE_DIR"] = str(args.workdir / "lakehouse")
    os.environ["DBT_PROFILES_DIR"] = str(ROOT)
    os.chdir(ROOT)
    started = time.perf_counter()
    try:
        report = run(args.workdir, args.mutants, args.seed, args.huge, args.changes, args.full_refresh)
    except BaseException:  # noqa: BLE001 - reported, not raised
        report = {"problems": ["the run raised: " + traceback.format_exc()[-3000:]]}
    finally:
        from tests.helpers.services import stop_services

        stop_services(args.workdir / "lakehouse")
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, default=str))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
