"""A small MCP server written with the official SDK (mcp 2.x `MCPServer`) whose one tool reports
progress and logs while it runs: the messages related to a request that a proxy must relay on
that request's stream before its response.

conduit-defined test double. `steps(count)` reports progress 1..count of `count` (message
`step N`) and logs `step N` at info level, then returns `done COUNT`. `touch()` sends
`notifications/tools/list_changed` to `subscriptions/listen` streams that asked for it.

Usage: python progress_server.py            (stdio)
       python progress_server.py --http PORT (Streamable HTTP on 127.0.0.1:PORT/mcp)
"""

from __future__ import annotations

import argparse
import warnings

from mcp.server.mcpserver import Context, MCPServer

# Logging is deprecated at 2026-07-28 but still served; the warning would only clutter stderr.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

server = MCPServer("conduit-progress-test")


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress `count` times, logging each step, then answer."""
    for n in range(1, count + 1):
        await ctx.info(f"step {n}")
        await ctx.report_progress(n, count, f"step {n}")
    return f"done {count}"


@server.tool()
async def touch(ctx: Context) -> str:
    """Tell listening clients the tool list changed."""
    await ctx.notify_tools_changed()
    return "touched"


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
