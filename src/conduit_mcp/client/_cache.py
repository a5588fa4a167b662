"""`BoundedCache`: the one least-recently-used cache every memo of this package is built on.

Not a public module. Bounded by entries and, optionally, by a total weight (e.g. bytes held), so
memory grows with neither a session's history nor the size of one hostile input. Thread-safe: a
lock guards every change; `peek` reads without it (a dict read is atomic in CPython).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from ._jsonrules import MISSING

__all__ = ["MISSING", "BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A least-recently-used map with at most `max_entries` entries and `max_weight` in total.

    Args:
        max_entries: the most entries kept (>= 1); the least recently used go first.
        max_weight: the most total weight kept, or `None` for no weight bound. An entry heavier
            than this on its own is not kept at all.
        weigh: the weight of an entry (e.g. `lambda key, value: len(key[-1])` for bytes held);
            required with `max_weight`.

    Raises:
        ValueError: `max_entries` < 1, or `max_weight` without `weigh` (caller bugs).
    """

    __slots__ = ("_data", "_lock", "_weigh", "_weight", "max_entries", "max_weight")

    def __init__(
        self,
        max_entries: int,
        *,
        max_weight: int | None = None,
        weigh: Callable[[K, V], int] | None = None,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        if max_weight is not None and weigh is None:
            raise ValueError("max_weight needs weigh")
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._weigh = weigh
        self._weight = 0
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: Any = MISSING) -> Any:
        """The value cached for `key` (now the most recently used), else `default` (by default
        `MISSING`, the package's one absent-value sentinel: never a cached value)."""
        with self._lock:
            value = self._data.get(key, MISSING)
            if value is MISSING:
                return default
            self._data.move_to_end(key)
            return value

    def peek(self, key: K, default: Any = MISSING) -> Any:
        """The value cached for `key` without marking it used (no lock), else `default`."""
        return self._data.get(key, default)

    def put(self, key: K, value: V) -> None:
        """Cache `value` under `key` (replacing any), then evict down to the bounds."""
        if self._weigh is None:  # entries only: the common case, one lock, no weights
            with self._lock:
                data = self._data
                data[key] = value
                data.move_to_end(key)
                if len(data) > self.max_entries:
                    data.popitem(last=False)
            return
        weigh = self._weigh
        weight = weigh(key, value)
        max_weight = self.max_weight
        if max_weight is not None and weight > max_weight:
            return
        max_entries = self.max_entries
        with self._lock:
            data = self._data
            old = data.pop(key, MISSING)
            total = self._weight + weight
            if old is not MISSING:
                total -= weigh(key, old)
            data[key] = value
            while len(data) > max_entries or (max_weight is not None and total > max_weight):
                gone_key, gone = data.popitem(last=False)
                total -= weigh(gone_key, gone)
            self._weight = total

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data
