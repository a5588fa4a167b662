"""A small pooled HTTP/1.1 client for one Streamable HTTP upstream: keep-alive connections as
asyncio protocols (TLS with the proxy's shared context), responses parsed by httptools (llhttp,
the parser uvicorn uses) as the bytes arrive and read as a stream of body pieces.

Not a public module. Every request the proxy makes to an `--upstream` goes through it: the
session client's POSTs, GET stream and DELETE (`_session`), the stateless 2026-07-28 POSTs
(`_direct`), the protected-resource metadata (`_refused`). It exists for speed and for reuse:
a general client (httpx2 under the SDK's transport) costs several times the proxy's own work
per call, and the SDK's transport opened a connection per request (54 for 53 requests). A
protocol rather than a stream: the event loop hands each read straight to the parser, a
request is one socket write (head and body together), and reading is paused only
when a consumer falls behind (a stream pauses and resumes the socket around every read: two
more system calls per request). It sends only what the caller gives (no redirects, no cookies,
no environment proxies: `direct_available` says when the listener must keep the SDK's path
instead). It runs on asyncio (the listener's uvicorn does too).

Spec: RFC 9112 (HTTP/1.1 message syntax: `content-length` bodies out, `content-length`,
chunked or close-delimited bodies in (a trailer section bounded as a head is and never
merged into it, RFC 9110 section 6.5.1), persistent connections; section 9.3: a server may close
an idle connection, so an idle one it closed or sent anything on is closed before use, never
written to); RFC 9110 section 15.2 (interim 1xx responses are skipped for the final one).
A POST is never retried: a `tools/call` is not idempotent (RFC 9110 section
9.2.2), and a request that failed after it was written may have run. A caller that has read
what it needs (`H1Response.done`) leaves the rest of the body to be read in the background
(at most `LINGER_BYTES` and `LINGER_SECONDS`), so the connection is reused instead of closed.
"""

from __future__ import annotations

import asyncio
import functools
import select
import time
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final, cast

import anyio

#: Seconds to open a connection (TCP and TLS).
CONNECT_TIMEOUT: Final = 30.0
#: Response body bytes held unread before reading from the socket pauses (a consumer slower
#: than its upstream holds no more than this and one read).
MAX_UNREAD: Final = 256 * 1024
#: Request bytes the transport may hold unsent before the sender waits for them to drain.
MAX_UNSENT: Final = 256 * 1024
#: Idle keep-alive connections kept per upstream.
MAX_IDLE: Final = 128
#: Connections open to one upstream at once (in use and idle): past it a request waits for one
#: to come free, so concurrent clients never cost more than this many sockets upstream.
MAX_CONNECTIONS: Final = 256
#: Seconds a request waits for a free connection when all `MAX_CONNECTIONS` are busy; then it
#: fails as an unreachable upstream does (nothing was written, so nothing ran).
POOL_WAIT_TIMEOUT: Final = 30.0
#: The largest response head read (bytes): a longer one fails the request, so an upstream that
#: never ends its head (endless header lines, or one endless value) holds no more memory than
#: this and one read (h11's default bound is 16 KiB; Node's 16 KiB).
MAX_HEAD: Final = 64 * 1024
#: Seconds a connection may sit idle before its socket itself is asked whether the server
#: closed it (sooner, the event loop has already told the protocol of a close that arrived
#: before the loop's last poll).
IDLE_RECHECK: Final = 0.5
#: What is read of a body after its caller is done with it (`H1Response.done`), so the
#: connection can be reused: an event stream's end after its response event. Past either
#: bound the connection is closed.
LINGER_BYTES: Final = 64 * 1024
LINGER_SECONDS: Final = 2.0


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


