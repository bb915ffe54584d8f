"""The seeded mutator of the hostile-input test (tests/helpers/mutants.py), and what each
producer's generator module gives that test (cdc_tools/generators/__init__.py), without Spark."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from cdc_tools.generators import generated_producers, traffic_module
from tests.helpers.hostile_run import SOURCE, fresh_identity, generate, valid_messages
from tests.helpers.mutants import Dup, Mutator, Raw, dumps, paths, replace_at

ROOT = Path(__file__).resolve().parents[2]
SEEDS = "seeds/cdc_declared_columns.csv"

QLIK = json.dumps(
    {
        "magic": "atMSG",
        "type": "DT",
        "message": {
            "data": {"ID": "1", "NAME": "a"},
            "headers": {"operation": "UPDATE", "changeSequence": "1" * 35, "changeMask": "02"},
        },
    }
)
CES = json.dumps({"type": "x", "id": "1", "data": json.dumps({"eventsource": {"cols": [{"name": "id"}]}})})


def test_the_same_seed_gives_the_same_mutants() -> None:
    def run(seed: int) -> list[tuple[str, bytes]]:
        mutator = Mutator("qlik", random.Random(seed), huge=1_000, deep=50, moderate=100)
        return [mutator.mutate(QLIK) for _ in range(50)]

    assert run(3) == run(3) and run(3) != run(4)


@pytest.mark.parametrize("operator", sorted(set(Mutator.OPERATORS)))
def test_every_operator_changes_the_message(operator: str) -> None:
    mutator = Mutator("ces", random.Random(1), huge=1_000, deep=50, moderate=100)
    name, data = mutator.mutate(CES, operator)
    assert name == operator and data != CES.encode()


def test_paths_reach_json_sent_as_a_string_and_replace_writes_it_back() -> None:
    found = [p for p, _ in paths(json.loads(CES))]
    inner = next(p for p in found if p and p[-1] == ("key", "name"))
    assert ("embedded",) in inner  # inside the `data` string
    mutated = json.loads(dumps(replace_at(json.loads(CES), inner, None)))
    assert json.loads(mutated["data"])["eventsource"]["cols"][0]["name"] is None


def test_raw_and_repeated_keys_are_written_as_given() -> None:
    assert dumps({"n": Raw("1e400"), "o": Dup([("a", 1), ("a", 2)])}) == '{"n":1e400,"o":{"a":1,"a":2}}'
    assert dumps("\ud800") == '"\\ud800"'  # a lone surrogate as its escape


def test_specials_are_the_largest_and_deepest() -> None:
    mutator = Mutator("qlik", random.Random(1), huge=100_000, deep=2_000)
    specials = dict(mutator.specials(QLIK))
    assert set(specials) >= {"huge_value", "huge_key", "deep_message", "deep_value", "huge_changeMask"}
    assert b'"changeMask":"' + b"F" * 100_000 + b'"' in specials["huge_changeMask"]
    assert specials["deep_message"].startswith(b"[" * 2_000)


# -- what each producer's generator module gives the hostile-input run -------------------------
def _table_ids(producer: str, namespace: str, keep_declared: bool = False) -> set[str]:
    traffic = traffic_module(producer).generate_named(12, 1, 2, namespace, keep_declared=keep_declared)
    return set(traffic.expected_current)


@pytest.mark.parametrize("producer", generated_producers())
def test_named_traffic_carries_its_namespace_and_shares_no_table(producer: str) -> None:
    declared = {row["table_id"] for row in csv.DictReader((ROOT / SEEDS).open(encoding="utf-8"))}
    clean, hostile = _table_ids(producer, "clean"), _table_ids(producer, "hostile", keep_declared=True)
    assert clean and all("clean" in t.lower() for t in clean), clean
    assert all("hostile" in t.lower() or t in declared for t in hostile), hostile
    assert not clean & hostile


@pytest.mark.parametrize("producer", generated_producers())
def test_fresh_identity_makes_messages_new_ones(producer: str, tmp_path: Path) -> None:
    generate(producer, SOURCE, tmp_path, 12)
    texts = [v for _, v in valid_messages(producer, tmp_path) if v is not None]
    renewed = [t for t in texts if fresh_identity(producer, t, 1) != json.dumps(json.loads(t))]
    assert renewed, "fresh_identity reaches no message: is message_body right?"
    assert all(fresh_identity(producer, t, 1) != fresh_identity(producer, t, 2) for t in renewed)
