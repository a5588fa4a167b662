"""copy_json: the deep copy behind every `copy=True`."""

from __future__ import annotations

import pytest

from conduit_mcp.client import Tool, ToolResult, parse_call_result
from conduit_mcp.client._jsoncopy import copy_json


def nested(depth: int) -> list[object]:
    root: list[object] = []
    node = root
    for _ in range(depth):
        child: list[object] = []
        node.append(child)
        node = child
    return root


def test_copy_json_copies_every_container_and_shares_immutables() -> None:
    """conduit-defined."""
    value = {"a": [1, {"b": 2.5, "c": None}], "d": "x", "e": 2**70}
    copied = copy_json(value)
    assert copied == value
    assert copied is not value and copied["a"] is not value["a"]
    assert copied["a"][1] is not value["a"][1]
    assert copied["e"] == 2**70


def test_copy_json_keeps_cycles_and_sharing() -> None:
    """conduit-defined: what copy.deepcopy keeps, this keeps."""
    loop: list[object] = []
    loop.append(loop)
    again = copy_json(loop)
    assert again[0] is again
    shared = {"k": 1}
    pair = copy_json([shared, shared])
    assert pair[0] is pair[1] and pair[0] is not shared


@pytest.mark.parametrize(
    "build",
    [
        lambda deep: Tool.from_wire(
            "s", {"name": "a", "inputSchema": {"default": deep}}, copy=True
        ),
        lambda deep: ToolResult.from_wire({"content": [deep]}, copy=True),
        lambda deep: parse_call_result(
            {"content": [deep], "resultType": "complete"}, protocol_version="2026-07-28", copy=True
        ),
    ],
    ids=["tool", "result", "parse_call_result"],
)
def test_copy_true_works_at_any_depth(build) -> None:  # type: ignore[no-untyped-def]
    """conduit-defined (found by a hostile-input review: copy.deepcopy raised RecursionError
    at about 500 levels, which parse_json accepts)."""
    build(nested(20_000))
