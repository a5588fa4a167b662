"""The guard under the SDK's `mcp.Client` and under `fastmcp.Client`, and against
server-everything (the reference server) over stdio."""

from __future__ import annotations

import sys
from collections.abc import Callable

import fastmcp
import mcp
import pytest
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import REFUSED_CALL_CODE, Guard

from .conftest import SDK_SERVER, Hostile

pytestmark = pytest.mark.anyio


async def test_mcp_client_over_stdio(hostile: Callable[[str], Hostile]) -> None:
    """`mcp.Client(guard.stdio_client(params))`: mode "auto" probes server/discover, the hostile
    server refuses it, the SDK falls back to initialize; the guard learns 2025-11-25."""
    server = hostile("mixed")
    guard = Guard("hostile")
    async with mcp.Client(guard.stdio_client(server.stdio())) as client:
        listed = await client.list_tools()
        with pytest.raises(MCPError) as refused:
            await client.call_tool("never_listed", {})
    assert [t.name for t in listed.tools] == ["echo", "add", "weather"]
    assert refused.value.error.code == REFUSED_CALL_CODE
    assert refused.value.error.data["reason"] == "unknown_tool"
    assert server.calls() == []


async def test_mcp_client_at_2026_07_28_over_http_drops_an_invalid_x_mcp_header_tool(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """Spec 2026-07-28 basic/transports "Custom Headers from Tool Parameters": a client MUST
    exclude a tool whose x-mcp-header annotation is invalid (here: on an object property) and
    SHOULD log its name and reason. The version comes from the request `_meta` the modern SDK
    stamps (there is no initialize at 2026-07-28)."""
    url, server = hostile_http("headers")
    guard = Guard("hostile-http")
    async with mcp.Client(guard.streamable_http_client(url), mode="2026-07-28") as client:
        listed = await client.list_tools()
        with pytest.raises(MCPError) as refused:
            await client.call_tool("routed", {"region": {}})
    assert [t.name for t in listed.tools] == ["echo"]
    rejected = [e for e in guard.events if e.kind == "tool_rejected"]
    assert [(e.tool, e.reason) for e in rejected] == [("routed", "x_mcp_header_type")]
    assert rejected[0].path[:3] == ("tools", 1, "inputSchema")
    assert refused.value.error.data["reason"] == "tool_rejected"
    assert server.calls() == []


async def test_mcp_client_at_2026_07_28_withholds_invalid_output_with_a_result_type(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """At 2026-07-28 the withheld result carries resultType "complete" (basic "ResultType"),
    which the SDK's model for that version requires."""
    url, _ = hostile_http("output")
    guard = Guard("hostile-http")
    async with mcp.Client(guard.streamable_http_client(url), mode="2026-07-28") as client:
        await client.list_tools()
        result = await client.call_tool("weather", {"city": "Oslo"})
    assert result.is_error is True
    assert [e.reason for e in guard.events if e.kind == "output_invalid"] == [
        "invalid_structured_content"
    ]


async def test_fastmcp_client_over_stdio(hostile: Callable[[str], Hostile]) -> None:
    server = hostile("rugpull")
    guard = Guard("hostile")
    params = server.stdio()
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    async with fastmcp.Client(transport) as client:
        first = await client.list_tools()
        second = await client.list_tools()
        with pytest.raises(Exception, match="changed since it was pinned"):
            await client.call_tool("echo", {"message": "x"})
    assert [t.name for t in first] == ["echo", "add"]
    assert [t.name for t in second] == ["add"]
    assert [(e.kind, e.tool) for e in guard.events if e.kind == "tool_changed"] == [
        ("tool_changed", "echo")
    ]
    assert server.calls() == []


async def test_fastmcp_client_over_http(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    url, server = hostile_http("mixed")
    guard = Guard("hostile-http")
    transport = guard.fastmcp_transport(StreamableHttpTransport(url))
    async with fastmcp.Client(transport) as client:
        tools = await client.list_tools()
        with pytest.raises(Exception, match="inputSchema"):
            await client.call_tool("add", {"a": "1", "b": 2})
    assert [t.name for t in tools] == ["echo", "add", "weather"]
    assert server.calls() == []


async def test_fastmcp_client_over_stdio_with_an_sdk_server() -> None:
    """A script path, as fastmcp.Client takes it; the guard is invisible to honest tools."""
    guard = Guard("sdk-server")
    transport = guard.fastmcp_transport(
        StdioTransport(command=sys.executable, args=[str(SDK_SERVER)])
    )
    async with fastmcp.Client(transport) as client:
        with pytest.raises(MCPError, match="never listed"):
            await client.call_tool("add", {"a": 2, "b": 40})  # before any listing: unknown
        await client.list_tools()
        result = await client.call_tool("add", {"a": 2, "b": 40})
    assert result.structured_content == {"result": 42}
    assert [e.kind for e in guard.events] == ["call_refused", "tool_new", "tool_new"]


@pytest.mark.live
async def test_server_everything_under_the_guard(server_everything_argv: list[str]) -> None:
    """The reference server (2025-11-25): every tool it lists passes intake, its echo answers
    through the guard, and a call with a wrong argument type never reaches it."""
    guard = Guard("everything")
    params = StdioServerParameters(
        command=server_everything_argv[0], args=server_everything_argv[1:]
    )
    async with stdio_client(params) as (read, write):
        read, write = guard.wrap_streams(read, write)
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            echo = await session.call_tool("echo", {"message": "hello"})
            with pytest.raises(MCPError) as refused:
                await session.call_tool("echo", {"message": 7})
            structured = await session.call_tool("get-structured-content", {"location": "New York"})
    assert "echo" in [t.name for t in listed.tools]
    assert [e for e in guard.events if e.kind == "tool_rejected"] == []
    assert "hello" in echo.content[0].text  # type: ignore[union-attr]
    assert refused.value.error.data["reason"] == "invalid_arguments"
    assert structured.is_error is False
    assert [e for e in guard.events if e.kind == "output_invalid"] == []
