"""copy_json: the deep copy behind every `copy=True`."""

from __future__ import annotations

from typing import Any

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


def equal_and_unshared(copied: Any, original: Any) -> None:
    """Assert `copied == original` with an explicit stack (`==` on 20,000 nested lists raises
    RecursionError in C), and that no container of the copy is a container of the original."""
    stack = [(copied, original)]
    containers = 0
    while stack:
        a, b = stack.pop()
        assert type(a) is type(b)
        if isinstance(b, dict):
            assert a is not b and a.keys() == b.keys()
            stack.extend((a[k], b[k]) for k in b)
            containers += 1
        elif isinstance(b, list):
            assert a is not b and len(a) == len(b)
            stack.extend(zip(a, b, strict=True))
            containers += 1
        else:
            assert a == b
    assert containers > 0


def test_equal_and_unshared_notices_sharing_and_differences() -> None:
    """The helper above can fail: a shared inner list, a changed leaf."""
    inner: list[object] = [1]
    with pytest.raises(AssertionError):
        equal_and_unshared([inner], [inner])
    with pytest.raises(AssertionError):
        equal_and_unshared([[2]], [[1]])
    equal_and_unshared([[1]], [inner])


@pytest.mark.parametrize(
    ("build", "copied"),
    [
        pytest.param(
            lambda deep: Tool.from_wire(
                "s", {"name": "a", "inputSchema": {"default": deep}}, copy=True
            ),
            lambda built: built.raw["inputSchema"]["default"],
            id="tool",
        ),
        pytest.param(
            lambda deep: ToolResult.from_wire({"content": [deep]}, copy=True),
            lambda built: built.raw["content"][0],
            id="result",
        ),
        pytest.param(
            lambda deep: parse_call_result(
                {"content": [deep], "resultType": "complete"},
                protocol_version="2026-07-28",
                copy=True,
            ),
            lambda built: built.raw["content"][0],
            id="parse_call_result",
        ),
    ],
)
def test_copy_true_works_at_any_depth(build, copied) -> None:  # type: ignore[no-untyped-def]
    """conduit-defined (found by a hostile-input review: copy.deepcopy raised RecursionError
    at about 500 levels, which parse_json accepts): the copy is equal to the input at every
    level and shares none of its containers."""
    deep = nested(20_000)
    equal_and_unshared(copied(build(deep)), deep)
