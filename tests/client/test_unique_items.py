"""`uniqueItems` through `validate_structured` (on jsonschema-rs since issue 13).

JSON Schema equality (validation spec 4.2.2): numbers by value, booleans not numbers, objects
regardless of member order; jsonschema's `uniq` is the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema._utils import uniq  # type: ignore[import-untyped]

from conduit_mcp.client import Tool, ToolResult, validate_structured
from tests.property.profiles import bounded

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)
TOOL = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": {"uniqueItems": True}})


def unique(items: list[Any]) -> bool:
    result = ToolResult.from_wire({"content": [], "structuredContent": items})
    return validate_structured(result, TOOL, protocol_version="2026-07-28").valid


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
def test_unique_items_agrees_with_jsonschema_on_the_equality_corners(items: list[Any]) -> None:
    """Spec-mandated (JSON Schema 2020-12 validation 4.2.2 and 6.4.3; oracle `uniq`)."""
    assert unique(items) is bool(uniq(items))


@bounded(200)
@given(st.lists(JSON, max_size=6))
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    """Property: the engine's verdict equals jsonschema's."""
    assert unique(items) is bool(uniq(items))


def test_unique_items_over_thousands_of_objects_is_answered() -> None:
    """conduit-defined (found by a hostile-input review: 2,000 objects took 10 s in
    jsonschema's quadratic check). Not timed (speed belongs to bench/)."""
    items = [{"a": i} for i in range(20_000)]
    assert unique(items) is True
    assert unique([*items, {"a": 0}]) is False
