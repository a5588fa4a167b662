"""A deep copy of a JSON value that works at any depth (for the `copy=True` options)."""

from __future__ import annotations

import copy
from typing import Any, TypeVar, cast

T = TypeVar("T")


def copy_json(value: T) -> T:
    """Deep-copy a JSON value without recursion.

    `dict` and `list` objects (exactly those types, as a JSON parser returns them) are copied
    with an explicit stack, so nesting of any depth works where `copy.deepcopy` would raise
    `RecursionError` at about 500 levels. Strings, numbers, booleans and `None` are immutable
    and shared. Anything else (subclasses included) is copied with `copy.deepcopy`. Shared
    and self-containing containers stay shared and self-containing in the copy.

    Args:
        value: a JSON value as parsed. Not mutated.

    Returns:
        The copy.

    Total: time and memory linear in the number of containers; no recursion for dicts/lists.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return value if kind in (str, int, float, bool, type(None)) else copy.deepcopy(value)
    memo: dict[int, Any] = {}
    root: Any = {} if kind is dict else []
    memo[id(value)] = root
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if type(source) is dict else enumerate(source)
        for key, item in items:
            item_kind = type(item)
            if item_kind is dict or item_kind is list:
                seen = memo.get(id(item))
                if seen is None:
                    seen = memo[id(item)] = {} if item_kind is dict else []
                    stack.append((item, seen))
                copied = seen
            elif item_kind in (str, int, float, bool, type(None)):
                copied = item
            else:
                copied = copy.deepcopy(item)
            if type(target) is dict:
                target[key] = copied
            else:
                target.append(copied)
    return cast(T, root)
