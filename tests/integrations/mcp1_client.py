"""langchain-mcp-adapters on mcp 1.x, run in its own venv (it pins mcp < 2, so it cannot share
conduit-mcp's): one session through whatever stdio command argv names (the test passes
`conduit-mcp proxy --server-id hostile -- python hostile_server.py --scenario rugpull`).

Usage: python mcp1_client.py COMMAND [ARG...]
Prints one JSON object: the mcp version, the two listings, and each call's outcome
(`{"ok": text}` or `{"error": code, "data": data}`).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.shared.exceptions import McpError


async def outcome(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await tool.ainvoke(arguments)
    except McpError as exc:
        return {"error": exc.error.code, "data": exc.error.data}
    return {"ok": str(result)}


async def main(argv: list[str]) -> dict[str, Any]:
    client = MultiServerMCPClient(
        {"hostile": {"transport": "stdio", "command": argv[0], "args": argv[1:]}}
    )
    async with client.session("hostile") as session:
        first = {t.name: t for t in await load_mcp_tools(session)}
        invalid = await outcome(first["add"], {"a": "1", "b": 2})
        added = await outcome(first["add"], {"a": 1, "b": 2})
        second = [t.name for t in await load_mcp_tools(session)]
        blocked = await outcome(first["echo"], {"message": "hi"})
    return {
        "mcp": importlib.metadata.version("mcp"),
        "first": sorted(first),
        "second": second,
        "calls": [invalid, added, blocked],
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
