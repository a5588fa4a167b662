"""An MCP server written with the official Python SDK (mcp 2.3.0 `MCPServer`) over Streamable
HTTP on loopback, which records the HTTP headers of every request it receives.

conduit-defined test double for the proxy's HTTP sides. Tools: add (two integers), forecast
(structured output), region (an argument annotated `x-mcp-header: Region`, spec 2026-07-28
basic/transports "Custom Headers from Tool Parameters"). Each request's method, path and the
headers named in HEADERS are appended, one JSON line each, to the file named by --log.

Usage: python http_server.py --port PORT --log PATH
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


def logged(app: Any, log: str) -> Any:
    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            entry = {"method": scope["method"], "path": scope["path"]}
            entry["headers"] = {k: headers[k] for k in HEADERS if k in headers}
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        await app(scope, receive, send)

    return middleware


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    app = logged(server.streamable_http_app(), args.log)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
