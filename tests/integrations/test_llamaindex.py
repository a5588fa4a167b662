"""llama-index (`llama_index.tools.mcp.McpToolSpec(client=...)`) under the guard: the spec
takes any `ClientSession`, so it gets a guarded one (`ClientSession(*guard.wrap_streams(...))`)
and its `FunctionTool`s call through the guard. No adapter, no model, no network."""

from __future__ import annotations

from collections.abc import Callable

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
