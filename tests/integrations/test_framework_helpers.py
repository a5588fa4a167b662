"""`guard_openai_agents_server` and `guard_agent_framework_tool` on their own: what they accept
and refuse, and the transport kind each picks (no framework needed: stand-ins with the
frameworks' class names; the seams themselves are tested in test_openai_agents.py and
test_agent_framework.py)."""

from __future__ import annotations

from typing import Any

import pytest

from conduit_mcp.guard import Guard, guard_agent_framework_tool, guard_openai_agents_server


def test_a_non_server_or_a_second_guard_is_refused() -> None:
    """The helper only takes an object with openai-agents' `create_streams()`, once."""

    class Server:
        def create_streams(self) -> Any:
            raise AssertionError("never entered here")

    with pytest.raises(TypeError, match="create_streams"):
        guard_openai_agents_server(Guard("x"), object())
    server = Server()
    assert guard_openai_agents_server(Guard("x"), server) is server
    with pytest.raises(ValueError, match="already guarded"):
        guard_openai_agents_server(Guard("y"), server)


def test_the_transport_kind_and_the_stdio_decoding_follow_the_server_class() -> None:
    """`MCPServerStreamableHttp` (and subclasses) get the guard as "streamable-http", where the
    `x-mcp-header` rules apply; anything else as "stdio". A stdio server left at
    openai-agents' `encoding_error_handler="strict"` gets "replace" (as `Guard.stdio_client`
    does); one set otherwise keeps its choice. Stand-ins with openai-agents' class names."""
    from mcp import StdioServerParameters

    class Base:
        def __init__(self, handler: str = "strict") -> None:
            self.params = StdioServerParameters(command="x", encoding_error_handler=handler)

        def create_streams(self) -> Any:
            return "inner transport"

    class MCPServerStdio(Base):
        pass

    class MCPServerStreamableHttp(Base):
        pass

    class MyHttpServer(MCPServerStreamableHttp):
        pass

    kinds: list[tuple[object, str]] = []
    guard = Guard("x")

    def transport(inner: object, *, transport: str = "stdio") -> Any:
        kinds.append((inner, transport))
        return "guarded"

    guard.transport = transport  # type: ignore[method-assign]
    stdio, ignoring = MCPServerStdio(), MCPServerStdio("ignore")
    servers = [stdio, ignoring, MCPServerStreamableHttp(), MyHttpServer()]
    for server in servers:
        assert guard_openai_agents_server(guard, server).create_streams() == "guarded"
    assert kinds == [
        ("inner transport", kind) for kind in ("stdio", "stdio", *["streamable-http"] * 2)
    ]
    assert stdio.params.encoding_error_handler == "replace"
    assert ignoring.params.encoding_error_handler == "ignore"
    assert servers[2].params.encoding_error_handler == "strict"  # not a stdio server


def test_agent_framework_tools_get_their_transport_kind() -> None:
    """`MCPStreamableHTTPTool` is guarded as "streamable-http", `MCPStdioTool` as "stdio"; the
    tool's own `get_mcp_client()` result is what the guard wraps; a second guard is refused."""

    class MCPTool:
        def get_mcp_client(self) -> Any:
            return f"{type(self).__name__} transport"

    class MCPStdioTool(MCPTool):
        pass

    class MCPStreamableHTTPTool(MCPTool):
        pass

    kinds: list[tuple[object, str]] = []
    guard = Guard("x")

    def transport(inner: object, *, transport: str = "stdio") -> Any:
        kinds.append((inner, transport))
        return "guarded"

    guard.transport = transport  # type: ignore[method-assign]
    stdio = guard_agent_framework_tool(guard, MCPStdioTool())
    http = guard_agent_framework_tool(guard, MCPStreamableHTTPTool())
    assert (stdio.get_mcp_client(), http.get_mcp_client()) == ("guarded", "guarded")
    assert kinds == [
        ("MCPStdioTool transport", "stdio"),
        ("MCPStreamableHTTPTool transport", "streamable-http"),
    ]
    with pytest.raises(ValueError, match="already guarded"):
        guard_agent_framework_tool(Guard("y"), stdio)
    with pytest.raises(TypeError, match="get_mcp_client"):
        guard_agent_framework_tool(guard, object())
