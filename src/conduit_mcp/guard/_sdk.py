"""The guard as a transport of the official SDK (`mcp` 2.3.0).

Not a public module: use `Guard.transport`, `Guard.stdio_client` and
`Guard.streamable_http_client`.

Seam: `mcp.client._transport.Transport` — an async context manager that yields the
`(read_stream, write_stream)` pair of `SessionMessage | Exception` / `SessionMessage` that
`mcp.ClientSession` drives through its `JSONRPCDispatcher`. `mcp.Client(server=...)` accepts
any such object; `stdio_client` and `streamable_http_client` are the SDK's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from ._state import StreamWrapper, Transport


@asynccontextmanager
async def guarded_transport(
    guard: StreamWrapper, inner: AbstractAsyncContextManager[Any], transport: Transport
) -> AsyncIterator[tuple[Any, Any]]:
    """Enter `inner`, yield its stream pair wrapped by `guard`."""
    async with inner as streams:
        read, write = streams[0], streams[1]
        yield guard.wrap_streams(read, write, transport=transport)
