"""Seeded mutants of valid CDC messages: what a broken or hostile producer could send.

A :class:`Mutator` takes one valid message (its JSON text) and returns a mutant and the
name of the operator that made it. Operators work on the parsed message, including the
JSON documents that travel as strings inside it (CES `data` and its row images, a
Debezium key), or on the text itself:

- ``replace``: a value swapped for one of another type or an odd one (null, "", huge or
  negative numbers, `1e400`, nested objects), preferring the fields a parser relies on
  (positions, masks, ordinals, scales, names, timestamps);
- ``delete``: a key or array element removed;
- ``duplicate_key``: an object that names a key twice;
- ``deep``: a value wrapped in hundreds or thousands of arrays / objects;
- ``huge``: a string or number made huge (hex digits for masks), a huge key;
- ``array``: an array of objects with an element repeated, a name nulled, or grown long;
- ``surrogate``: a lone UTF-16 surrogate escape in a string;
- ``truncate``, ``not_utf8``, ``garbage``: the text cut short, bytes that are not UTF-8,
  or something that is not a message at all.

Operators prefer the fields the producer's models parse, and make its mask fields huge
hex: its generator module's `PARSED_FIELDS` and `MASK_FIELDS` (cdc_tools/generators/__init__.py).

Deterministic for a seed: the same inputs give the same mutants.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from cdc_tools.generators import traffic_module

ODD_VALUES: list[Any] = [
    None, "", " ", "abc", "-1", "0", "9" * 40, str(2**31 - 1), str(2**63), "1e400", "0x", "G1", "1.5",
    "-0", "99999-12-31 23:59:59", "0000-00-00", "\u0000", "%s%n'\"; --", -1, 0, 2**31 - 1, 2**31, 2**63,
    -(2**63), 10**30, 1.5, -0.0, True, False, [], {}, [1, "a"], {"nested": "loop"}, [None],
]  # fmt: skip
ODD_NUMBERS = ["1e400", "-1e400", "1E-400", "-0", "123456789012345678901234567890", "0.000000000000000000001"]
GARBAGE = [b"", b" ", b"null", b"[]", b"{}", b"123", b'"text"', b"true", b"\x00\x01\x02", b"{{{{", b"}"]


class Raw:
    """JSON text written as it is (numbers JSON allows but Python cannot hold, deep nesting)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Dup:
    """A JSON object written with its pairs as given, keys repeated."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def dumps(value: Any) -> str:
    """JSON text of a value tree that may hold :class:`Raw` and :class:`Dup` nodes (ASCII, so a
    lone surrogate is written as its escape)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Dup):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


EMBEDDED = ("embedded",)  # a path step: the string here is a JSON document; go inside it


def _embedded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "[") and len(value) < 5_000_000:
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict | list) else None
    return None


def paths(root: Any) -> list[tuple[tuple, Any]]:
    """Every (path, value) of a value tree, documents embedded as strings included."""
    found: list[tuple[tuple, Any]] = []
    stack: list[tuple[tuple, Any]] = [((), root)]
    while stack:
        path, value = stack.pop()
        found.append((path, value))
        if isinstance(value, dict):
            stack.extend((path + (("key", k),), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (("index", i),), v) for i, v in enumerate(value))
        else:
            inner = _embedded(value)
            if inner is not None:
                stack.append((path + (EMBEDDED,), inner))
    found.reverse()
    return found


def replace_at(root: Any, path: tuple, new: Any, delete: bool = False) -> Any:
    """`root` with the value at `path` replaced by `new` (or removed), embedded documents
    written back as strings."""
    if not path:
        return new
    step, rest = path[0], path[1:]
    if step == EMBEDDED:
        return dumps(replace_at(_embedded(root), rest, new, delete))
    kind, where = step
    if kind == "key":
        copy = dict(root)
        if delete and not rest:
            copy.pop(where, None)
        else:
            copy[where] = replace_at(root[where], rest, new, delete)
        return copy
    copy = list(root)
    if delete and not rest:
        del copy[where]
    else:
        copy[where] = replace_at(root[where], rest, new, delete)
    return copy


def _last_key(path: tuple) -> str | None:
    for step in reversed(path):
        if step != EMBEDDED and step[0] == "key":
            return step[1]
    return None


