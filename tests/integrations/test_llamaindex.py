"""llama-index (`llama_index.tools.mcp.McpToolSpec(client=...)`) under the guard: the spec
takes any `ClientSession`, so it gets a guarded one (`ClientSession(*guard.wrap_streams(...))`)
and its `FunctionTool`s call through the guard. No adapter, no model, no network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import REFUSED_CALL_CODE, Guard

from ..guard.conftest import Hostile

pytest.importorskip("llama_index.tools.mcp", reason="llama-index-tools-mcp is not installed")
pytestmark = [pytest.mark.anyio, pytest.mark.llamaindex]


async def test_tool_spec_rug_pull_and_invalid_arguments_are_refused(
    hostile: Callable[[str], Hostile],
) -> None:
    """add with a string `a` is refused unsent; the server then changes echo's description:
    the next `to_tool_list_async` drops echo, and the `FunctionTool` an agent already holds
    for echo raises the guard's `MCPError` (a llama-index agent turns it into an error
    `ToolOutput` for the model)."""
    from llama_index.tools.mcp import McpToolSpec

    server = hostile("rugpull")
    guard = Guard("hostile")
    refused: list[MCPError] = []
    async with stdio_client(server.stdio()) as (read, write):
        async with ClientSession(*guard.wrap_streams(read, write)) as session:
            await session.initialize()
            spec = McpToolSpec(client=session)
            first = {t.metadata.name: t for t in await spec.to_tool_list_async()}
            with pytest.raises(MCPError) as caught:
                await first["add"].acall(a="1", b=2)
            refused.append(caught.value)
            added = await first["add"].acall(a=1, b=2)
            second = [t.metadata.name for t in await spec.to_tool_list_async()]
            with pytest.raises(MCPError) as caught:
                await first["echo"].acall(message="hi")
            refused.append(caught.value)
    assert sorted(first) == ["add", "echo"]
    assert second == ["add"]
    assert [(e.error.code, e.error.data["reason"], e.error.data["tool"]) for e in refused] == [
        (REFUSED_CALL_CODE, "invalid_arguments", "add"),
        (REFUSED_CALL_CODE, "tool_blocked", "echo"),
    ]
    assert added.raw_output.content[0].text == "3"
    assert server.calls() == [("add", {"a": 1, "b": 2})]


# Not ours: llama-index-workflows inspects the agent with `inspect.getmembers`, which touches
# pydantic's deprecated instance attributes (`__fields__`, `model_computed_fields`, ...).
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
async def test_a_function_agent_run_with_the_mock_llm(hostile: Callable[[str], Hostile]) -> None:
    """`FunctionAgent.run` with llama-index's own `MockFunctionCallingLLM`, scripted to call add
    with a string `a` and then answer: the guard refuses the call unsent and the agent hands
    the guard's reason to the model as the tool message; the run finishes."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage, MessageRole
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.tools.mcp import McpToolSpec

    seen: list[list[ChatMessage]] = []

    def respond(messages: Any, **kwargs: Any) -> ChatMessage:
        seen.append(list(messages))
        if any(m.role == MessageRole.TOOL for m in messages):
            return ChatMessage(role=MessageRole.ASSISTANT, content="done")
        call = ToolCallBlock(tool_call_id="call-1", tool_name="add", tool_kwargs={"a": "1", "b": 2})
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])

    server = hostile("mixed")
    guard = Guard("hostile")
    async with stdio_client(server.stdio()) as (read, write):
        async with ClientSession(*guard.wrap_streams(read, write)) as session:
            await session.initialize()
            tools = await McpToolSpec(client=session).to_tool_list_async()
            llm = MockFunctionCallingLLM(response_generator=respond)
            result = await FunctionAgent(tools=tools, llm=llm).run("Add 1 and 2.")
    assert str(result) == "done"
    [tool_message] = [m for m in seen[-1] if m.role == MessageRole.TOOL]
    assert "inputSchema at $.arguments.a" in str(tool_message.content)
    assert [(e.kind, e.tool, e.reason) for e in guard.events if e.kind == "call_refused"] == [
        ("call_refused", "add", "invalid_arguments")
    ]
    assert server.calls() == []
