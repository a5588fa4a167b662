"""The guard's private store is bounded: at most `max_tools` tool names a server (issue 30,
item 7). conduit-defined: past the limit a tool whose name the store never saw is held (not
listed to the model, its calls refused as `tool_held`, event `tool_new` / `too_many_tools`),
never written to the store; a name seen before keeps working; `Guard.approve` releases a held
one. Real parts: mcp's `ClientSession` on the guard's wrapped streams (tests/guard/scripted.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import GUARD_REASONS, Guard
from conduit_mcp.pins import PinStore

from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio

PAGE: list[list[str]] = [["a", "b", "c", "d", "e"]]


def _handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "tools/list":
        return {"tools": [tool(name, description=f"tool {name}") for name in PAGE[0]]}
    return text("ran " + str(params.get("name")))


async def test_past_max_tools_new_names_are_held_and_never_stored() -> None:
    guard = Guard("s", max_tools=3)
    PAGE[0] = ["a", "b", "c", "d", "e"]
    async with scripted_session(guard, _handler) as (session, script):
        first = await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("d", {})
        PAGE[0] = ["a", "f", "g"]  # a known name and two fresh ones
        second = await session.list_tools()
        called = await session.call_tool("a", {})
    assert [t.name for t in first.tools] == ["a", "b", "c"]
    assert refused.value.error.data["reason"] == "tool_held"
    assert "max_tools" in refused.value.error.message
    assert [t.name for t in second.tools] == ["a"]
    assert called.content[0].text == "ran a"  # type: ignore[union-attr]
    assert script.calls() == [("a", {})]
    held = [(e.tool, e.decision) for e in guard.events if e.reason == "too_many_tools"]
    assert held == [("d", "held"), ("e", "held"), ("f", "held"), ("g", "held")]
    assert "too_many_tools" in GUARD_REASONS
    assert sorted(guard.pins.pinned("s")) == ["a", "b", "c"]  # the store holds three names
    assert guard.awaiting_approval() == {"f": "limit", "g": "limit"}


async def test_a_person_can_still_approve_a_tool_held_past_the_limit() -> None:
    guard = Guard("s", max_tools=1)
    PAGE[0] = ["a", "b"]
    async with scripted_session(guard, _handler) as (session, _):
        before = await session.list_tools()
        assert guard.approve("b", approver="alice@example.com")
        after = await session.list_tools()
        called = await session.call_tool("b", {})
    assert [t.name for t in before.tools] == ["a"]
    assert [t.name for t in after.tools] == ["a", "b"]
    assert called.content[0].text == "ran b"  # type: ignore[union-attr]


async def test_a_callers_store_is_not_bounded_by_max_tools() -> None:
    """The operator's store is theirs to bound: with `pins=`, `max_tools` holds nothing."""
    PAGE[0] = ["a", "b", "c"]
    with PinStore(":memory:") as store:
        guard = Guard("s", pins=store, new="pin", max_tools=1)
        async with scripted_session(guard, _handler) as (session, _):
            listed = await session.list_tools()
    assert [t.name for t in listed.tools] == ["a", "b", "c"]
    assert not [e for e in guard.events if e.reason == "too_many_tools"]


def test_max_tools_is_checked() -> None:
    with pytest.raises(ValueError):
        Guard("s", max_tools=0)
    with pytest.raises(TypeError):
        Guard("s", max_tools=True)
    assert Guard("s").policy.max_tools == 10_000
