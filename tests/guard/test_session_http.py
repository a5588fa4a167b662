"""The guard under `ClientSession` over Streamable HTTP (servers on a free loopback port)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import REFUSED_CALL_CODE, Guard

from .conftest import Hostile

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def guarded_http(guard: Guard, url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write):
        read, write = guard.wrap_streams(read, write, transport="streamable-http")
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def test_mixed_page_refusals_and_withheld_output_over_http(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    """Issue 9 done-when, over Streamable HTTP (JSON responses): same answers as stdio."""
    url, server = hostile_http("mixed")
    guard = Guard("hostile-http")
    async with guarded_http(guard, url) as session:
        listed = await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("echo", {"message": 5})
        ok = await session.call_tool("add", {"a": 2, "b": 3})
    assert [t.name for t in listed.tools] == ["echo", "add", "weather"]
    assert [e.tool for e in guard.events if e.kind == "tool_rejected"] == [
        "stringly",
        None,
        "echo",
        "noschema",
    ]
    assert refused.value.error.code == REFUSED_CALL_CODE
    assert ok.content[0].text == "5"  # type: ignore[union-attr]
    assert server.calls() == [("add", {"a": 2, "b": 3})]


async def test_withheld_output_over_http(
    hostile_http: Callable[[str], tuple[str, Hostile]],
) -> None:
    url, _ = hostile_http("output")
    guard = Guard("hostile-http")
    async with guarded_http(guard, url) as session:
        await session.list_tools()
        result = await session.call_tool("weather", {"city": "Oslo"})
    assert result.is_error is True
    assert [e.reason for e in guard.events if e.kind == "output_invalid"] == [
        "invalid_structured_content"
    ]


async def test_an_sdk_written_server_sees_no_difference(sdk_server_http: str) -> None:
    """A well-behaved server written with the SDK: every tool listed, every call answered as
    the server sent it, and no event but the first-use pins."""
    guard = Guard("sdk-server")
    async with guarded_http(guard, sdk_server_http) as session:
        listed = await session.list_tools()
        added = await session.call_tool("add", {"a": 1, "b": 2})
        forecast = await session.call_tool("forecast", {"city": "Oslo"})
    assert [t.name for t in listed.tools] == ["add", "forecast"]
    assert added.structured_content == {"result": 3}
    assert forecast.structured_content == {"temperature": 21.5, "conditions": "clear over Oslo"}
    assert {e.kind for e in guard.events} == {"tool_new"}
