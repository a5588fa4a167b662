"""Independent oracles the property tests compare the library against."""

from __future__ import annotations

import math
from typing import Any

_MAX_SAFE = 2**53 - 1


def same(left: Any, right: Any) -> bool:
    """Exact equality of parsed JSON: same types (int is not float, bool is not int), floats
    by value and sign (`-0.0` is not `0.0`), containers member by member in order. Iterative."""
    stack = [(left, right)]
    while stack:
        one, two = stack.pop()
        if type(one) is not type(two):
            return False
        if isinstance(one, float):
            if not (one == two and math.copysign(1, one) == math.copysign(1, two)):
                if not (math.isnan(one) and math.isnan(two)):
                    return False
        elif isinstance(one, dict):
            if list(one) != list(two):
                return False
            stack.extend((one[k], two[k]) for k in one)
        elif isinstance(one, list):
            if len(one) != len(two):
                return False
            stack.extend(zip(one, two, strict=True))
        elif one != two:
            return False
    return True


def json_equal(left: Any, right: Any) -> bool:
    """Equality in the JSON data model that RFC 8785 canonicalizes: member order does not
    matter; `true` is not `1`; numbers are IEEE 754 doubles (`1 == 1.0`, `-0.0 == 0`), except
    integers outside +-(2**53-1), which no double represents exactly and which only equal the
    same integer (conduit-mcp's documented form for them). Iterative."""
    stack = [(left, right)]
    while stack:
        one, two = stack.pop()
        if isinstance(one, bool) or isinstance(two, bool):
            if one is not two:
                return False
        elif _is_number(one) and _is_number(two):
            if _big(one) or _big(two):
                if not (type(one) is int and type(two) is int and one == two):
                    return False
            elif float(one) != float(two):
                return False
        elif isinstance(one, dict) and isinstance(two, dict):
            if set(one) != set(two):
                return False
            stack.extend((one[k], two[k]) for k in one)
        elif isinstance(one, list) and isinstance(two, list):
            if len(one) != len(two):
                return False
            stack.extend(zip(one, two, strict=True))
        elif type(one) is not type(two) or one != two:
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _big(value: Any) -> bool:
    return type(value) is int and abs(value) > _MAX_SAFE


def reordered(value: Any) -> Any:
    """A deep copy of `value` with every object's members in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def is_json_text_value(value: Any) -> bool:
    """Whether a JSON parser could have produced `value`: no NaN/infinity, no lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, str) and not _encodes(item):
            return False
        if isinstance(item, dict):
            if not all(_encodes(k) for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
