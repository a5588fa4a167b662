"""LangChain's own MCP adapter (`langchain.mcp.MCPAdapter`, langchain >= 1.5, built on FastMCP
and so on mcp 2.x) under the guard: the adapter takes any FastMCP transport, so it gets
`guard.fastmcp_transport(...)`. Its tools call through the guard; no model, no network.

(`langchain-mcp-adapters` 0.3.2 pins mcp < 2: see test_mcp1.py, through the proxy.)"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import REFUSED_CALL_CODE, Guard

from ..guard.conftest import Hostile

pytest.importorskip("langchain_core", reason="langchain is not installed (langchain extra)")
pytestmark = [pytest.mark.anyio, pytest.mark.langchain]


def _adapter_class() -> Any:
    """`langchain.mcp.MCPAdapter`, imported without its once-per-process beta warning."""
    from langchain_core._api import LangChainBetaWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainBetaWarning)
        mcp_module = pytest.importorskip("langchain.mcp", reason="langchain < 1.5 has no .mcp")
    return mcp_module.MCPAdapter


async def test_adapter_rug_pull_and_invalid_arguments_are_refused(
    hostile: Callable[[str], Hostile],
) -> None:
    """add with a string `a` is refused unsent, also as a model's tool call; the server then
    changes echo's description: a refreshed `list_tools` drops echo and the tool the agent
    already holds raises the guard's `MCPError` (langchain.mcp treats it as a transport error,
    not a `ToolException`: it is raised, never handed to the model as a result)."""
    from fastmcp.client.transports import StdioTransport

    adapter_class = _adapter_class()
    server = hostile("rugpull")
    params = server.stdio()
    guard = Guard("hostile")
    adapter = adapter_class(
        guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    )
    refused: list[MCPError] = []
    async with adapter:
        first = {t.name: t for t in await adapter.list_tools()}
        for call in (
            {"a": "1", "b": 2},
            {"type": "tool_call", "id": "call-1", "name": "add", "args": {"a": "1", "b": 2}},
        ):
            with pytest.raises(MCPError) as caught:
                await first["add"].ainvoke(call)
            refused.append(caught.value)
        added = await first["add"].ainvoke({"a": 1, "b": 2})
        second = [t.name for t in await adapter.list_tools(cache_mode="refresh")]
        with pytest.raises(MCPError) as caught:
            await first["echo"].ainvoke({"message": "hi"})
        refused.append(caught.value)
    assert sorted(first) == ["add", "echo"]
    assert second == ["add"]
    assert [(e.error.code, e.error.data["reason"], e.error.data["tool"]) for e in refused] == [
        (REFUSED_CALL_CODE, "invalid_arguments", "add"),
        (REFUSED_CALL_CODE, "invalid_arguments", "add"),
        (REFUSED_CALL_CODE, "tool_blocked", "echo"),
    ]
    assert [block["text"] for block in added] == ["3"]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


async def test_adapter_hands_a_withheld_result_to_the_model_as_a_tool_error(
    hostile: Callable[[str], Hostile],
) -> None:
    """Invalid structured content (weather's temperature "hot" against its outputSchema) is
    withheld by the guard as an `isError` result; langchain.mcp makes that a `ToolMessage`
    with status "error", the model reading why, never the server's value."""
    from fastmcp.client.transports import StdioTransport

    adapter_class = _adapter_class()
    server = hostile("output")
    params = server.stdio()
    guard = Guard("hostile")
    adapter = adapter_class(
        guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    )
    async with adapter:
        tools = {t.name: t for t in await adapter.list_tools()}
        message = await tools["weather"].ainvoke(
            {"type": "tool_call", "id": "call-1", "name": "weather", "args": {"city": "Oslo"}}
        )
    assert message.status == "error"
    assert "hot" not in str(message.content)
    assert [e.reason for e in guard.events if e.kind == "output_invalid"] == [
        "invalid_structured_content"
    ]


async def test_an_agent_run_with_a_fake_model(hostile: Callable[[str], Hostile]) -> None:
    """`create_agent` with langchain-core's fake chat model, whose one tool call has a string
    `a`: by default the guard's `MCPError` ends the run (LangGraph's tool node hands only
    argument-validation errors to the model), nothing sent; with a `wrap_tool_call` middleware
    that turns it into an error `ToolMessage`, the model reads the guard's reason and the run
    goes on."""
    from fastmcp.client.transports import StdioTransport
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage

    class FakeModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
            return self

    def model() -> FakeModel:
        call = {"name": "add", "args": {"a": "1", "b": 2}, "id": "call-1"}
        replies = [AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]
        return FakeModel(messages=iter(replies))

    @wrap_tool_call  # type: ignore[arg-type]
    async def refusals_to_the_model(request: Any, handler: Any) -> Any:
        try:
            return await handler(request)
        except MCPError as exc:
            call_id = request.tool_call["id"]
            return ToolMessage(content=exc.error.message, tool_call_id=call_id, status="error")

    adapter_class = _adapter_class()
    server = hostile("mixed")
    params = server.stdio()
    guard = Guard("hostile")
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    question = {"messages": [{"role": "user", "content": "Add 1 and 2."}]}
    async with adapter_class(transport) as adapter:
        tools = await adapter.list_tools()
        with pytest.raises(MCPError) as ended:
            await create_agent(model(), tools).ainvoke(question)
        agent = create_agent(model(), tools, middleware=[refusals_to_the_model])
        state = await agent.ainvoke(question)
    assert ended.value.error.data["reason"] == "invalid_arguments"
    [tool_message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.status == "error"
    assert "inputSchema at $.arguments.a" in tool_message.content
    assert state["messages"][-1].content == "done"
    assert server.calls() == []
