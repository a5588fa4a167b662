"""conduit_mcp.proxy: the guard in front of any MCP client, as a process between client and server.

`conduit-mcp proxy --server-id ID [options] -- COMMAND...` is an MCP server to the client (stdio)
and an MCP client to the server (the child process it starts): every message passes through one
`conduit_mcp.guard.Guard`, and everything the guard does not decide passes unchanged, in order.
`conduit-mcp wrap CONFIG` rewrites a client's configuration so each server runs behind it
(`conduit_mcp.wrap`).

Needs the `proxy` extra (`pip install 'conduit-mcp-client[proxy]'`) to run a proxy.

The rooms: `stdio/` the stdio relay and its framing, `listen/` the HTTP server side (`--listen`),
`upstream/` the HTTP client side (`--upstream`); beside them `_seam.py` (the one coupling to the
guard), `_launch.py` (`run`: a proxy started from the command's settings), `_message.py`
(JSON-RPC messages read and written exactly), `_pump.py`, `_settings.py`, `_logs.py`,
`_metrics.py`.
"""

from __future__ import annotations

from typing import Any

from ._launch import run
from ._settings import GuardSettings, HttpUpstream

__all__ = ["GuardSeam", "GuardSettings", "HttpUpstream", "run", "run_stdio"]


def __getattr__(name: str) -> Any:
    # The running parts import the MCP SDK: loaded on first use, so `conduit-mcp --help` and
    # the config rewriting work without the proxy extra.
    if name == "GuardSeam":
        from ._seam import GuardSeam

        return GuardSeam
    if name == "run_stdio":
        from .stdio._run import run_stdio

        return run_stdio
    raise AttributeError(f"module 'conduit_mcp.proxy' has no attribute {name!r}")