def shown_url(url: str) -> str:
    """`url` fit for a log line or an error message: scheme, host, port and path, without
    user information and with a query string shown as `?...` (either may hold a credential)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    query = "?..." if parts.query else ""
    return f"{parts.scheme}://{host}{parts.path}{query}"


@functools.cache
def tls_context() -> Any:
    """The TLS client context every upstream connection shares (httpx2's defaults: certifi's
    CA bundle, `SSL_CERT_FILE` / `SSL_CERT_DIR` honoured): built once, since loading the CA
    bundle costs about a megabyte of memory per context and a listener opens an upstream
    client per session."""
    import httpx2

    return httpx2.create_ssl_context()


class H1Response:
    """One response: `status`, `headers` (names lower-cased, the last of repeats), `body()`."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self.status = connection.status
        self.headers = connection.response_headers
        self.finished = False

    def done(self) -> None:
        """The caller has what it needs: leaving the block now drains the rest of the body in
        the background (bounded) and keeps the connection, instead of closing it (which, for
        a request still being answered, is its cancellation)."""
        self.finished = True

    async def read_all(self, limit: int) -> bytes | bytearray | None:
        """The whole body (chunked framing removed), or `None` past `limit` bytes. A body
        that has all arrived (the common case: it came with its head) is taken without
        waiting.

        Raises:
            UpstreamUnreachable: the connection ended before the body did.
        """
        connection = self._connection
        if connection.complete and len(connection.pieces) == 1:
            piece = connection.take()
            return piece if len(piece) <= limit else None
        body = bytearray()
        async for piece in self.body():
            body += piece
            if len(body) > limit:
                return None
        return body

    async def body(self) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive (chunked framing removed).

        Raises:
            UpstreamUnreachable: the connection ended before the body did.
        """
        connection = self._connection
        while True:
            while connection.pieces:
                yield connection.take()
            if connection.complete:
                return
            await connection.read_more()


class _Connection(asyncio.Protocol):
    """One connection and its response parser: the event loop calls `data_received`, which
    feeds httptools, which calls the `on_*` methods; a request waits in `read_more`."""

    def __init__(self) -> None:
        import httptools

        self._parser_type = httptools.HttpResponseParser
        self._error_type = httptools.HttpParserError
        self.transport: asyncio.Transport | None = None
        self.lost = False  # the connection ended
        self.failure: str | None = None  # why the response cannot be read
        self.unasked = False  # the server sent bytes past its response, or while idle
        self.in_use = False  # a request was written and its response is being read
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False
        self.reset()

    def reset(self) -> None:
        self.parser = self._parser_type(self)
        self.status = 0
        self.response_headers: dict[str, str] = {}
        self.head_done = False
        self.interim = False  # the parser is reading a 1xx response
        self.head_read = 0  # bytes fed to the parser before the head was complete
        #: bytes fed since the parser last reported body progress (a chunk or its data):
        #: after the head only a chunked body's framing and trailer section grow it
        self.framing = 0
        self.keep_alive = False
        self.complete = False
        self.pieces: deque[bytes] = deque()
        self.unread = 0  # bytes in `pieces`

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.set_write_buffer_limits(MAX_UNSENT)

    def data_received(self, data: bytes) -> None:
        if not self.in_use or self.complete:
            self.unasked = True  # never reused (RFC 9112 section 9.3)
            return
        if self.failure is not None:
            return
        head = not self.head_done
        self.framing += len(data)
        try:
            self.parser.feed_data(data)
        except self._error_type as exc:
            self.failure = f"unreadable HTTP response: {exc}"
        if head and not self.head_done:
            self.head_read += len(data)
            if self.head_read > MAX_HEAD:
                self.failure = f"a response head longer than {MAX_HEAD} bytes"
        elif self.framing > MAX_HEAD and not self.complete and self.failure is None:
            # Endless trailer fields (or chunk extensions) after the last chunk: bounded as
            # a head is (httptools gathers a field's value until it ends).
            self.failure = f"a chunked body's framing or trailers longer than {MAX_HEAD} bytes"
        if self.failure is not None:
            assert self.transport is not None
            self.transport.close()  # nothing more of this response is read
        elif self.unread > MAX_UNREAD and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        return None  # the transport closes itself; `connection_lost` follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)
        self._wake()

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # httptools callbacks
    def on_message_begin(self) -> None:
        if self.complete:  # a second response in the same read: nobody asked for it
            self.unasked = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.complete or self.head_done:  # a trailer field never rewrites the head
            return
        self.response_headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        if self.complete:
            return
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            # An interim response (100 Continue, 103 Early Hints): the final one follows
            # (RFC 9110 section 15.2); its head counts towards `MAX_HEAD` with the final's.
            self.interim = True
            self.response_headers = {}
            return
        self.status = status
        # Asked here: once the message is complete the parser has moved on to the next one.
        self.keep_alive = self.parser.should_keep_alive()
        self.head_done = True
        self.framing = 0

    def on_chunk_header(self) -> None:
        self.framing = 0

    def on_body(self, body: bytes) -> None:
        if self.complete:
            return
        self.pieces.append(body)
        self.unread += len(body)
        self.framing = 0

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
            return
        self.complete = True

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self) -> bytes:
        """The oldest unread body piece (reading resumes once the consumer caught up)."""
        piece = self.pieces.popleft()
        self.unread -= len(piece)
        if self._paused and self.unread <= MAX_UNREAD // 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return piece

    async def send(self, data: bytes) -> None:
        """Write `data`, waiting while the transport holds more than `MAX_UNSENT` unsent."""
        if self.lost or self.transport is None:
            raise UpstreamUnreachable("the upstream closed the connection")
        self.transport.write(data)
        drained = self._drained
        if drained is not None:
            await drained

    async def read_more(self) -> None:
        """Wait for the next bytes of the response (the parser has consumed them when this
        returns).

        Raises:
            UpstreamUnreachable: the response cannot be read (see `failure`), or the
                connection ended before it did.
        """
        if self.failure is None and not self.lost:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if self.failure is not None:
            raise UpstreamUnreachable(self.failure)
        if self.lost and not self.complete and not self.pieces:
            # A body delimited by the connection's close ends here; anything else is cut.
            if self.head_done and "content-length" not in self.response_headers:
                if "chunked" not in self.response_headers.get("transfer-encoding", ""):
                    self.complete = True
                    return
            raise UpstreamUnreachable("the upstream closed the connection")

    def reusable(self) -> bool:
        return (
            self.complete
            and self.keep_alive
            and not self.pieces
            and not self.lost
            and self.failure is None
            and not self.unasked
        )

    def may_finish(self) -> bool:
        """Whether reading the rest of this response could make the connection reusable."""
        return (
            self.head_done
            and self.keep_alive
            and not self.lost
            and self.failure is None
            and not self.unasked
        )

    def idle_and_open(self) -> bool:
        """Whether this idle keep-alive connection can take a request: the server neither
        closed it nor sent anything on it since its last response. Past `IDLE_RECHECK` the
        socket is asked too (a close may have arrived after the loop's last poll)."""
        if self.lost or self.unasked or self.failure is not None or self.transport is None:
            return False
        if time.monotonic() - self.idle_since < IDLE_RECHECK:
            return True
        sock = self.transport.get_extra_info("socket")
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError, TypeError):
            return False
        return not readable

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.lost = True


