"""An MCP server written with the official Python SDK (mcp 2.3.0 `MCPServer`) over Streamable
HTTP on loopback, which records the HTTP headers of every request it receives.

conduit-defined test double for the proxy's HTTP sides. Tools: add (two integers), forecast
(structured output), region (an argument annotated `x-mcp-header: Region`, spec 2026-07-28
basic/transports "Custom Headers from Tool Parameters"). Each request's method, path, the
headers named in HEADERS, the client's port (which TCP connection carried it) and, for a POST,
the JSON-RPC `rpc` method and `id` of its body are appended, one JSON line each, to the file
named by --log.

With `--token T`, a request without `Authorization: Bearer T` is answered 401 with the
`WWW-Authenticate` challenge of handed case 86 (RFC 6750 parameters and the MCP
authorization spec's `resource_metadata`), and `/.well-known/oauth-protected-resource/mcp`
serves the resource's metadata (RFC 9728): what an upstream that wants OAuth does.

Usage: python http_server.py --port PORT --log PATH [--token T]
"""

from __future__ import annotations

import argparse
import json
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

HEADERS = (
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-param-region",
    "x-team",
    "traceparent",
)

server = MCPServer("conduit-proxy-http-test")


class Forecast(BaseModel):
    temperature: float
    conditions: str


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def forecast(city: str) -> Forecast:
    """A forecast for a city."""
    return Forecast(temperature=21.5, conditions=f"clear over {city}")


@server.tool()
def region(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    """Echo the region (routed by the Mcp-Param-Region header)."""
    return f"region {region}"


def challenge(port: int) -> str:
    """The challenge of handed case 86, naming this server's metadata URL."""
    return (
        'Bearer realm="MCP Server", scope="openid files:read", error="invalid_token", '
        'error_description="token missing", '
        f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
    )


def metadata(port: int) -> dict[str, Any]:
    """RFC 9728 section 2: the protected resource's metadata."""
    return {
        "resource": f"http://127.0.0.1:{port}/mcp",
        "authorization_servers": [f"http://127.0.0.1:{port}/auth"],
        "scopes_supported": ["openid", "files:read"],
        "bearer_methods_supported": ["header"],
    }


def logged(app: Any, log: str, port: int, token: str | None) -> Any:
    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        entry: dict[str, Any] = {"method": scope["method"], "path": scope["path"]}
        entry["headers"] = {k: headers[k] for k in HEADERS if k in headers}
        entry["client_port"] = (scope.get("client") or ("", 0))[1]
        body = b""
        if scope["method"] == "POST":
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            try:
                value = json.loads(body)
                entry["rpc"], entry["id"] = value.get("method"), value.get("id")
            except (ValueError, AttributeError):
                pass
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        if scope["path"] == "/.well-known/oauth-protected-resource/mcp":
            await _send(send, 200, json.dumps(metadata(port)).encode(), [])
            return
        if token is not None and headers.get("authorization") != f"Bearer {token}":
            refusal = b'{"error": "invalid_token"}'
            extra = [(b"www-authenticate", challenge(port).encode())]
            await _send(send, 401, refusal, extra)
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return middleware


async def _send(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head + extra})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--token")
    args = parser.parse_args()
    app = logged(server.streamable_http_app(), args.log, args.port, args.token)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
