"""uniqueItems in linear time, agreeing with jsonschema's own equality."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema._utils import uniq  # type: ignore[import-untyped]

from conduit_mcp.client import Tool, ToolResult, validate_structured
from conduit_mcp.client._fastcheck import all_unique
from tests.property.profiles import bounded

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.parametrize(
    "items",
    [
        [1, 1.0],
        [True, 1],
        [0, False],
        [2**60, 2.0**60],
        [2**60 + 1, 2.0**60],
        [{"a": 1}, {"a": 1.0}],
        [{"a": [True]}, {"a": [1]}],
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        ["1", 1],
        [[], {}],
        [None, None],
    ],
    ids=repr,
)
def test_all_unique_agrees_with_jsonschema_on_the_equality_corners(items: list[Any]) -> None:
    """JSON Schema equality (validation spec 4.2.2): numbers by value, booleans not numbers,
    objects regardless of member order; jsonschema's `uniq` is the oracle."""
    assert all_unique(items) is bool(uniq(items))


@bounded(200)
@given(st.lists(JSON, max_size=6))
def test_all_unique_agrees_with_jsonschema(items: list[Any]) -> None:
    """Property: the linear check equals jsonschema's quadratic one."""
    assert all_unique(items) is bool(uniq(items))


def test_unique_items_over_thousands_of_objects_is_linear() -> None:
    """conduit-defined (found by a hostile-input review: 2,000 objects took 10 s)."""
    tool = Tool.from_wire(
        "s", {"name": "t", "inputSchema": {}, "outputSchema": {"uniqueItems": True}}
    )
    items = [{"a": i} for i in range(20_000)]
    ok = validate_structured(
        ToolResult.from_wire({"structuredContent": items}), tool, protocol_version="2026-07-28"
    )
    bad = validate_structured(
        ToolResult.from_wire({"structuredContent": [*items, {"a": 0}]}),
        tool,
        protocol_version="2026-07-28",
    )
    # Not timed (speed belongs to bench/): a quadratic check would take minutes here, linear
    # took ~0.3 s.
    assert (ok.outcome, bad.outcome) == ("valid", "invalid")
