"""Microsoft Agent Framework (`agent_framework.MCPStdioTool` / `MCPStreamableHTTPTool`) under
the guard: the tool takes a caller-owned, entered `mcp.Client` (`mcp_client=`), and that client
runs on a guarded transport (`guard.stdio_client(params)`, `guard.streamable_http_client(url)`).
No adapter, no model, no network: the framework's own tool loading and `FunctionTool` calls."""

from __future__ import annotations

from collections.abc import Callable

import mcp
import pytest

from conduit_mcp.guard import Guard

from ..guard.conftest import Hostile

pytest.importorskip("agent_framework", reason="agent-framework-core is not installed")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.agent_framework,
    # agent-framework 1.23 pings a caller's Client on connect; mcp 2.3.0 warns that ping is
    # gone at 2026-07-28 whatever the negotiated version: their warning, not ours.
    pytest.mark.filterwarnings(
        "ignore:ping is removed:mcp.shared.exceptions.MCPDeprecationWarning"
    ),
]


async def test_stdio_tool_rug_pull_and_invalid_arguments_are_tool_execution_errors(
    hostile: Callable[[str], Hostile],
) -> None:
    """`MCPStdioTool(name, mcp_client=...)`: add with a string `a` through the tool's
    `call_tool` is refused unsent; after the server changes echo's description the reloaded
    tool list drops echo, and the `FunctionTool` the agent already holds for echo raises
    `ToolExecutionException` with the guard's reason (what a chat client hands the model)."""
    from agent_framework import MCPStdioTool
    from agent_framework.exceptions import ToolExecutionException

    server = hostile("rugpull")
    guard = Guard("hostile")
    async with mcp.Client(guard.stdio_client(server.stdio())) as client:
        tool = MCPStdioTool(name="hostile", mcp_client=client)
        async with tool:
            first = {f.name: f for f in tool.functions}
            with pytest.raises(ToolExecutionException) as invalid:
                await tool.call_tool("add", a="1", b=2)
            await tool.load_tools()
            second = [f.name for f in tool.functions]
            with pytest.raises(ToolExecutionException) as blocked:
                await first["echo"].invoke(arguments={"message": "hi"})
            added = await first["add"].invoke(arguments={"a": 1, "b": 2})
    assert sorted(first) == ["add", "echo"]
    assert second == ["add"]
    assert "inputSchema at $.arguments.a" in str(invalid.value)
    assert "changed since it was pinned" in str(blocked.value)
    assert [c.text for c in added] == ["3"]
    assert [(e.kind, e.tool, e.reason) for e in guard.events if e.kind != "tool_new"] == [
        ("call_refused", "add", "invalid_arguments"),
        ("tool_changed", "echo", "tool_definition_changed"),
        ("call_refused", "echo", "tool_blocked"),
    ]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


async def test_streamable_http_tool_under_the_guard(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """`MCPStreamableHTTPTool(name, mcp_client=...)` over Streamable HTTP: the mixed page keeps
    its good tools; a tool rejected at intake is refused unsent."""
    from agent_framework import MCPStreamableHTTPTool
    from agent_framework.exceptions import ToolExecutionException

    url, server = hostile_http("mixed")
    guard = Guard("hostile-http")
    async with mcp.Client(guard.streamable_http_client(url)) as client:
        tool = MCPStreamableHTTPTool(name="hostile", mcp_client=client)
        async with tool:
            names = [f.name for f in tool.functions]
            with pytest.raises(ToolExecutionException) as rejected:
                await tool.call_tool("stringly")
    assert names == ["echo", "add", "weather"]
    assert "rejected when listed" in str(rejected.value)
    assert server.calls() == []
