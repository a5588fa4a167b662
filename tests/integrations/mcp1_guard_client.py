"""The guard in process under mcp 1.x: `ClientSession(*guard.wrap_streams(read, write))` with
mcp 1.x's own `ClientSession` and `stdio_client`, run in the mcp 1.x venv of test_mcp1.py.

Usage: python mcp1_guard_client.py SCENARIO COMMAND [ARG...]
  mixed, rugpull, output   COMMAND runs the hostile server's scenario of that name
  everything               COMMAND runs server-everything over stdio; the session is built on
                           `guard.stdio_client(params)` (the helper) rather than wrap_streams
  http                     COMMAND is the URL of the hostile server's mixed scenario over
                           Streamable HTTP; the session is built on `guard.streamable_http_client`
  unrecognized             no server: in-memory streams carrying items that are no mcp 1.x
                           JSON-RPC message (COMMAND is ignored)
  sdkmodels                a scripted server over in-memory streams (COMMAND is ignored): a
                           page with tools intake accepts and mcp 1.x's `Tool` refuses, and a
                           tools/call answered `{}`; once guarded, once not
Prints one JSON object: the mcp version, what the session saw (tool names, each call's outcome:
`{"ok": [texts], "isError": bool}` or `{"error": code, "data": data}`) and the guard's events
as `[kind, tool, reason, decision, json_path]`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from conduit_mcp.guard import Guard


async def outcome(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await session.call_tool(name, arguments)
    except McpError as exc:
        return {"error": exc.error.code, "data": exc.error.data}
    texts = [getattr(block, "text", None) for block in result.content]
    return {"ok": texts, "isError": result.isError}


async def names(session: ClientSession) -> list[str]:
    return [tool.name for tool in (await session.list_tools()).tools]


async def mixed(session: ClientSession) -> dict[str, Any]:
    listed = await names(session)
    calls = [
        await outcome(session, "echo", {"message": "hi"}),
        await outcome(session, "echo", {"message": 5}),
        await outcome(session, "add", {"a": 1}),
        await outcome(session, "stringly", {}),
    ]
    return {"listed": listed, "calls": calls}


async def rugpull(session: ClientSession) -> dict[str, Any]:
    first = await names(session)
    calls = [
        await outcome(session, "add", {"a": "1", "b": 2}),
        await outcome(session, "add", {"a": 1, "b": 2}),
        await outcome(session, "echo", {"message": "before"}),
    ]
    second = await names(session)
    calls.append(await outcome(session, "echo", {"message": "after"}))
    return {"first": first, "second": second, "calls": calls}


async def output(session: ClientSession) -> dict[str, Any]:
    listed = await names(session)
    return {"listed": listed, "calls": [await outcome(session, "weather", {"city": "Paris"})]}


async def everything(session: ClientSession) -> dict[str, Any]:
    listed = await names(session)
    return {"listed": listed, "calls": [await outcome(session, "echo", {"message": "hi"})]}


SCENARIOS = {
    "mixed": mixed,
    "rugpull": rugpull,
    "output": output,
    "everything": everything,
    "http": mixed,
}


async def unrecognized(guard: Guard) -> dict[str, Any]:
    """Items that are no mcp 1.x JSON-RPC message, each way: never handed on."""
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](8)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](8)
    read, write = guard.wrap_streams(to_client_recv, to_server_send)
    note = SessionMessage(
        JSONRPCMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/message"))
    )
    request = SessionMessage(JSONRPCMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")))
    bare = JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/call", params={"name": "x"})
    error = ValueError("a transport error")
    async with to_client_send, to_client_recv, to_server_send, to_server_recv:
        # incoming: a raw dict, a SessionMessage around a bare request (no JSONRPCMessage),
        # a transport error, then a notification: only the last two reach the SDK.
        for item in ({"jsonrpc": "2.0", "method": "x"}, SessionMessage(bare), error, note):
            await to_client_send.send(item)
        received = [await read.receive(), await read.receive()]
        # outgoing: the same bare request as the SDK's item, then a ping: only the ping is written.
        await write.send(SessionMessage(bare))
        await write.send(request)
        written = [to_server_recv.receive_nowait()]
        with anyio.move_on_after(0.1):
            written.append(await to_server_recv.receive())
    return {
        "received": [type(item).__name__ for item in received],
        "received_same": [received[0] is error, received[1] is note],
        "written": [item is request for item in written],
    }


#: A page whose second and third tools intake accepts (it is liberal about `title` and icon
#: `sizes`) and mcp 1.x's `Tool` refuses (title: str; Icon.sizes: list[str] | None, spec
#: 2025-11-25 `Icon.sizes: string[]`).
SDK_PAGE = [
    {"name": "echo", "inputSchema": {"type": "object"}},
    {"name": "titled", "title": 5, "inputSchema": {"type": "object"}},
    {
        "name": "sized",
        "inputSchema": {"type": "object"},
        "icons": [{"src": "https://example.com/a.png", "sizes": "48x48"}],
    },
]


async def scripted_server(receive: Any, send: Any) -> None:
    """Answers initialize, tools/list (SDK_PAGE) and tools/call (`{}`, no content)."""
    async for item in receive:
        message = item.message.root
        if not isinstance(message, JSONRPCRequest):
            continue
        if message.method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"},
            }
        elif message.method == "tools/list":
            result = {"tools": SDK_PAGE}
        else:
            result = {}
        reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        await send.send(SessionMessage(JSONRPCMessage(reply)))


async def sdkmodels(guard: Guard | None) -> dict[str, Any]:
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](8)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](8)
    read, write = (to_client_recv, to_server_send)
    if guard is not None:
        read, write = guard.wrap_streams(read, write)
    report: dict[str, Any] = {}
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(scripted_server, to_server_recv, to_client_send)
        async with ClientSession(read, write) as session:
            await session.initialize()
            try:
                report["listed"] = await names(session)
            except Exception as exc:
                report["listed"] = type(exc).__name__
            try:
                report["call"] = await outcome(session, "echo", {})
            except Exception as exc:
                report["call"] = type(exc).__name__
        tasks.cancel_scope.cancel()
    return report


async def main(argv: list[str]) -> dict[str, Any]:
    scenario, command = argv[0], argv[1:]
    guard = Guard("hostile")
    report: dict[str, Any] = {"mcp": importlib.metadata.version("mcp")}
    if scenario == "unrecognized":
        report.update(await unrecognized(guard))
    elif scenario == "sdkmodels":
        report["guarded"] = await sdkmodels(guard)
        report["unguarded"] = await sdkmodels(None)
    elif scenario == "http":
        async with guard.streamable_http_client(command[0]) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                report.update(await SCENARIOS[scenario](session))
    elif scenario == "everything":
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with guard.stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                report.update(await SCENARIOS[scenario](session))
    else:
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(*guard.wrap_streams(read, write)) as session:
                await session.initialize()
                report.update(await SCENARIOS[scenario](session))
    report["events"] = [
        [e.kind, e.tool, e.reason, e.decision, e.json_path, e.details] for e in guard.events
    ]
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:])), default=str))
