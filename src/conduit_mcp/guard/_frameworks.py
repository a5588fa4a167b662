"""The guard under agent frameworks whose MCP client has no transport parameter.

Not a public module: the entry points are exported from `conduit_mcp.guard`.

Most frameworks need no code here: Microsoft Agent Framework takes an entered `mcp.Client`
(`MCPStdioTool(name, mcp_client=mcp.Client(guard.stdio_client(params)))`), llama-index's
`McpToolSpec(client=...)` takes a `ClientSession` (`ClientSession(*guard.wrap_streams(...))`),
and FastMCP-based ones (pydantic-ai, `langchain.mcp.MCPAdapter`) take
`guard.fastmcp_transport(target)`. openai-agents builds its transport inside the server object
(`create_streams()`), so the guard goes there.

Seam: openai-agents 0.24 `agents.mcp.server._MCPServerWithClientSession.create_streams()`, the
one place its `MCPServerStdio`, `MCPServerSse` and `MCPServerStreamableHttp` open the SDK
transport: for the shared session (`connect()`) and for each isolated retry session alike.
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
    inner: Callable[[], AbstractAsyncContextManager[Any]] | None = getattr(
        server, "create_streams", None
    )
    if not callable(inner):
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

    def create_streams() -> AbstractAsyncContextManager[tuple[Any, Any]]:
        return guard.transport(inner(), transport=kind)

    target.create_streams = create_streams  # shadows the class's method on this instance
    setattr(target, GUARD_ATTRIBUTE, guard)
    return server