def _header_lines(headers: dict[str, str]) -> list[str]:
    """`name: value` lines of `headers` (lower-cased names), without `content-length` and
    `host` (the pool writes its own) nor any name or value holding CR or LF: never a header
    split in two (RFC 9110 section 5.5)."""
    return [
        f"{name}: {value}"
        for name, value in headers.items()
        if name not in ("content-length", "host")
        and "\r" not in value
        and "\n" not in value
        and "\r" not in name
        and "\n" not in name
    ]


class H1Pool:
    """Keep-alive connections to the origin of `url`, POSTing to its path.

    Args:
        url: the upstream endpoint (`http://` or `https://`).
        headers: sent with every request (a request's own headers win); never logged.
        max_connections: connections open at once (in use and idle); a request past it waits
            up to `POOL_WAIT_TIMEOUT` seconds for one to come free, in arrival order.
    """

    def __init__(
        self, url: str, headers: dict[str, str], max_connections: int = MAX_CONNECTIONS
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self._tls = parts.scheme == "https"
        assert parts.hostname is not None
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._authority = parts.netloc.rpartition("@")[2]  # no user info on the wire
        self._headers = {k.lower(): v for k, v in headers.items()}
        self._idle: list[_Connection] = []
        self._max = max(1, max_connections)
        self._count = 0  # connections open (in use and idle), at most `_max`
        #: requests waiting for a connection: each is handed a free one, or `None` for the
        #: right to open one (never while an idle one exists: `_pass_on` hands it over first)
        self._waiters: deque[asyncio.Future[_Connection | None]] = deque()
        #: the request line, `host` and `headers` as `_head` writes them when a request's own
        #: headers name none of `headers` (made once: they never change)
        self._prefix = "\r\n".join(self._lines({}))
        #: connections whose body is being drained after their caller was done (`_linger`)
        self._lingering: set[asyncio.Task[None]] = set()
        #: whether the last drain ended in time (the server ends its streams): a request then
        #: waits for a draining connection rather than opening another one
        self._linger_pays = True

    def moved_to(self, location: str) -> bool:
        """Send to `location` from now on when it is on this pool's origin (a 307 / 308 to
        the same scheme, host and port: RFC 9110 section 15.4.8, the SDK's client follows
        those); returns whether it is."""
        parts = urllib.parse.urlsplit(urllib.parse.urljoin(self.url, location))
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if (parts.scheme == "https") != self._tls or parts.hostname != self._host:
            return False
        if port != self._port or not parts.path:
            return False
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.url = urllib.parse.urlunsplit(parts._replace(fragment=""))
        self._prefix = "\r\n".join(self._lines({}))
        return True

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        ssl: Any = tls_context() if self._tls else None
        try:
            with anyio.fail_after(CONNECT_TIMEOUT):
                _, connection = await loop.create_connection(
                    _Connection,
                    self._host,
                    self._port,
                    ssl=ssl,
                    server_hostname=self._host if ssl is not None else None,
                )
        except (OSError, TimeoutError) as exc:
            raise UpstreamUnreachable(type(exc).__name__) from None
        return connection

    def _head(self, body: bytes, headers: dict[str, str]) -> bytes:
        own = {k.lower(): v for k, v in headers.items()}
        if own.keys() & self._headers.keys():  # a request's own header wins, in its place
            lines = self._lines(own)
        else:  # the same lines in the same order, the constant ones made once
            lines = [self._prefix, *_header_lines(own)] if own else [self._prefix]
        lines.append(f"content-length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    def _lines(self, own: dict[str, str]) -> list[str]:
        lines = [f"POST {self._path} HTTP/1.1", f"host: {self._authority}"]
        lines += _header_lines({**self._headers, **own})
        return lines

    def post(self, body: bytes, headers: dict[str, str]) -> Any:
        """`request("POST", body, headers)` to the upstream's path."""
        return self.request("POST", body, headers)

    @asynccontextmanager
    async def request(
        self, method: str, body: bytes, headers: dict[str, str], path: str | None = None
    ) -> AsyncIterator[H1Response]:
        """Send one request (`body` with a `content-length`, none for an empty GET or DELETE)
        to the upstream's path, or to `path` on its origin; yields the response once its head
        arrived. Leaving the block before the body was read (or on an error, or cancelled)
        closes the connection: for a 2026-07-28 request that is its cancellation. Leaving
        after `H1Response.done` drains the rest in the background and keeps the connection.

        Raises:
            UpstreamUnreachable: no connection, or it failed before the response head.
        """
        if method == "POST" and path is None:
            head = self._head(body, headers)
        else:
            head = self._other_head(method, path or self._path, body, headers)
        connection = await self._checkout()
        connection.in_use = True
        reuse = False
        linger = False
        try:
            try:
                await connection.send(head + body)
                while not connection.head_done:
                    await connection.read_more()
            except (UpstreamUnreachable, OSError) as exc:
                raise UpstreamUnreachable(type(exc).__name__) from None
            response = H1Response(connection)
            yield response
            reuse = connection.reusable()
            linger = not reuse and response.finished and connection.may_finish()
        finally:
            if reuse:
                self._release(connection)
            elif linger:
                task = asyncio.get_running_loop().create_task(self._linger(connection))
                self._lingering.add(task)
                task.add_done_callback(self._lingering.discard)
            else:
                connection.close()
                self._pass_on(None)

    def _release(self, connection: _Connection) -> None:
        connection.reset()
        connection.in_use = False
        connection.idle_since = time.monotonic()
        self._pass_on(connection)

    async def _linger(self, connection: _Connection) -> None:
        """Read what is left of a body its caller is done with (at most `LINGER_BYTES` in
        `LINGER_SECONDS`): the connection is kept when it ends in time, else closed."""
        kept = False
        try:
            with anyio.move_on_after(LINGER_SECONDS):
                read = 0
                while not connection.complete and read <= LINGER_BYTES:
                    while connection.pieces:
                        read += len(connection.take())
                    if not connection.complete:
                        await connection.read_more()
                while connection.pieces:
                    connection.take()
            kept = connection.reusable()
        except UpstreamUnreachable:
            pass
        finally:
            self._linger_pays = kept
            self._lingering.discard(asyncio.current_task())  # type: ignore[arg-type,unused-ignore]
            if kept:
                self._release(connection)
            else:
                connection.close()
                self._pass_on(None)

    def _other_head(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {path} HTTP/1.1", f"host: {self._authority}"]
        lines += _header_lines({**self._headers, **{k.lower(): v for k, v in headers.items()}})
        if body or method == "POST":
            lines.append(f"content-length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    async def _checkout(self) -> _Connection:
        """A connection for one request: an idle one still open, else a new one while fewer
        than `_max` are open, else the first to come free (waiting at most
        `POOL_WAIT_TIMEOUT` seconds).

        Raises:
            UpstreamUnreachable: no connection could be opened, or none came free in time.
        """
        while self._idle:
            candidate = self._idle.pop()
            if candidate.idle_and_open():
                return candidate
            candidate.close()  # the server closed it (or broke the protocol) while idle
            self._count -= 1
        # A connection whose last body is being drained (`_linger`) is usually free within a
        # moment: waited for (one request per such connection) while draining has paid off,
        # instead of opening a second connection beside it.
        lingering = self._linger_pays and len(self._waiters) < len(self._lingering)
        if self._count < self._max and not lingering:
            self._count += 1
        else:
            handed = await self._wait()
            if handed is not None:
                if handed.idle_and_open():
                    return handed
                handed.close()  # its place is this request's
        try:
            return await self._open()
        except BaseException:
            self._pass_on(None)
            raise

    async def _wait(self) -> _Connection | None:
        """Wait for a connection to come free: it, or `None` for the right to open one."""
        waiter: asyncio.Future[_Connection | None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            with anyio.fail_after(POOL_WAIT_TIMEOUT):
                return await waiter
        except BaseException as exc:
            if waiter.done() and not waiter.cancelled():
                self._pass_on(waiter.result())  # handed over as this wait ended: pass it on
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
            if isinstance(exc, TimeoutError):
                raise UpstreamUnreachable(
                    f"all {self._max} connections to the upstream stayed busy for"
                    f" {POOL_WAIT_TIMEOUT:g} s"
                ) from None
            raise

    def _pass_on(self, connection: _Connection | None) -> None:
        """A request is done with its place: hand `connection` (reusable, or `None`: closed)
        to the first waiting request, else keep it idle, else free the place."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        if connection is not None and len(self._idle) < MAX_IDLE:
            self._idle.append(connection)
            return
        if connection is not None:
            connection.close()
        self._count -= 1

    async def aclose(self) -> None:
        """Close the idle connections (and those being drained)."""
        for task in list(self._lingering):
            task.cancel()
        idle, self._idle = self._idle, []
        self._count -= len(idle)
        for connection in idle:
            connection.close()
