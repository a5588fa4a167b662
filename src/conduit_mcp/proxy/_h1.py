"""A small pooled HTTP/1.1 client for POSTs to one Streamable HTTP upstream: keep-alive
connections on anyio sockets (TLS with the proxy's shared context), responses parsed by
httptools (llhttp, the parser uvicorn uses) and read as a stream of body pieces.

Not a public module. It exists for speed: a stateless 2026-07-28 request is one POST, and a
general client (httpx2 under the SDK's transport) costs several times the proxy's own work
per call. It sends only what the caller gives (no redirects, no cookies, no environment
proxies: `direct_available` says when the listener must keep the SDK's path instead).

Spec: RFC 9112 (HTTP/1.1 message syntax: `content-length` bodies out, `content-length`,
chunked or close-delimited bodies in, persistent connections; section 9.3: a server may close
an idle connection, so an idle one it sent anything on is closed before use, never written
to). A POST is never retried: a `tools/call` is not idempotent (RFC 9110 section 9.2.2), and
a request that failed after it was written may have run.
"""

from __future__ import annotations

import select
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
import anyio.abc

#: Seconds to open a connection (TCP and TLS).
CONNECT_TIMEOUT: Final = 30.0
#: Bytes read from the socket at once.
READ_SIZE: Final = 256 * 1024
#: Idle keep-alive connections kept per upstream.
MAX_IDLE: Final = 128
#: The largest response head read (bytes): a longer one fails the request, so an upstream that
#: never ends its head (endless header lines, or one endless value) holds no more memory than
#: this and one read (h11's default bound is 16 KiB; Node's 16 KiB).
MAX_HEAD: Final = 64 * 1024


class UpstreamUnreachable(Exception):
    """The upstream could not be reached, or the connection failed before a response."""


