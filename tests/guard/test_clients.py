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


async def test_mcp_client_refuses_unsent_before_and_after_a_rug_pull(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when under `mcp.Client`: invalid arguments (echo's `message` must be a
    string), a never-listed tool, and the rug-pulled echo after the second listing are refused
    with -32602 and never reach the server; only the one valid call does."""
    server = hostile("rugpull")
    guard = Guard("hostile")
    refused: list[MCPError] = []
    async with mcp.Client(guard.stdio_client(server.stdio())) as client:
        await client.list_tools()
        sent = await client.call_tool("echo", {"message": "hi"})
        for name, arguments in (("echo", {"message": 5}), ("never_listed", {})):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, arguments)
            refused.append(caught.value)
        second = await client.list_tools()
        with pytest.raises(MCPError) as caught:
            await client.call_tool("echo", {"message": "hi", "notes": "x"})
        refused.append(caught.value)
    assert sent.content[0].text == "hi"  # type: ignore[union-attr]
    assert [t.name for t in second.tools] == ["add"]
    assert [(e.error.code, e.error.data["reason"], e.error.data["tool"]) for e in refused] == [
        (REFUSED_CALL_CODE, "invalid_arguments", "echo"),
        (REFUSED_CALL_CODE, "unknown_tool", "never_listed"),
        (REFUSED_CALL_CODE, "tool_blocked", "echo"),
    ]
    assert server.calls() == [("echo", {"message": "hi"})]


async def test_mcp_client_at_2026_07_28_over_http_drops_invalid_x_mcp_header_tools(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """Spec 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters": a
    header name MUST be an RFC 9110 token, case-insensitively unique, on a property of type
    integer, string or boolean reached by a chain of `properties` keys alone; a client MUST
    exclude a tool that breaks any of these and SHOULD log its name and reason. One tool per
    rule (hostile scenario "headers"); `region`'s annotation is valid. The version comes from
    the request `_meta` the modern SDK stamps (there is no initialize at 2026-07-28)."""
    url, server = hostile_http("headers")
    guard = Guard("hostile-http")
    refused: dict[str, MCPError] = {}
    async with mcp.Client(guard.streamable_http_client(url), mode="2026-07-28") as client:
        listed = await client.list_tools()
        for name in ("routed", "twin", "spaced", "nested"):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, {"region": {}, "a": "x"})
            refused[name] = caught.value
        region = await client.call_tool("region", {"region": "eu"})
    assert [t.name for t in listed.tools] == ["echo", "region"]
    rejected = [e for e in guard.events if e.kind == "tool_rejected"]
    assert [(e.tool, e.reason, e.path) for e in rejected] == [
        ("routed", "x_mcp_header_type", ("tools", 1, "inputSchema", *_prop("region"))),
        ("twin", "x_mcp_header_duplicate", ("tools", 2, "inputSchema", *_prop("b"))),
        ("spaced", "x_mcp_header_invalid_name", ("tools", 3, "inputSchema", *_prop("a"))),
        (
            "nested",
            "x_mcp_header_unreachable",
            ("tools", 4, "inputSchema", "properties", "a", "items", "x-mcp-header"),
        ),
    ]
    assert {name: e.error.code for name, e in refused.items()} == dict.fromkeys(
        refused, REFUSED_CALL_CODE
    )
    assert {name: e.error.data["reason"] for name, e in refused.items()} == dict.fromkeys(
        refused, "tool_rejected"
    )
    assert region.content[0].text == "eu"  # type: ignore[union-attr]
    assert server.calls() == [("region", {"region": "eu"})]  # no rejected tool reached it


async def test_x_mcp_header_rules_stay_off_over_stdio(hostile: Callable[[str], Hostile]) -> None:
    """The same listing at 2026-07-28 over stdio: the header rules belong to Streamable HTTP
    ("other transports MAY ignore annotations"), and the guard learns the transport from what it
    wraps (`guard.stdio_client`), so it rejects none of them. (mcp 2.3.0 itself drops the four
    tools at 2026-07-28 whatever the transport: pinned.)"""
    server = hostile("headers")
    guard = Guard("hostile")
    async with mcp.Client(guard.stdio_client(server.stdio()), mode="2026-07-28") as client:
        listed = await client.list_tools()
    assert [e for e in guard.events if e.kind == "tool_rejected"] == []
    assert [guard.tool_status(n) for n in ("routed", "twin", "spaced", "nested", "region")] == [
        "ok"
    ] * 5
    assert [t.name for t in listed.tools] == ["echo", "region"]


def _prop(name: str) -> tuple[str, ...]:
    return ("properties", name, "x-mcp-header")


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


async def test_fastmcp_client_refuses_unsent(hostile: Callable[[str], Hostile]) -> None:
    """Issue 9 done-when under `fastmcp.Client` (mixed page over stdio): a never-listed tool, a
    tool rejected at intake and invalid arguments (add's `b` is required) are refused with
    -32602 and never reach the server; FastMCP hands the SDK's `MCPError` on."""
    server = hostile("mixed")
    guard = Guard("hostile")
    params = server.stdio()
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    refused: list[MCPError] = []
    async with fastmcp.Client(transport) as client:
        await client.list_tools()
        for name, arguments in (("never_listed", {}), ("stringly", {}), ("add", {"a": 1})):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, arguments)
            refused.append(caught.value)
        added = await client.call_tool("add", {"a": 1, "b": 2})
    assert [(e.error.code, e.error.data["reason"], e.error.data["tool"]) for e in refused] == [
        (REFUSED_CALL_CODE, "unknown_tool", "never_listed"),
        (REFUSED_CALL_CODE, "tool_rejected", "stringly"),
        (REFUSED_CALL_CODE, "invalid_arguments", "add"),
    ]
    assert added.content[0].text == "3"  # type: ignore[union-attr]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


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
