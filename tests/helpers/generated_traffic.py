"""Every producer's generated traffic on the test process's lakehouse, as the files
tests/e2e/test_<producer>_generated.py check it: each producer's messages land in two runs
(the second with what arrives late: a last partition, re-dumped records, malformed messages),
and one `dbt build` follows each run, for every producer at once, and for the pipeline
scenarios too (tests/helpers/pipeline_scenarios.py, of which this is one). Two builds instead
of one pair per producer; tests/conftest.py (`SHARED_WORK`) runs those files in one test
process, where the session fixture `shared_runs` does this once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_tools.generators import (
    ces_traffic,
    dataworks_traffic,
    debezium_traffic,
    generated_producers,
    qlik_traffic,
    traffic_module,
)
from tests.helpers.pipeline_scenarios import Land, Scenario
from tests.helpers.tables import outcomes

# Debezium messages that must reach quarantine, each beside a fragment of its reason
# (test_debezium_generated.py), landed late in one file, in this order.
DEBEZIUM_BAD_MESSAGES = [
    (
        # REPLICA IDENTITY NOTHING: a delete with no before image, of a table with no declared key
        '{"op":"d","before":null,"after":null,"ts_ms":2,"source":{"connector":"postgresql","name":"x",'
        '"db":"inventory","schema":"public","table":"audit_log","lsn":100,"ts_ms":1}}',
        "neither a before image nor a key",
    ),
    (
        '{"op":"x","before":null,"after":{"a":1},"ts_ms":2,"source":{"connector":"mysql","db":"shop",'
        '"table":"orders","file":"mysql-bin.000009","pos":4,"row":0,"ts_ms":1}}',
        "Unknown Debezium op 'x'",
    ),
    (
        # weight is a declared decimal(10,3): base64 bytes are expected
        '{"op":"c","before":null,"after":{"shipment_id":999,"weight":"12.5 kg"},"ts_ms":2,'
        '"source":{"connector":"postgresql","name":"invpg","db":"inventory","schema":"public",'
        '"table":"shipments","lsn":900000,"ts_ms":1}}',
        "could not be decoded",
    ),
    ("{not json", "not a JSON object"),
]


@dataclass
class Landing:
    """One `land` of each run: its format and container, and the files of the first run and
    of the late one."""

    fmt: str
    container: str
    first: list[Path]
    late: list[Path]


@dataclass
class GeneratedTraffic:
    ces: Any  # ces_traffic.Traffic
    dataworks: Any  # dataworks_traffic's generated traffic
    debezium: Any  # debezium_traffic's generated traffic
    debezium_bad: Path  # the file of DEBEZIUM_BAD_MESSAGES, landed late
    qlik: Any  # qlik_traffic's generated traffic
    qlik_pending_after_first_build: int
    # The traffic of every other producer with a generator, by name: `generate_named` in the
    # namespace `gen`; its last message file (as `write` returns them) lands late.
    others: dict[str, Any] = field(default_factory=dict)


def write_all(root: Path) -> tuple[GeneratedTraffic, list[Landing]]:
    """Each producer's traffic under `root/<producer>-generated/`, and how it lands."""
    ces = ces_traffic.generate(changes=150, seed=11, partitions=3, db="gen11", big_every=30)
    assert ces.split_events >= 2 and ces.redeliveries >= 1
    ces_paths = ces.write(root / "ces-generated")

    dataworks = dataworks_traffic.generate(changes=200, seed=5)
    dataworks_first, dataworks_second, dataworks_late = dataworks.write(root / "dataworks-generated")

    debezium = debezium_traffic.generate(changes=250, seed=11, db="gendb")
    out = root / "debezium-generated"
    debezium.write(out)
    kcat = sorted((out / "kcat").glob("*.jsonl"))
    jsonl = sorted((out / "jsonl").rglob("*.json"))
    late = [p for p in kcat if ".redump." in p.name or p.name.startswith("genpg.public.items-0")]
    late += [p for p in jsonl if "partition=2" in str(p)]
    late_jsonl = [p for p in late if p in jsonl]
    bad = out / "bad.jsonl"
    bad.write_text("".join(line + "\n" for line, _ in DEBEZIUM_BAD_MESSAGES))

    qlik = qlik_traffic.generate(changes=250, seed=5)
    *qlik_early, qlik_late = qlik.write(root / "qlik-generated")

    others: dict[str, Any] = {}
    other_landings = []
    for name in generated_producers():
        if name in ("ces", "dataworks", "debezium", "qlik"):
            continue
        module = traffic_module(name)
        others[name] = module.generate_named(200, 5, 3, "gen")
        *early, late_file = others[name].write(root / f"{name}-generated")
        ((container, _),) = module.LANDINGS
        other_landings.append(Landing(name, container, early, [late_file]))

    landings = [
        Landing("ces", "jsonl", ces_paths[:2], ces_paths[2:]),
        Landing("dataworks", "jsonl", [dataworks_first, dataworks_second], [dataworks_late]),
        Landing("debezium", "kcat", [p for p in kcat if p not in late], [p for p in late if p in kcat]),
        Landing("debezium", "jsonl", [p for p in jsonl if p not in late], [*late_jsonl, bad]),
        Landing("qlik", "jsonl", qlik_early, [qlik_late]),
        *other_landings,
    ]
    return GeneratedTraffic(ces, dataworks, debezium, bad, qlik, 0, others), landings


def scenario(spark: Any, root: Path) -> Scenario:
    """Write every producer's traffic under `root`; its first runs to land, then (after the
    build) its late ones (a scenario of tests/helpers/pipeline_scenarios.py)."""
    traffic, landings = write_all(root)
    yield [Land(landing.fmt, landing.container, tuple(landing.first)) for landing in landings]
    # Qlik data whose metadata message arrives late waits, pending, until it does.
    traffic.qlik_pending_after_first_build = outcomes(spark, "qlik", "%qlik-generated%").count("pending")
    yield [Land(landing.fmt, landing.container, tuple(landing.late)) for landing in landings]
    return traffic
