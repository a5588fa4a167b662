"""A Streamable HTTP session to the `--upstream` server through the SDK's client, as a pair of
`SessionMessage` streams: kept only for an upstream the pooled client cannot reach, one that an
environment HTTP proxy applies to (`_pool.direct_available`); everything else goes through
`_session`.

Not a public module. Without the pooled client's handling of a lost session (HTTP 404), of a
refused credential (401 / 403 passed through) and of connection reuse: the SDK's transport
answers those with JSON-RPC errors of its own.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .._settings import HttpUpstream
from ._pool import shown_url, tls_context

logger = logging.getLogger("conduit_mcp.proxy")


def http_client(upstream: HttpUpstream) -> Any:
    """The `httpx2.AsyncClient` for `upstream`: its headers, the SDK's MCP timeouts, and a
    transport that turns a failure to reach the server (refused, reset, timed out) into an
    HTTP 502 whose body is a JSON-RPC error: the SDK's transport then answers the request with
    that error, where it would otherwise drop it and leave the client waiting."""
    import httpx2

    class Unreachable(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport(verify=tls_context())

        async def handle_async_request(self, request: Any) -> Any:
            try:
                return await self._inner.handle_async_request(request)
            except httpx2.TransportError as exc:
                where = shown_url(upstream.url)
                logger.warning("upstream %s unreachable: %s", where, type(exc).__name__)
                message = (
                    f"conduit-mcp proxy: the upstream server {where} could not be reached "
                    f"({type(exc).__name__})"
                )
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}}
                return httpx2.Response(502, json=body, request=request)

        async def aclose(self) -> None:
            await self._inner.aclose()

    timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults for MCP over HTTP
    return httpx2.AsyncClient(
        headers=dict(upstream.headers), timeout=timeout, transport=Unreachable()
    )


@asynccontextmanager
async def sdk_upstream(upstream: HttpUpstream) -> AsyncIterator[tuple[Any, Any]]:
    """Open a Streamable HTTP session to `upstream`; yields `(read, write)` (the SDK's)."""
    from mcp.client.streamable_http import streamable_http_client

    async with http_client(upstream) as http:
        async with streamable_http_client(upstream.url, http_client=http) as (read, write):
            yield read, write
