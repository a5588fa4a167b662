"""openai-agents (`agents.mcp.MCPServerStdio` / `MCPServerStreamableHttp`) under the guard:
`guard_openai_agents_server(guard, server)` puts the guard on the server's `create_streams()`,
and what the guard refuses is visible through openai-agents' own tool pipeline (`Agent` tool
listing, `FunctionTool.on_invoke_tool`: what its runner calls for a model's tool call), with no
model and no network."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import pytest

from conduit_mcp.guard import REFUSED_CALL_CODE, Guard

from ..guard.conftest import Hostile

# Found, not imported: importing openai-agents takes ~2 s of CPU, and every xdist worker collects
# this module; the tests import it, on the one worker of their group.
if importlib.util.find_spec("agents") is None:
    pytest.skip("openai-agents is not installed (integrations)", allow_module_level=True)
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.openai_agents,
    pytest.mark.xdist_group("openai-agents"),
]


def guard_openai_agents_server(guard: Guard, server: Any) -> Any:
    """conduit_mcp.guard's seam, imported when a test runs (it imports openai-agents)."""
    from conduit_mcp.guard import guard_openai_agents_server as seam

    return seam(guard, server)


def _invoke(tool: Any, arguments: str) -> Any:
    """`FunctionTool.on_invoke_tool` as the runner calls it for a model's tool call."""
    from agents.tool_context import ToolContext

    context = ToolContext(
        context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=arguments
    )
    return tool.on_invoke_tool(context, arguments)


async def _agent_tools(agent: Any) -> dict[str, Any]:
    from agents import RunContextWrapper

    return {t.name: t for t in await agent.get_all_tools(RunContextWrapper(context=None))}


async def test_stdio_server_rug_pull_and_invalid_arguments_reach_the_model_as_tool_errors(
    hostile: Callable[[str], Hostile],
) -> None:
    """The first listing pins echo and add; add with a string `a` is refused unsent and the
    model gets openai-agents' tool-error text; the second listing changes echo's description
    (rug pull): the agent no longer lists it, and the model's call through the tool it already
    holds is refused too. Only the one valid call reaches the server."""
    from agents import Agent
    from agents.mcp import MCPServerStdio

    server = hostile("rugpull")
    params = server.stdio()
    guard = Guard("hostile")
    mcp_server = guard_openai_agents_server(
        guard, MCPServerStdio({"command": params.command, "args": params.args})
    )
    assert mcp_server.params.encoding_error_handler == "replace"
    async with mcp_server:
        agent = Agent(name="assistant", mcp_servers=[mcp_server])
        first = await _agent_tools(agent)
        refused_add = await _invoke(first["add"], '{"a": "1", "b": 2}')
        added = await _invoke(first["add"], '{"a": 1, "b": 2}')
        second = await _agent_tools(agent)
        refused_echo = await _invoke(first["echo"], '{"message": "hi"}')
    assert sorted(first) == ["add", "echo"]
    assert sorted(second) == ["add"]
    # openai-agents' default failure_error_function: a tool error the model reads and recovers from
    assert "error" in str(refused_add).lower() and "error" in str(refused_echo).lower()
    assert "3" in str(added)
    assert [(e.kind, e.tool, e.reason) for e in guard.events if e.kind != "tool_new"] == [
        ("call_refused", "add", "invalid_arguments"),
        ("tool_changed", "echo", "tool_definition_changed"),
        ("call_refused", "echo", "tool_blocked"),
    ]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


