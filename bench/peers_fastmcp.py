"""FastMCP's proxy as bench/peers.py runs it: `fastmcp.server.create_proxy` on a stdio server or
a Streamable HTTP URL, served on stdio or over Streamable HTTP.

FastMCP's recommended way to build a proxy (`create_proxy(target)`, its defaults: the backend
client made by FastMCP, the server's own settings), run with `FastMCP.run`. It runs in its own
venv (`.cache/bench-peers/venv-fastmcp`, bench/peer-versions/fastmcp.txt), not the project's.

Usage:
    python bench/peers_fastmcp.py -- COMMAND...                 # stdio to a stdio server
    python bench/peers_fastmcp.py --upstream URL                # stdio to a Streamable HTTP server
    python bench/peers_fastmcp.py --listen PORT -- COMMAND...   # Streamable HTTP at /mcp
"""

from __future__ import annotations

import argparse
from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring. Returns when the proxy's transport closes."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--listen", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1")
    parser.add_argument("--upstream", metavar="URL", help="a Streamable HTTP server")
    parser.add_argument("command", nargs="*", help="the stdio server's command, after --")
    args = parser.parse_args(argv)
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    target: Any = args.upstream
    if target is None:
        target = StdioTransport(command=args.command[0], args=args.command[1:])
    proxy = create_proxy(target, name="bench-fastmcp-proxy")
    if args.listen is None:
        proxy.run(transport="stdio", show_banner=False, log_level="WARNING")
    else:
        proxy.run(
            transport="http",
            show_banner=False,
            host="127.0.0.1",
            port=args.listen,
            log_level="WARNING",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
