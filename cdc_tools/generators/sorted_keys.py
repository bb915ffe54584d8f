"""A dict that keeps its keys sorted, so a generator can pick a random live key in O(log n).

The generators pick with `rng.choice(sorted(live))`; sorting every live key for every change
made them quadratic (a million messages took hours). `SortedKeyDict.sorted_keys()` is that same
list, kept up to date with `bisect`, so `rng.choice(live.sorted_keys())` draws the same key from
the same random state: the generated files do not change.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any


class SortedKeyDict(dict):
    """A dict whose `sorted_keys()` is `sorted(self)`, maintained on every change."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[Any] = []

    def __setitem__(self, key: Any, value: Any) -> None:
        if key not in self:
            bisect.insort(self._keys, key)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        del self._keys[bisect.bisect_left(self._keys, key)]

    _MISSING = object()

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        if key in self:
            value = super().pop(key)
            del self._keys[bisect.bisect_left(self._keys, key)]
            return value
        if default is SortedKeyDict._MISSING:
            raise KeyError(key)
        return default

    def clear(self) -> None:
        super().clear()
        self._keys.clear()

    def sorted_keys(self) -> list[Any]:
        """`sorted(self)`, without sorting (do not modify the list)."""
        return self._keys

    def sorted_keys_except(self, excluded: Iterable[Any]) -> Sequence[Any]:
        """`sorted(set(self) - set(excluded))` as a read-only sequence, without copying."""
        positions = sorted(bisect.bisect_left(self._keys, k) for k in set(excluded) if k in self)
        return _Without(self._keys, positions) if positions else self._keys

    def update(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - not used by the generators
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: Any, default: Any = None) -> Any:  # pragma: no cover
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[Any, Any]:  # pragma: no cover
        raise NotImplementedError


class _Without(Sequence):
    """A sorted list without the items at some positions (ascending), indexed like the filtered list."""

    def __init__(self, items: list[Any], positions: list[int]) -> None:
        self.items, self.positions = items, positions

    def __len__(self) -> int:
        return len(self.items) - len(self.positions)

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        for position in self.positions:
            if position <= index:
                index += 1
            else:
                break
        return self.items[index]