async def test_the_guards_refusal_is_raised_without_a_failure_function(
    hostile: Callable[[str], Hostile],
) -> None:
    """`failure_error_function=None`: openai-agents raises the SDK's `MCPError` as the guard
    answered it (-32602, reason and tool in `data`)."""
    from agents import Agent
    from agents.mcp import MCPServerStdio
    from mcp.shared.exceptions import MCPError

    server = hostile("rugpull")
    params = server.stdio()
    guard = Guard("hostile")
    mcp_server = guard_openai_agents_server(
        guard,
        MCPServerStdio(
            {"command": params.command, "args": params.args}, failure_error_function=None
        ),
    )
    async with mcp_server:
        tools = await _agent_tools(Agent(name="assistant", mcp_servers=[mcp_server]))
        with pytest.raises(MCPError) as refused:
            await _invoke(tools["add"], '{"a": "1", "b": 2}')
    assert refused.value.error.code == REFUSED_CALL_CODE
    assert refused.value.error.data["reason"] == "invalid_arguments"
    assert refused.value.error.data["path"] == "$.arguments.a"
    assert server.calls() == []


async def test_streamable_http_server_under_the_guard(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """`MCPServerStreamableHttp` (openai-agents' own httpx2 transport, mcp.Client in mode
    "auto"): the mixed page keeps its good tools, a tool rejected at intake and invalid
    arguments (a string `a`; a missing one openai-agents refuses itself) are refused unsent."""
    from agents.mcp import MCPServerStreamableHttp
    from mcp.shared.exceptions import MCPError

    url, server = hostile_http("mixed")
    guard = Guard("hostile-http")
    mcp_server = guard_openai_agents_server(guard, MCPServerStreamableHttp({"url": url}))
    reasons = []
    async with mcp_server:
        listed = await mcp_server.list_tools()
        for name, arguments in (("stringly", {}), ("add", {"a": "1", "b": 2})):
            with pytest.raises(MCPError) as refused:
                await mcp_server.call_tool(name, arguments)
            reasons.append(refused.value.error.data["reason"])
        added = await mcp_server.call_tool("add", {"a": 1, "b": 2})
    assert [t.name for t in listed] == ["echo", "add", "weather"]
    assert reasons == ["tool_rejected", "invalid_arguments"]
    assert added.content[0].text == "3"  # type: ignore[union-attr]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


async def test_a_runner_run_with_a_scripted_model(hostile: Callable[[str], Hostile]) -> None:
    """`Runner.run` with a scripted `Model` (no network, tracing off) whose one tool call has a
    string `a`: the guard refuses it unsent and the runner hands the model a tool error, here
    the guard's own message through `failure_error_function`; the run then finishes."""
    import json

    from agents import Agent, RunConfig, Runner, Usage
    from agents.items import ModelResponse
    from agents.mcp import MCPServerStdio
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedModel(Model):
        """Answers each turn with the next scripted output item; keeps what it was sent."""

        def __init__(self, turns: list[Any]) -> None:
            self.turns = turns
            self.inputs: list[Any] = []

        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            self.inputs.append(input)
            return ModelResponse(output=[self.turns.pop(0)], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    call = ResponseFunctionToolCall(
        type="function_call",
        id="fc-1",
        call_id="call-1",
        name="add",
        arguments=json.dumps({"a": "1", "b": 2}),
        status="completed",
    )
    text = ResponseOutputText(type="output_text", text="done", annotations=[])
    reply = ResponseOutputMessage(
        type="message", id="m-1", role="assistant", status="completed", content=[text]
    )
    server = hostile("mixed")
    params = server.stdio()
    guard = Guard("hostile")
    mcp_server = guard_openai_agents_server(
        guard,
        MCPServerStdio(
            {"command": params.command, "args": params.args},
            failure_error_function=lambda context, error: str(error),
        ),
    )
    model = ScriptedModel([call, reply])
    async with mcp_server:
        agent = Agent(name="assistant", model=model, mcp_servers=[mcp_server])
        result = await Runner.run(
            agent, "Add 1 and 2.", run_config=RunConfig(tracing_disabled=True)
        )
    assert result.final_output == "done"
    tool_output = model.inputs[-1][-1]
    assert tool_output["type"] == "function_call_output"
    assert "inputSchema at $.arguments.a" in tool_output["output"]
    assert [(e.kind, e.tool, e.reason) for e in guard.events if e.kind == "call_refused"] == [
        ("call_refused", "add", "invalid_arguments")
    ]
    assert server.calls() == []