@dataclass
class Mutator:
    """Mutants of one producer's messages. `huge` is the size of huge values (1 MB: Kafka's
    default maximum message size), `deep` the nesting of deep ones."""

    producer: str
    rng: random.Random
    huge: int = 1_000_000
    deep: int = 2_000
    moderate: int = 10_000  # the size of the many huge-ish values; `huge` ones are few and costly
    parsed_fields: frozenset[str] = field(init=False)  # the producer's, from its generator module
    mask_fields: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        module = traffic_module(self.producer)
        if module is None:
            raise ValueError(f"{self.producer} has no generator module (cdc_tools/generators/__init__.py)")
        self.parsed_fields, self.mask_fields = module.PARSED_FIELDS, module.MASK_FIELDS

    OPERATORS = (
        "replace", "replace", "replace", "delete", "duplicate_key", "deep", "huge", "array", "array",
        "surrogate", "number", "truncate", "not_utf8", "garbage",
    )  # fmt: skip

    def mutate(self, text: str, operator: str | None = None) -> tuple[str, bytes]:
        """A mutant of the message `text` (the operator's name and the bytes to land)."""
        operator = operator or self.rng.choice(self.OPERATORS)
        data = text.encode("utf-8")
        if operator == "truncate":
            return operator, data[: self.rng.randrange(0, max(1, len(data)))]
        if operator == "not_utf8":
            at = self.rng.randrange(0, len(data) + 1)
            return operator, data[:at] + b"\xff\xfe\xc3" + data[at:]
        if operator == "garbage":
            return operator, self.rng.choice(GARBAGE)
        try:
            root = json.loads(text)
        except ValueError:
            return "garbage", data[::-1]
        mutated = getattr(self, f"_{operator}")(root)
        return operator, dumps(mutated).encode("utf-8")

    # -- choosing a place ----------------------------------------------------
    def _pick(self, root: Any, want: type | tuple | None = None) -> tuple[tuple, Any]:
        candidates = [(p, v) for p, v in paths(root) if p and (want is None or isinstance(v, want))]
        if not candidates:
            return (), root
        interesting = [(p, v) for p, v in candidates if _last_key(p) in self.parsed_fields]
        if interesting and self.rng.random() < 0.7:
            return self.rng.choice(interesting)
        return self.rng.choice(candidates)

    def _odd_value(self, key: str | None) -> Any:
        if key in self.mask_fields and self.rng.random() < 0.5:
            digits = self.rng.choice([self.moderate, 64, 300])
            return self.rng.choice(["F" * digits, "1" + "0" * digits, "G" * 3, "0" * digits])
        return self.rng.choice(ODD_VALUES)

    # -- operators on the parsed message ---------------------------------------
    def _replace(self, root: Any) -> Any:
        path, _ = self._pick(root)
        return replace_at(root, path, self._odd_value(_last_key(path)))

    def _delete(self, root: Any) -> Any:
        path, _ = self._pick(root)
        return replace_at(root, path, None, delete=True) if path else {}

    def _duplicate_key(self, root: Any) -> Any:
        path, value = self._pick(root, dict)
        if not isinstance(value, dict) or not value:
            return Dup([("op", "c"), ("op", "d")])
        pairs = list(value.items())
        key, original = self.rng.choice(pairs)
        pairs.append((key, self._odd_value(key) if self.rng.random() < 0.5 else original))
        return replace_at(root, path, Dup(pairs))

    def _deep(self, root: Any) -> Any:
        path, value = self._pick(root)
        depth = self.rng.choice([100, 999, 1001, self.deep])
        if self.rng.random() < 0.5:
            nested = Raw("[" * depth + dumps(value) + "]" * depth)
        else:
            nested = Raw('{"a":' * depth + dumps(value) + "}" * depth)
        return replace_at(root, path, nested)

    def _huge(self, root: Any, size: int | None = None) -> Any:
        size = size or self.moderate
        path, value = self._pick(root, (str, int, float, dict))
        key = _last_key(path)
        if isinstance(value, dict) and value:
            name = self.rng.choice(list(value))  # a huge key
            return replace_at(root, path, {**value, "k" * size: value[name]})
        if isinstance(value, int | float) and not isinstance(value, bool):
            return replace_at(root, path, Raw("9" * size))
        if key in self.mask_fields:
            return replace_at(root, path, "F" * size)
        return replace_at(root, path, self.rng.choice(["x", "é", "0"]) * size)

    def _array(self, root: Any) -> Any:
        path, value = self._pick(root, list)
        if not isinstance(value, list) or not value:
            return replace_at(root, path, [None] * 3)
        choice = self.rng.random()
        if choice < 0.35:
            return replace_at(root, path, value + [self.rng.choice(value)])  # an element twice
        if choice < 0.7 and isinstance(value[0], dict):
            first = dict(value[0])
            for key in first:
                if isinstance(first[key], str):
                    first[key] = None  # e.g. a column without a name
                    break
            return replace_at(root, path, [first, *value[1:]])
        return replace_at(root, path, value * max(1, self.moderate // max(1, len(dumps(value)))))

    def _surrogate(self, root: Any) -> Any:
        path, value = self._pick(root, str)
        return replace_at(root, path, (value if isinstance(value, str) else "") + "\ud800")

    def _number(self, root: Any) -> Any:
        path, _ = self._pick(root, (int, float, str))
        return replace_at(root, path, Raw(self.rng.choice(ODD_NUMBERS)))

    # -- the few costly ones every run carries ---------------------------------
    def specials(self, text: str) -> list[tuple[str, bytes]]:
        """Mutants every run includes: the largest and deepest (1 MB values and masks,
        2,000-deep nesting, a huge key), derived from one valid message."""
        root = json.loads(text)
        deep = Raw("[" * self.deep + "]" * self.deep)
        found = [
            ("huge_value", dumps(self._huge(root, self.huge))),
            ("huge_key", dumps(self._huge_key(root))),
            ("deep_message", "[" * self.deep + text + "]" * self.deep),
            ("deep_value", dumps(replace_at(root, self._pick(root)[0], deep))),
        ]
        places = self._mask_places(root)
        for mask in sorted(self.mask_fields):
            place = next((p for p, _ in places if _last_key(p) == mask), None)
            if place is not None:
                found.append((f"huge_{mask}", dumps(replace_at(root, place, "F" * self.huge))))
        return [(name, value.encode("utf-8")) for name, value in found]

    def has_mask(self, text: str) -> bool:
        """Whether the message carries a mask that is not empty (its specials make it huge)."""
        try:
            root = json.loads(text)
        except ValueError:
            return False
        return any(value for _, value in self._mask_places(root))

    def _mask_places(self, root: Any) -> list[tuple[tuple, Any]]:
        return [(p, v) for p, v in paths(root) if _last_key(p) in self.mask_fields and p[-1] != EMBEDDED]

    def _huge_key(self, root: Any) -> Any:
        objects = [(p, v) for p, v in paths(root) if isinstance(v, dict) and v]
        path, value = self.rng.choice(objects) if objects else ((), {})
        return replace_at(root, path, {**value, "k" * self.huge: "v"})
