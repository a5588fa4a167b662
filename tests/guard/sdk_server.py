"""A small MCP server written with the official SDK (mcp 2.3.0 `MCPServer`).

conduit-defined test double: two honest tools, one with structured output (an outputSchema the
SDK derives from the return annotation). The guard must be invisible here.

Usage: python sdk_server.py            (stdio)
       python sdk_server.py --http PORT (Streamable HTTP on 127.0.0.1:PORT/mcp)
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("conduit-sdk-test")


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    args = parser.parse_args()
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", port=args.http, json_response=False)


if __name__ == "__main__":
    main()
