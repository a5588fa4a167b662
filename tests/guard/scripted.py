"""An in-memory scripted MCP server for fast guard tests: no subprocess, no network.

conduit-defined test double. `scripted_session(guard, handler)` yields an initialized
`ClientSession` whose transport is a pair of anyio memory streams, with `guard` on them; the
server side answers each request with `handler(method, params)` (a result dict, or an
`ErrorData`-shaped dict under the key "error") and records what it received.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, jsonrpc_message_adapter

from conduit_mcp.guard import Guard

Handler = Callable[[str, dict[str, Any]], dict[str, Any]]


class Script:
    """What the scripted server received (method, params), in order."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []

    def calls(self) -> list[tuple[str, Any]]:
        return [(p.get("name"), p.get("arguments")) for m, p in self.received if m == "tools/call"]


def _initialize(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "0"},
    }


def _discover(version: str) -> dict[str, Any]:
    return {
        "supportedVersions": [version],
        "capabilities": {"tools": {}},
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }


@asynccontextmanager
async def scripted_session(
    guard: Guard,
    handler: Handler,
    *,
    version: str = "2025-11-25",
    transport: str = "stdio",
    **session_kwargs: Any,
) -> AsyncIterator[tuple[ClientSession, Script]]:
    """An initialized session (2026-07-28: `server/discover`) with `guard` on its streams;
    `session_kwargs` go to `ClientSession` (e.g. `extensions`, `result_claims`)."""
    script = Script()
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](16)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](16)

    async def serve() -> None:
        async with to_server_recv, to_client_send:
            async for item in to_server_recv:
                message = item.message
                if not isinstance(message, JSONRPCRequest):
                    continue
                params = message.params or {}
                script.received.append((message.method, params))
                if message.method == "initialize":
                    result: dict[str, Any] = _initialize(version)
                elif message.method == "server/discover":
                    result = _discover(version)
                else:
                    result = handler(message.method, params)
                if "error" in result:
                    raw = {"jsonrpc": "2.0", "id": message.id, "error": result["error"]}
                else:
                    raw = {"jsonrpc": "2.0", "id": message.id, "result": result}
                await to_client_send.send(
                    SessionMessage(jsonrpc_message_adapter.validate_python(raw))
                )

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        read, write = guard.wrap_streams(to_client_recv, to_server_send, transport=transport)  # type: ignore[arg-type]
        async with ClientSession(read, write, **session_kwargs) as session:
            if version >= "2026-07-28":
                await session.discover()
            else:
                await session.initialize()
            yield session, script
        to_server_send.close()
        to_client_recv.close()
        tg.cancel_scope.cancel()


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}
