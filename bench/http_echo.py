"""A raw Streamable HTTP MCP echo server for the HTTP proxy bench (bench/proxy_http.py): the
upstream both the direct and the proxied client talk to, as cheap as a server can be so the
rows measure the proxy, not the server.

Raw ASGI on uvicorn with orjson, no SDK. Serves both wires of MCP over Streamable HTTP
(spec 2025-11-25 and 2026-07-28 basic/transports): `initialize` answered with an
`Mcp-Session-Id`, notifications with 202, and 2026-07-28 requests (their version in
`params._meta`, no session) answered alike; every answer is one `application/json` object.
Tools: `echo(message)` returns the message as text; `blob(size)` returns a text block of
`size` bytes (for the large-result row).

It counts what reaches it: `GET /bench/stats` answers `{"connections": N, "requests": M}`, the
TCP connections that carried a request (told apart by the client's address and port) and the
POSTs since it started (bench/peers.py: how many connections a proxy opens to its upstream).
The stats requests themselves are not counted.

Usage: python bench/http_echo.py PORT [KEEP_ALIVE_SECONDS]   (uvicorn's idle keep-alive, 5 s)
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

import orjson

MODERN = "2026-07-28"
TOOLS = [
    {
        "name": "echo",
        "description": "Echo the message.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "blob",
        "description": "A text block of `size` bytes.",
        "inputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer", "minimum": 0}},
            "required": ["size"],
        },
    },
]
#: The client addresses (host, port) that have sent a request, and the POSTs: `GET /bench/stats`.
SEEN: set[tuple[str, int]] = set()
POSTS = [0]


def answer(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The result for one request, and whether it opens a session."""
    method = request.get("method")
    params = request.get("params") or {}
    modern = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion") == MODERN
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-echo", "version": "1"},
        }
        return result, True
    if method == "tools/list":
        result = {"tools": TOOLS}
        if modern:
            result.update({"ttlMs": 0, "cacheScope": "private"})
    elif method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        text = (
            "x" * int(arguments.get("size", 0)) if name == "blob" else str(arguments.get("message"))
        )
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "server/discover":
        result = {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-echo", "version": "1"},
        }
    else:
        result = {}
    if modern:
        result["resultType"] = "complete"
    return result, False


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["method"] == "GET" and scope["path"] == "/bench/stats":
        stats = orjson.dumps({"connections": len(SEEN), "requests": POSTS[0]})
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": stats})
        return
    client = scope.get("client")
    if client is not None:
        SEEN.add((client[0], client[1]))
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    POSTS[0] += 1
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    request = orjson.loads(b"".join(chunks))
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    result, opens = answer(request)
    body = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if opens:
        headers.append((b"mcp-session-id", secrets.token_hex(16).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    import uvicorn

    keep_alive = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
        timeout_keep_alive=keep_alive,
    )


if __name__ == "__main__":
    main()
