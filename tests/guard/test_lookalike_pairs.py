"""Two look-alike names new in the same later listing: the second is a change of the first,
never a second trusted tool (a hostile review found both callable)."""

from __future__ import annotations

from typing import Any

import pytest

from conduit_mcp.guard import Guard
from conduit_mcp.guard._engine import Engine

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": "Move money.", "inputSchema": {"type": "object"}}


async def _listing(engine: Engine, request_id: int, names: list[str]) -> None:
    await engine.outbound({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    page = {"tools": [_tool(name) for name in names]}
    await engine.inbound({"jsonrpc": "2.0", "id": request_id, "result": page})


async def test_a_lookalike_pair_in_a_later_listing_is_one_tool_and_a_change() -> None:
    """conduit-defined: `transfer_funds` and `transfer_fundѕ` (U+0455, Cyrillic dze) appear
    together after a first listing: the first is new, the second a `lookalike_name` change of
    it (blocked by default). In a server's first listing (no baseline) both are new."""
    guard = Guard("s")
    engine = Engine(guard._shared, "stdio")
    engine.version = VERSION
    await _listing(engine, 1, ["echo"])
    await _listing(engine, 2, ["echo", "transfer_funds", "transfer_fund\u0455"])
    assert guard.tool_status("transfer_funds") == "ok"
    assert guard.tool_status("transfer_fund\u0455") == "blocked"
    (event,) = [e for e in guard.events if e.reason == "lookalike_name"]
    assert (event.tool, event.details["lookalike_of"]) == ("transfer_fund\u0455", "transfer_funds")

    first = Guard("t")
    fresh = Engine(first._shared, "stdio")
    fresh.version = VERSION
    await _listing(fresh, 1, ["transfer_funds", "transfer_fund\u0455"])
    assert [e.reason for e in first.events if e.kind == "tool_changed"] == []
