"""The guard as a FastMCP client transport (`fastmcp` 4.1.6).

Not a public module: use `Guard.fastmcp_transport`.

Seam: `fastmcp.client.transports.ClientTransport.connect_session(transport_options=...)`.
Every FastMCP transport (stdio, Streamable HTTP, SSE, in-memory) builds its session as
`transport_options.session_class(read_stream, write_stream, **session_kwargs)` over the SDK's
stream pair; the wrapper passes a `ClientSession` subclass whose constructor wraps that pair
with the guard, and delegates everything else to the transport it wraps.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

from fastmcp.client.transports import ClientTransport, infer_transport
from fastmcp.client.transports.base import TransportOptions
from fastmcp.client.transports.http import StreamableHttpTransport
from mcp import ClientSession

from ._state import StreamWrapper, Transport


def _kind(transport: ClientTransport) -> Transport:
    return "streamable-http" if isinstance(transport, StreamableHttpTransport) else "stdio"


def _session_class(
    base: type[ClientSession], guard: StreamWrapper, kind: Transport
) -> type[ClientSession]:
    class GuardedClientSession(base):  # type: ignore[valid-type,misc]
        """`base`, reading and writing through the guard."""

        def __init__(
            self, read_stream: Any = None, write_stream: Any = None, *args: Any, **kwargs: Any
        ) -> None:
            if read_stream is not None and write_stream is not None:
                read_stream, write_stream = guard.wrap_streams(
                    read_stream, write_stream, transport=kind
                )
            super().__init__(read_stream, write_stream, *args, **kwargs)

    return GuardedClientSession


class GuardedFastMCPTransport(ClientTransport):
    """A FastMCP `ClientTransport` that is the one it wraps, with the guard on its streams."""

    def __init__(self, guard: StreamWrapper, inner: ClientTransport) -> None:
        self.guard = guard
        self.inner = inner
        self.legacy_only = inner.legacy_only

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
    ) -> AsyncGenerator[ClientSession, None]:
        options = transport_options or TransportOptions()
        guarded = replace(
            options,
            session_class=_session_class(options.session_class, self.guard, _kind(self.inner)),
        )
        async with self.inner.connect_session(
            transport_options=guarded, **session_kwargs
        ) as session:
            yield session

    async def close(self) -> None:
        await self.inner.close()  # type: ignore[no-untyped-call]

    def get_session_id(self) -> str | None:
        return self.inner.get_session_id()

    def _set_auth(self, auth: Any) -> None:
        self.inner._set_auth(auth)

    def __repr__(self) -> str:
        return f"<GuardedFastMCPTransport {self.inner!r} server_id={self.guard.server_id!r}>"


def fastmcp_transport(guard: StreamWrapper, target: Any) -> GuardedFastMCPTransport:
    """Wrap anything `fastmcp.Client(...)` accepts (a transport, URL, script path, server)."""
    return GuardedFastMCPTransport(guard, infer_transport(target))