def direct_available(url: str) -> bool:
    """Whether `url` can be served by `H1Pool`: `http` or `https`, httptools installed, and no
    environment proxy applies to it (httpx2 honours those; this client does not)."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return False
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if parts.scheme in proxies or "all" in proxies:
        return bool(urllib.request.proxy_bypass(parts.hostname))
    return True


class H1Response:
    """One response: `status`, `headers` (names lower-cased, the last of repeats), `body()`."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self.status = connection.status
        self.headers = connection.response_headers

    async def body(self) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive (chunked framing removed).

        Raises:
            UpstreamUnreachable: the connection ended before the body did.
        """
        connection = self._connection
        while True:
            while connection.pieces:
                yield connection.pieces.popleft()
            if connection.complete:
                return
            await connection.read_more()


class _Connection:
    """One socket and its response parser (httptools calls the `on_*` methods)."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        import httptools

        self.stream = stream
        self._parser_type = httptools.HttpResponseParser
        self._error_type = httptools.HttpParserError
        self.reset()

    def reset(self) -> None:
        self.parser = self._parser_type(self)
        self.status = 0
        self.response_headers: dict[str, str] = {}
        self.head_done = False
        self.head_read = 0  # bytes fed to the parser before the head was complete
        self.keep_alive = False
        self.complete = False
        self.pieces: deque[bytes] = deque()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.response_headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        # Asked here: once the message is complete the parser has moved on to the next one.
        self.keep_alive = self.parser.should_keep_alive()
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        self.complete = True

    async def read_more(self) -> None:
        try:
            data = await self.stream.receive(READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            data = b""
        if not data:
            # A body delimited by the connection's close ends here; anything else is cut.
            if self.head_done and "content-length" not in self.response_headers:
                if "chunked" not in self.response_headers.get("transfer-encoding", ""):
                    self.complete = True
                    return
            raise UpstreamUnreachable("the upstream closed the connection")
        head = not self.head_done
        try:
            self.parser.feed_data(data)
        except self._error_type as exc:
            raise UpstreamUnreachable(f"unreadable HTTP response: {exc}") from None
        if head and not self.head_done:
            self.head_read += len(data)
            if self.head_read > MAX_HEAD:
                raise UpstreamUnreachable(f"a response head longer than {MAX_HEAD} bytes")

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.pieces


class H1Pool:
    """Keep-alive connections to the origin of `url`, POSTing to its path.

    Args:
        url: the upstream endpoint (`http://` or `https://`).
        headers: sent with every request (a request's own headers win); never logged.
    """

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        self._tls = parts.scheme == "https"
        assert parts.hostname is not None
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._authority = parts.netloc.rpartition("@")[2]  # no user info on the wire
        self._headers = {k.lower(): v for k, v in headers.items()}
        self._idle: list[_Connection] = []

    async def _open(self) -> _Connection:
        from ._upstreams import _tls_context

        try:
            with anyio.fail_after(CONNECT_TIMEOUT):
                stream: anyio.abc.ByteStream
                if self._tls:
                    stream = await anyio.connect_tcp(
                        self._host,
                        self._port,
                        ssl_context=_tls_context(),
                        tls_standard_compatible=False,
                    )
                else:
                    stream = await anyio.connect_tcp(self._host, self._port)
        except (OSError, TimeoutError, anyio.BrokenResourceError) as exc:
            raise UpstreamUnreachable(type(exc).__name__) from None
        return _Connection(stream)

    def _head(self, body: bytes, headers: dict[str, str]) -> bytes:
        merged = {**self._headers, **{k.lower(): v for k, v in headers.items()}}
        merged.pop("content-length", None)
        merged.pop("host", None)
        lines = [f"POST {self._path} HTTP/1.1", f"host: {self._authority}"]
        for name, value in merged.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                continue  # never a header split in two (RFC 9110 section 5.5)
            lines.append(f"{name}: {value}")
        lines.append(f"content-length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    @asynccontextmanager
    async def post(self, body: bytes, headers: dict[str, str]) -> AsyncIterator[H1Response]:
        """POST `body` with `headers`; yields the response once its head arrived. Leaving the
        block before the body was read (or on an error, or cancelled) closes the connection:
        for a 2026-07-28 request that is its cancellation.

        Raises:
            UpstreamUnreachable: no connection, or it failed before the response head.
        """
        head = self._head(body, headers)
        connection: _Connection | None = None
        while self._idle and connection is None:
            candidate = self._idle.pop()
            if _idle_and_open(candidate):
                connection = candidate
            else:  # the server closed it (or broke the protocol) while it was idle
                await _close(candidate)
        if connection is None:
            connection = await self._open()
        try:
            await connection.stream.send(head + body if len(body) < 65536 else head)
            if len(body) >= 65536:
                await connection.stream.send(body)
            while not connection.head_done:
                await connection.read_more()
        except (UpstreamUnreachable, OSError, anyio.BrokenResourceError) as exc:
            await _close(connection)
            raise UpstreamUnreachable(type(exc).__name__) from None
        except BaseException:
            await _close(connection)
            raise
        try:
            yield H1Response(connection)
        except BaseException:
            await _close(connection)
            raise
        if connection.reusable() and len(self._idle) < MAX_IDLE:
            connection.reset()
            self._idle.append(connection)
        else:
            await _close(connection)

    async def aclose(self) -> None:
        """Close the idle connections."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await _close(connection)


def _idle_and_open(connection: _Connection) -> bool:
    """Whether an idle keep-alive connection can take a request: the server sent nothing on it
    since its last response (a readable socket is its close, or bytes nobody asked for)."""
    try:
        sock = connection.stream.extra(anyio.abc.SocketAttribute.raw_socket)
        readable, _, _ = select.select([sock], [], [], 0)
    except (anyio.TypedAttributeLookupError, OSError, ValueError):
        return False
    return not readable


async def _close(connection: _Connection) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await connection.stream.aclose()
        except (OSError, anyio.BrokenResourceError):
            pass
