"""Microsoft Agent Framework (`agent_framework.MCPStdioTool` / `MCPStreamableHTTPTool`) under
the guard: the tool takes a caller-owned, entered `mcp.Client` (`mcp_client=`), and that client
runs on a guarded transport (`guard.stdio_client(params)`, `guard.streamable_http_client(url)`).
No adapter, no model, no network: the framework's own tool loading and `FunctionTool` calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp
import pytest

from conduit_mcp.guard import Guard, guard_agent_framework_tool

from ..guard.conftest import Hostile

pytest.importorskip("agent_framework", reason="agent-framework-core is not installed")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.agent_framework,
    # agent-framework 1.23 pings a caller's Client on connect when the server was initialized
    # (before 2026-07-28, as the hostile server is); mcp 2.3.0's Client.send_ping always warns
    # that ping is gone at 2026-07-28: their warning, with or without the guard.
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


async def test_a_framework_owned_tool_with_the_helper(hostile: Callable[[str], Hostile]) -> None:
    """`guard_agent_framework_tool(guard, MCPStdioTool(name, command=..., args=...))`: the tool
    opens its own Client on the guarded transport; the rug pull is blocked as above."""
    from agent_framework import MCPStdioTool
    from agent_framework.exceptions import ToolExecutionException

    server = hostile("rugpull")
    params = server.stdio()
    guard = Guard("hostile")
    tool = guard_agent_framework_tool(
        guard, MCPStdioTool(name="hostile", command=params.command, args=params.args)
    )
    async with tool:
        first = [f.name for f in tool.functions]
        await tool.load_tools()
        second = [f.name for f in tool.functions]
        with pytest.raises(ToolExecutionException) as blocked:
            await tool.call_tool("echo", message="hi")
    assert (first, second) == (["echo", "add"], ["add"])
    assert "changed since it was pinned" in str(blocked.value)
    assert server.calls() == []


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


async def test_an_agent_run_with_a_scripted_chat_client(hostile: Callable[[str], Hostile]) -> None:
    """`Agent.run` with a scripted chat client (agent-framework's own `FunctionInvocationLayer`
    over `BaseChatClient`, no model, no network) and `Guard(new="hold")`: add, a held tool,
    is not offered to the model, so the model's call to it ends in a function error and never
    reaches the server; after `guard.approve`, the next listing offers it and the same call
    goes through. (agent-framework checks argument types itself, so the held tool is what reaches
    the guard here; invalid arguments are refused in test_stdio_tool_... above.)"""
    import json

    from agent_framework import (
        Agent,
        BaseChatClient,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        MCPStdioTool,
        Message,
    )

    class ScriptedChatClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
        """Answers with the next scripted content; keeps the messages it was sent."""

        def __init__(self, turns: list[Any]) -> None:
            super().__init__()
            self.turns = turns
            self.seen: list[list[Any]] = []
            self.function_invocation_configuration["include_detailed_errors"] = True

        async def _inner_get_response(self, *, messages: Any, **kwargs: Any) -> Any:
            self.seen.append(list(messages))
            return ChatResponse(messages=[Message(role="assistant", contents=[self.turns.pop(0)])])

    def script() -> ScriptedChatClient:
        arguments = json.dumps({"a": 1, "b": 2})
        call = Content.from_function_call(call_id="call-1", name="add", arguments=arguments)
        return ScriptedChatClient([call, Content.from_text("done")])

    def function_results(chat: ScriptedChatClient) -> list[str]:
        contents = [c for m in chat.seen[-1] for c in m.contents]
        return [str(c.result) for c in contents if c.type == "function_result"]

    server = hostile("mixed")
    guard = Guard("hostile", new="hold")
    async with mcp.Client(guard.stdio_client(server.stdio())) as client:
        async with MCPStdioTool(name="hostile", mcp_client=client) as tool:
            held_names = [f.name for f in tool.functions]
            held_chat = script()
            held = await Agent(client=held_chat, tools=[tool]).run("Add 1 and 2.")
            assert server.calls() == []
    assert guard.approve("add", approver="alice@example.com") is True
    async with mcp.Client(guard.stdio_client(server.stdio())) as client:
        async with MCPStdioTool(name="hostile", mcp_client=client) as tool:
            approved_names = [f.name for f in tool.functions]
            approved_chat = script()
            approved = await Agent(client=approved_chat, tools=[tool]).run("Add 1 and 2.")
    # Held is hidden: the model is not offered `add` until a person approves it, so the
    # model's call never reaches the guard or the server; the next listing offers it.
    assert "add" not in held_names and "add" in approved_names
    assert held.text != "done"  # the framework ends the run on a function it was not offered
    assert approved.text == "done"
    assert function_results(approved_chat) == ["3"]
    assert server.calls() == [("add", {"a": 1, "b": 2})]
