"""Landing from Kafka against landing the same records from a kcat dump, and the bare parse.

    .venv/bin/python benchmarks/kafka_landing.py [--changes 6000] [--workdir DIR] [--keep]

Generates Debezium traffic (python -m python_ingest generate --format debezium: kcat -J dumps of
SQL Server and PostgreSQL topics, keyed partitions, headers, tombstones), starts a real Kafka
broker on 127.0.0.1 (tests/helpers/real_servers.py) and produces every record of the dumps to
its topic and partition. Then, each phase a process of its own, as a user runs it:

    spark start-up   benchmarks/bare_parse.py --noop (start Spark with the target's settings)
    land (kcat)      python -m python_ingest land --container kcat of the dumps, lakehouse A
    land (kafka)     python -m python_ingest land --kafka of the topics, lakehouse B
    bare parse       benchmarks/bare_parse.py on lakehouse B (from_json to the change shape)

and prints a markdown table: seconds, records, records/s with and without Spark's start-up,
and the ratios kafka ÷ kcat and kafka ÷ bare parse (of records/s). One run; absolute times on
a shared machine are noisy, ratios less so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from python_ingest.containers import read_kcat  # noqa: E402
from tests.helpers.real_servers import KafkaBroker  # noqa: E402
from tests.helpers.services import stop_services  # noqa: E402

PYTHON = Path(sys.executable)


def timed(command: list[str], lakehouse: Path) -> tuple[float, str]:
    env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    started = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr[-3000:]}")
    return seconds, result.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=6000, help="row changes to generate (default 6000)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to work (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kafka-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    traffic = work / "traffic"
    lake_kcat, lake_kafka = work / "lakehouse-kcat", work / "lakehouse-kafka"
    try:
        subprocess.run(
            [
                PYTHON,
                "-m",
                "python_ingest",
                "generate",
                "--format",
                "debezium",
                "--changes",
                str(args.changes),
                traffic,
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        dumps = sorted((traffic / "kcat").glob("*"))
        by_topic: dict[str, list[tuple]] = {}
        partitions: dict[str, int] = {}
        for dump in dumps:
            for message in read_kcat(dump):
                topic = message.source_uri.removeprefix("kafka:")
                headers = list((message.headers or {}).items()) or None
                by_topic.setdefault(topic, []).append(
                    (
                        message.source_offset,
                        message.message_key,
                        message.message_value,
                        headers,
                        message.source_partition,
                    )
                )
                partitions[topic] = max(partitions.get(topic, 0), message.source_partition + 1)
        records = sum(len(v) for v in by_topic.values())
        with KafkaBroker(work / "servers") as broker:
            started = time.perf_counter()
            for topic, rows in by_topic.items():
                broker.create_topic(topic, partitions=partitions[topic])
                rows.sort(key=lambda row: (row[4], row[0]))
                broker.produce(topic, [row[1:] for row in rows])
            produced = time.perf_counter() - started
            print(
                f"produced {records} record(s) to {len(by_topic)} topic(s) in {produced:.1f}s",
                file=sys.stderr,
            )
            spark_start, _ = timed(
                [str(PYTHON), "benchmarks/bare_parse.py", "--noop"], work / "lakehouse-noop"
            )
            kcat, _ = timed(
                [
                    str(PYTHON),
                    "-m",
                    "python_ingest",
                    "land",
                    "--format",
                    "debezium",
                    "--container",
                    "kcat",
                    *map(str, dumps),
                ],
                lake_kcat,
            )
            kafka, _ = timed(
                [
                    str(PYTHON), "-m", "python_ingest", "land", "--format", "debezium",
                    "--kafka", broker.bootstrap, "--topic-pattern", ".*",
                ],
                lake_kafka,
            )  # fmt: skip
            parse, _ = timed([str(PYTHON), "benchmarks/bare_parse.py"], lake_kafka)
    finally:
        for lakehouse in (work / "lakehouse-noop", lake_kcat, lake_kafka):
            stop_services(lakehouse)
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    def rate(seconds: float) -> str:
        return f"{records / seconds:,.0f} | {records / max(seconds - spark_start, 0.001):,.0f}"

    print(
        f"Debezium traffic: {records:,} records in {len(by_topic)} topics; Spark start-up {spark_start:.1f} s"
    )
    print()
    print("| phase | seconds | records/s | records/s without start-up |\n|---|---:|---:|---:|")
    for name, seconds in (("land (kcat dump)", kcat), ("land (kafka)", kafka), ("bare parse", parse)):
        print(f"| {name} | {seconds:.1f} | {rate(seconds)} |")
    print(
        f"\nkafka ÷ kcat (records/s): {kcat / kafka:.2f}; kafka ÷ bare parse: {parse / kafka:.2f}; "
        f"without start-up: {(kcat - spark_start) / (kafka - spark_start):.2f} and "
        f"{(parse - spark_start) / (kafka - spark_start):.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
