"""The seeded mutator of the hostile-input test (tests/helpers/mutants.py), without Spark."""

from __future__ import annotations

import json
import random

import pytest

from tests.helpers.mutants import Dup, Mutator, Raw, dumps, paths, replace_at

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
