"""The hostile server's edge scenarios under both clients: mcp 2.3.0's `ClientSession` and
fastmcp 4.1.6's `Client`, each with the guard on a stdio transport. Each test asserts what
the client saw and what the server received (tests/guard/hostile_server.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import fastmcp
import mcp_types
import pytest
from fastmcp.client.transports import StdioTransport
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import Guard

from .conftest import Hostile

pytestmark = pytest.mark.anyio

BOUND = 30
CLIENTS = ["session", "fastmcp"]


class Client:
    """One of the two clients, reduced to what these tests do."""

    def __init__(self, kind: str, inner: Any) -> None:
        self.kind = kind
        self.inner = inner

    async def list_tools(self) -> list[Any]:
        listed = await self.inner.list_tools()
        return list(listed.tools) if self.kind == "session" else list(listed)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if self.kind == "session":
            return await self.inner.call_tool(name, arguments)
        return await self.inner.call_tool(name, arguments, raise_on_error=False)


@asynccontextmanager
async def open_client(
    kind: str, guard: Guard, server: Hostile, sampled: list[list[str]] | None = None
) -> AsyncIterator[Client]:
    """A client of `kind` over stdio to `server`, with `guard`; `sampled` collects the tool
    names each sampling request shows the client's model."""

    async def session_sampling(context: Any, params: Any) -> Any:
        assert sampled is not None
        sampled.append([t.name for t in params.tools or []])
        content = mcp_types.TextContent(type="text", text="ok")
        return mcp_types.CreateMessageResult(role="assistant", content=content, model="m")

    def fastmcp_sampling(messages: Any, params: Any, context: Any) -> str:
        assert sampled is not None
        sampled.append([t.name for t in params.tools or []])
        return "ok"

    params = server.stdio()
    if kind == "session":
        async with stdio_client(params) as (read, write):
            read, write = guard.wrap_streams(read, write, transport="stdio")
            extra = {"sampling_callback": session_sampling} if sampled is not None else {}
            async with ClientSession(read, write, **extra) as session:
                await session.initialize()
                yield Client(kind, session)
    else:
        transport = guard.fastmcp_transport(
            StdioTransport(command=params.command, args=params.args)
        )
        extra = {"sampling_handler": fastmcp_sampling} if sampled is not None else {}
        async with fastmcp.Client(transport, **extra) as client:
            yield Client(kind, client)


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_listing_without_tools_is_a_json_rpc_error(
    hostile: Callable[..., Hostile], kind: str
) -> None:
    """Round-3 case 55's kind over a real transport: both clients get the SDK's MCPError
    (-32603, invalid_tools_list), never a pydantic error."""
    server = hostile("notools")
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with open_client(kind, guard, server) as client:
            with pytest.raises(MCPError) as refused:
                await client.list_tools()
    assert refused.value.error.code == -32603
    assert refused.value.error.data["reason"] == "invalid_tools_list"
    assert [m.get("method") for m in server.received()].count("tools/list") == 1


@pytest.mark.parametrize("kind", CLIENTS)
async def test_unsafe_icons_never_reach_the_client(
    hostile: Callable[..., Hostile], kind: str
) -> None:
    """Spec 2026-07-28 basic/index "Icons" (clients MUST reject unsafe icon URIs): the client's
    Tool keeps only the https icon."""
    server = hostile("icons")
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with open_client(kind, guard, server) as client:
            (tool,) = await client.list_tools()
            echoed = await client.call_tool("echo", {"message": "hi"})
    assert [icon.src for icon in tool.icons or []] == ["https://example.com/echo.png"]
    assert [e.json_path for e in guard.events if e.kind == "icon_removed"] == [
        f"$.tools[0].icons[{i}].src" for i in (0, 1, 2)
    ]
    assert echoed.content[0].text == "hi"
    assert server.calls() == [("echo", {"message": "hi"})]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_sampling_request_shows_the_model_only_accepted_tools(
    hostile: Callable[..., Hostile], kind: str
) -> None:
    """Spec 2025-11-25 client/sampling "Tools in Sampling": the server's tools for the
    client's model go through intake; `bad` (no inputSchema) is removed before the sampling
    callback; the server gets the callback's answer, then answers the call."""
    server = hostile("sampling")
    guard = Guard("hostile")
    sampled: list[list[str]] = []
    with anyio.fail_after(BOUND):
        async with open_client(kind, guard, server, sampled) as client:
            await client.list_tools()
            result = await client.call_tool("ask", {})
    assert sampled == [["lookup"]]
    assert result.content[0].text == "sampled"
    assert [(e.kind, e.tool, e.json_path) for e in guard.events if e.kind == "tool_rejected"] == [
        ("tool_rejected", "bad", "$.params.tools[1].inputSchema")
    ]
    answers = [m for m in server.received() if m.get("id") == "s-1" and "method" not in m]
    assert len(answers) == 1 and "result" in answers[0]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_held_rug_pull_is_not_listed(hostile: Callable[..., Hostile], kind: str) -> None:
    """changed="hold": the rug-pulled echo is not in the client's second listing, and a call
    to it never reaches the server."""
    server = hostile("rugpull")
    guard = Guard("hostile", changed="hold")
    with anyio.fail_after(BOUND):
        async with open_client(kind, guard, server) as client:
            first = await client.list_tools()
            second = await client.list_tools()
            with pytest.raises(MCPError) as held:
                await client.call_tool("echo", {"message": "x"})
    assert [t.name for t in first] == ["echo", "add"]
    assert [t.name for t in second] == ["add"]
    assert held.value.error.data["reason"] == "tool_held"
    assert guard.awaiting_approval() == {"echo": "changed"}
    assert server.calls() == []
