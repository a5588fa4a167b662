"""A stateless 2026-07-28 client of `conduit-mcp proxy --listen` in front of a server process that
speaks only 2025-11-25 and before (`@modelcontextprotocol/server-everything`, TypeScript SDK
1.32.2: `SUPPORTED_PROTOCOL_VERSIONS` ends at 2025-11-25).

Measured before (the bench helper's report): every request went to the server without an
`initialize`, the server answered with results of its own version (no `resultType`, no
`ttlMs`), and the mcp 2.x client refused each ("resultType ... Field required").

Spec (MCP 2026-07-28): servers MUST implement `server/discover`; a request at a version the
server does not support is answered UNSUPPORTED_PROTOCOL_VERSION (-32022, HTTP 400, with
`data.requested` and `data.supported`); a client that is not modern-only falls back to the
`initialize` handshake when `supported` names handshake versions (the SDK's `mode="auto"`).
2025-11-25 basic/lifecycle: the client SHOULD NOT send requests other than pings before the
server has answered `initialize`, so the proxy cannot pass stateless requests on. The proxy
asks the server process `server/discover` once and refuses at the front.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.live

_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_a_stateless_client_is_told_to_start_a_session_and_an_auto_client_gets_one(
    server_everything_argv: list[str], listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """A 2026-07-28 request is answered -32022 with `requested` and the handshake versions
    the listener serves in a session (HTTP 400); nothing reaches the server unanswered. The
    SDK's client in `mode="auto"` then falls back to a session and lists the tools; in
    `mode="2026-07-28"` (modern only) it fails with that error, never with an unreadable
    result. The proxy logs why once."""
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    from .test_listen import _post

    url = listening_proxy("legacy", "--", *server_everything_argv)
    request = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": _META}}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    status, body = _post(url, request, headers)
    assert status == 400
    assert body["id"] == 5 and body["error"]["code"] == -32022
    assert body["error"]["data"]["requested"] == "2026-07-28"
    assert "2025-11-25" in body["error"]["data"]["supported"]
    assert "2026-07-28" not in body["error"]["data"]["supported"]

    async def listing(mode: str) -> Any:
        http = httpx2.AsyncClient()
        async with http, mcp.Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            return [tool.name for tool in (await c.list_tools()).tools]

    names = anyio.run(listing, "auto")
    assert "echo" in names
    with pytest.raises(BaseException) as failed:
        anyio.run(listing, "2026-07-28")
    errors: list[BaseException] = [failed.value]
    while getattr(errors[-1], "exceptions", None):  # an exception group (3.10: no builtin)
        errors.append(errors[-1].exceptions[0])  # type: ignore[attr-defined]
    assert isinstance(errors[-1], MCPError) and errors[-1].error.code == -32022
    logged = [
        json.loads(line)["message"]
        for p in tmp_path.glob("proxy-*.jsonl")
        for line in p.read_text().splitlines()
    ]
    assert sum("speaks no 2026-07-28" in m for m in logged) == 1
