"""The guard under agent frameworks whose MCP client has no transport parameter.

Not a public module: the entry points are exported from `conduit_mcp.guard`.

Most frameworks need no code here: Microsoft Agent Framework also takes an entered
`mcp.Client` (`MCPStdioTool(name, mcp_client=mcp.Client(guard.stdio_client(params)))`),
llama-index's `McpToolSpec(client=...)` takes a `ClientSession`
(`ClientSession(*guard.wrap_streams(...))`), and FastMCP-based ones (pydantic-ai,
`langchain.mcp.MCPAdapter`) take `guard.fastmcp_transport(target)`. Where the framework builds
the SDK transport inside its own object, the guard goes on that factory method:

- openai-agents 0.24: `agents.mcp.server._MCPServerWithClientSession.create_streams()`, the one
  place its `MCPServerStdio`, `MCPServerSse` and `MCPServerStreamableHttp` open the transport,
  for the shared session (`connect()`) and for each isolated retry session alike.
- agent-framework 1.23: `agent_framework.MCPTool.get_mcp_client()`, the transport its
  framework-owned `mcp.Client(server=...)` is built on, at `connect()` and at each reconnect
  after a lost connection (`MCPStdioTool`, `MCPStreamableHTTPTool`, `MCPWebsocketTool`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from ._guard import Guard, Transport

ServerT = TypeVar("ServerT")

#: the attribute that marks a server object as guarded (one guard per server object).
GUARD_ATTRIBUTE: Final = "_conduit_mcp_guard"


def _class_names(obj: object) -> set[str]:
    return {cls.__name__ for cls in type(obj).__mro__}


def _guard_factory(guard: Guard, obj: ServerT, method: str, kind: Transport) -> ServerT:
    """Shadow `obj.<method>()` (an SDK transport factory) with one that wraps it in `guard`."""
    inner: Callable[[], AbstractAsyncContextManager[Any]] | None = getattr(obj, method, None)
    if not callable(inner):
        raise TypeError(f"expected an object with {method}(), got {type(obj).__name__}")
    if getattr(obj, GUARD_ATTRIBUTE, None) is not None:
        raise ValueError(f"{type(obj).__name__} is already guarded")

    def guarded() -> AbstractAsyncContextManager[tuple[Any, Any]]:
        return guard.transport(inner(), transport=kind)

    setattr(obj, method, guarded)  # shadows the class's method on this instance only
    setattr(obj, GUARD_ATTRIBUTE, guard)
    return obj


def guard_openai_agents_server(guard: Guard, server: ServerT) -> ServerT:
    """Put `guard` on an openai-agents MCP server's transport; returns `server` itself.

    Call it before `connect()` (or `async with server`): every session the server opens from
    then on, the shared one and any isolated retry session, reads and writes through the guard.
    A call the guard refuses reaches openai-agents as the SDK's `MCPError` (code -32602, the
    guard's `data`), which its tool pipeline hands to the model as a tool error (or raises,
    with `failure_error_function=None`).

    Args:
        guard: the `Guard` for this server (its `server_id` keys the pins).
        server: an `agents.mcp.MCPServerStdio`, `MCPServerStreamableHttp`, `MCPServerSse`, or a
            subclass: anything with openai-agents' `create_streams()` returning an SDK
            transport. Its transport kind is `"streamable-http"` for an
            `MCPServerStreamableHttp` (the `x-mcp-header` rules apply), else `"stdio"`. For a
            stdio server left at openai-agents' `encoding_error_handler="strict"` the handler
            becomes `"replace"`, as `Guard.stdio_client` does: under `"strict"` one stdout line
            that is not UTF-8 ends the session before the guard sees a message.

    Returns:
        `server`, changed in place (its instance's `create_streams`).

    Raises:
        TypeError: `server` has no callable `create_streams` (not an openai-agents server with
            a client session, e.g. a hosted MCP tool).
        ValueError: `server` is already guarded (two guards on one connection would pin and
            refuse twice; make one `Guard` per server).

    Spec: conduit-defined (a client-side seam); the guard implements MCP server/tools.
    """
    if not callable(getattr(server, "create_streams", None)):
        raise TypeError(
            "expected an openai-agents MCP server with create_streams(), "
            f"got {type(server).__name__}"
        )
    if getattr(server, GUARD_ATTRIBUTE, None) is not None:
        raise ValueError(f"{type(server).__name__} is already guarded")
    names = _class_names(server)
    kind: Transport = "streamable-http" if "MCPServerStreamableHttp" in names else "stdio"
    target: Any = server  # an openai-agents object: typed by duck, not imported
    if (
        "MCPServerStdio" in names
        and getattr(target.params, "encoding_error_handler", "") == "strict"
    ):
        target.params = target.params.model_copy(update={"encoding_error_handler": "replace"})
    return _guard_factory(guard, server, "create_streams", kind)


def guard_agent_framework_tool(guard: Guard, tool: ServerT) -> ServerT:
    """Put `guard` on a framework-owned Microsoft Agent Framework MCP tool; returns `tool`.

    For `MCPStdioTool(name, command=..., args=...)`, `MCPStreamableHTTPTool(name, url=...)` and
    `MCPWebsocketTool`, which open their own `mcp.Client`: every connection the tool opens from
    then on (at `connect()` and at each reconnect after a lost connection) runs on the guarded
    transport. A tool built with `mcp_client=` needs no helper: guard that client's transport
    (`mcp.Client(guard.stdio_client(params))`). A refused call raises agent-framework's
    `ToolExecutionException` with the guard's message.

    Args:
        guard: the `Guard` for this server (its `server_id` keys the pins).
        tool: an agent-framework `MCPTool` subclass instance with its own connection
            settings, before `connect()`. Its transport kind is `"streamable-http"` for an
            `MCPStreamableHTTPTool` (the `x-mcp-header` rules apply), else `"stdio"`. (Pass
            `encoding_error_handler="replace"` to `MCPStdioTool` for what `Guard.stdio_client`
            does by default: one stdout line that is not UTF-8 then no longer ends the session.)

    Returns:
        `tool`, changed in place (its instance's `get_mcp_client`).

    Raises:
        TypeError: `tool` has no callable `get_mcp_client`.
        ValueError: `tool` is already guarded.

    Spec: conduit-defined (a client-side seam); the guard implements MCP server/tools.
    """
    names = _class_names(tool)
    kind: Transport = "streamable-http" if "MCPStreamableHTTPTool" in names else "stdio"
    return _guard_factory(guard, tool, "get_mcp_client", kind)
