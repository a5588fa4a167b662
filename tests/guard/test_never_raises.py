"""Property: nothing a server sends makes the guard raise into the SDK's receive loop.

conduit-defined contract (issue 9: "never raises into the SDK's receive loop"): for any JSON
value as a `tools/list` or `tools/call` result, at every known version, `Connection.inbound`
returns a `SessionMessage` (the same one, or the guard's replacement) and never raises. Inputs:
real pages and results from the corpus, mutated, and arbitrary JSON.
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse

from conduit_mcp.guard import Guard
from conduit_mcp.guard._engine import Engine
from conduit_mcp.guard._streams import Connection
from tests.property.profiles import bounded
from tests.property.strategies import json_objects, real_or_mutated, real_pages, real_results

VERSIONS = st.sampled_from(["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"])
TRANSPORTS = st.sampled_from(["stdio", "streamable-http"])


def _roundtrip(method: str, result: dict[str, Any], version: str, transport: Any) -> Any:
    async def run() -> Any:
        guard = Guard("prop")
        connection = Connection(Engine(guard._shared, transport))
        connection.engine.version = version
        await connection.outbound(
            SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list"))
        )  # a listing first, so calls reach the result checks
        listing = SessionMessage(
            JSONRPCResponse(jsonrpc="2.0", id=1, result={"tools": _tools_of(result)})
        )
        await connection.inbound(listing)
        params = {"name": "t", "arguments": {}}
        request = JSONRPCRequest(jsonrpc="2.0", id=2, method=method, params=params)
        await connection.outbound(SessionMessage(request))
        request_id = 2
        item = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))
        out = await connection.inbound(item)
        # No decision fell into the guard's own failure path either.
        assert [e for e in guard.events if e.reason == "guard_internal_error"] == []
        return out

    return anyio.run(run)


def _tools_of(result: dict[str, Any]) -> list[Any]:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]


@bounded(60)
@given(
    real_or_mutated(real_pages()).filter(lambda v: isinstance(v, dict)) | json_objects(),
    VERSIONS,
    TRANSPORTS,
)
def test_any_tools_list_result_yields_a_message(page: Any, version: str, transport: Any) -> None:
    out = _roundtrip("tools/list", page, version, transport)
    assert isinstance(out, SessionMessage)


@bounded(60)
@given(
    real_or_mutated(real_results()).filter(lambda v: isinstance(v, dict)) | json_objects(),
    VERSIONS,
)
def test_any_tools_call_result_yields_a_message(result: Any, version: str) -> None:
    out = _roundtrip("tools/call", result, version, "stdio")
    assert isinstance(out, SessionMessage)
