"""`BoundedCache`, the one cache helper: bounds, eviction order, the one sentinel."""

from __future__ import annotations

import pytest

from conduit_mcp.client import _cache, _jsonrules
from conduit_mcp.client._cache import BoundedCache


def test_least_recently_used_entries_leave_first() -> None:
    """conduit-defined: `get` renews an entry, `peek` does not; the bound holds."""
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # renewed: "b" is now the oldest
    cache.put("c", 3)
    assert "b" not in cache and cache.peek("a") == 1 and len(cache) == 2
    assert cache.peek("a") == 1  # a peek does not renew "a": it is still the oldest
    cache.put("d", 4)
    assert "a" not in cache and "c" in cache and "d" in cache


def test_the_weight_bound_holds_and_an_oversized_entry_is_never_kept() -> None:
    """conduit-defined: total weight never exceeds `max_weight`."""
    cache: BoundedCache[bytes, None] = BoundedCache(
        100, max_weight=10, weigh=lambda key, _: len(key)
    )
    cache.put(b"12345", None)
    cache.put(b"123456", None)  # 11 > 10: the oldest leaves
    assert b"12345" not in cache and b"123456" in cache
    cache.put(b"x" * 11, None)
    assert b"x" * 11 not in cache and len(cache) == 1
    cache.put(b"123456", None)  # replacing an entry does not count it twice
    cache.put(b"abcd", None)
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0
    cache.put(b"0123456789", None)
    assert len(cache) == 1


def test_absent_keys_give_the_one_missing_sentinel() -> None:
    """conduit-defined: one `MISSING` in the package; `None` can be a cached value."""
    assert _cache.MISSING is _jsonrules.MISSING
    cache: BoundedCache[str, None] = BoundedCache(1)
    cache.put("k", None)
    assert cache.get("k") is None and cache.get("other") is _jsonrules.MISSING
    assert cache.peek("other", 7) == 7


def test_bad_bounds_are_caller_bugs() -> None:
    """conduit-defined."""
    with pytest.raises(ValueError):
        BoundedCache(0)
    with pytest.raises(ValueError):
        BoundedCache(1, max_weight=5)
