"""The same two tools as bench/http_echo.py (`echo(message)`, `blob(size)`) served by the
official Python SDK (mcp 2.x `MCPServer`) over Streamable HTTP with JSON responses: the
upstream of the HTTP proxy rows' "SDK server" variant, a server as users run them.

Usage: python bench/http_sdk_echo.py PORT
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-sdk-echo", log_level="WARNING")


@server.tool()
def echo(message: str) -> str:
    """Echo the message."""
    return message


@server.tool()
def blob(size: int) -> str:
    """A text block of `size` bytes."""
    return "x" * size


def main() -> None:
    server.run("streamable-http", port=int(sys.argv[1]), json_response=True)


if __name__ == "__main__":
    main()
