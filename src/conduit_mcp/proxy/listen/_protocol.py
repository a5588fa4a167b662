"""The listener's HTTP protocol: uvicorn's own (httptools), bounded before it reads, a response's
head joined to its body in one socket write.

Not a public module.

Bounds (`_limits.HttpLimits`), held in `data_received` before httptools sees the bytes past
them (httptools itself keeps a header value of any size, growing it piece by piece): a request
head larger than `max_head_bytes` is answered 431 once the bound is reached, never read
further; a head not complete `head_timeout` seconds after the connection opened (or after the
head's first byte, on a kept-alive connection) is answered 408 (a connection that sent nothing
is just closed); a `Content-Length` above `max_body_bytes` is answered 413 before the request
reaches the application, a chunked body once it passes the bound; past
`max_connections_per_address` connections from one address a new one is answered 429
(`Retry-After: 1`). Each refusal is a whole response with `Connection: close` and a JSON-RPC
error naming the bound (`data.reason`); then the connection is read for `LINGER` seconds, what
comes dropped, and closed: nothing of it is kept. A head that begins in the same read as the
end of a pipelined request before it is counted as that read's bytes but the body bytes
parsed (an upper bound: such a head is refused early, never late). Idle kept-alive connections
close after uvicorn's `timeout_keep_alive` (`keep_alive_timeout`).

Writes: uvicorn writes a response's head when the application sends `http.response.start` and
its body at each `http.response.body`: a JSON answer is two socket writes, each one a system
call that on a loopback connection also runs the receiver's side of TCP and wakes it. Here a
head that announces a body (`content-length` above 0) is held until the body's first write
and leaves with it in one write (one wake-up of the client); the next write, the response's
end (a HEAD request's head is all there is), `close` and `write_eof` all send it. A body piece
of `JOIN_BELOW` bytes or more goes out after the head, not copied onto it. A head without
`content-length` (an event stream, chunked) is written at once, as uvicorn does.

Spec: RFC 9112 (HTTP/1.1 message syntax): the bytes on the wire are exactly uvicorn's, in order;
the refusals: see `_limits`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final, cast

from ._budget import _network
from ._limits import (
    LINGER,
    Bound,
    ConnectionCount,
    HttpLimits,
    body_too_large,
    head_timeout,
    head_too_large,
    refusal_bytes,
    too_many_connections,
)

logger = logging.getLogger("conduit_mcp.proxy")

#: The methods of uvicorn's protocol `http_protocol` overrides (or calls).
_OVERRIDDEN: Final = (
    "connection_made",
    "connection_lost",
    "data_received",
    "on_message_begin",
    "on_url",
    "on_header",
    "on_headers_complete",
    "on_body",
    "on_message_complete",
    "on_response_complete",
)
#: Seconds between two warnings of refused connections with one reason.
QUIET_WINDOW: Final = 1.0
#: A body piece at least this large is written after the head rather than joined to it.
JOIN_BELOW: Final = 64 * 1024


class JoinedWrites:
    """A transport that holds a response head announcing a body until that body's first write.

    Args:
        inner: the connection's transport (everything but `write`, `writelines`, `close`,
            `write_eof` and `abort` is `inner`'s own).
    """

    def __init__(self, inner: asyncio.Transport) -> None:
        self._inner = inner
        self._head: bytes | None = None
        # Asked on every request (uvicorn, the bounds): found here, not through `__getattr__`
        # (reached only after the usual lookup failed and formatted an AttributeError).
        self.is_closing = inner.is_closing

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Write `data`: joined after a held head, or held when it is a head announcing a body
        (uvicorn writes a head alone, names lower-cased, ending with a blank line)."""
        head = self._head
        if head is not None:
            self._head = None
            if len(data) < JOIN_BELOW:
                self._inner.write(head + data)
                return
            self._inner.write(head)
        elif _announces_body(data):
            self._head = bytes(data)
            return
        self._inner.write(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Write a held head (the response ended without a body write)."""
        head, self._head = self._head, None
        if head is not None:
            self._inner.write(head)

    def write_eof(self) -> None:
        self.flush()
        self._inner.write_eof()

    def close(self) -> None:
        """Write a held head, then close (as a transport's `close`: buffered data is sent)."""
        self.flush()
        self._inner.close()

    def abort(self) -> None:
        self._head = None
        self._inner.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _announces_body(data: bytes | bytearray | memoryview) -> bool:
    if data[:5] != b"HTTP/" or data[-4:] != b"\r\n\r\n":
        return False
    index = bytes(data).find(b"\r\ncontent-length: ")
    return index != -1 and data[index + 18 : index + 21] != b"0\r\n"


def http_protocol(
    limits: HttpLimits | None = None, on_bound: Callable[[Bound], object] | None = None
) -> Any:
    """uvicorn's httptools protocol class, bounded and writing through `JoinedWrites` (for
    `uvicorn.Config(http=...)`), with its own table of connections per address; or `"h11"`
    when httptools is not installed, or when uvicorn's protocol has no method this overrides
    (uvicorn's h11 protocol: writes unjoined, only the head's size bounded, by `serve`).

    Args:
        limits: the bounds (`_limits.HttpLimits`; default: its defaults).
        on_bound: called with the `Bound` of each connection refused past one (a metric).
    """
    bounds = limits if limits is not None else HttpLimits()
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return "h11"
    if not all(callable(getattr(HttpToolsProtocol, name, None)) for name in _OVERRIDDEN):
        return "h11"  # a uvicorn whose protocol changed shape: its own, writes unjoined
    count = ConnectionCount(bounds.max_connections_per_address)
    quiet = _Quiet()

    class ListenerProtocol(HttpToolsProtocol):
        """uvicorn's `HttpToolsProtocol` writing through `JoinedWrites`, bounded by `limits`
        before the parser keeps a byte past them (see the module docstring)."""

        #: connections open per address, shared by every connection of this listener
        per_address = count

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._address: str | None = None  # counted in `per_address`
            self._head = 0  # bytes of the head being read (an upper bound)
            self._in_head = True  # the next bytes are a head's
            self._began = False  # a head began and has not ended
            self._heads = 0  # heads completed on this connection
            self._body = 0  # bytes of the body being read
            self._fed_body = 0  # body bytes of the piece being parsed
            self._completed = False  # a request ended in the piece being parsed
            self._timer: asyncio.TimerHandle | None = None
            #: when the head being read began (`loop.time()`), `None` between heads: the
            #: timer, armed once, checks it when it fires (no timer armed and cancelled per
            #: request on a kept-alive connection)
            self._head_since: float | None = None
            self._refused: Bound | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(cast(asyncio.Transport, JoinedWrites(transport)))
            client = self.client
            address = f"peer:{_network(client[0])}" if client else "peer:unknown"
            if not count.add(address):
                self._refuse(too_many_connections(bounds), address)
                return
            self._address = address
            self._head_since = self.loop.time()  # the first head: from the connection's start
            self._arm(bounds.head_timeout, self._head_timed_out)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._address is not None:
                count.remove(self._address)
                self._address = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused is not None:
                return  # a refused connection lingers: what it sends is dropped
            view = memoryview(data)
            while True:
                room = bounds.max_head_bytes - self._head
                rest: memoryview | None = None
                if self._in_head and len(view) > room:
                    view, rest = view[:room], view[room:]
                heads = self._heads
                self._feed(view)
                if rest is None or self._refused is not None or self.transport.is_closing():
                    return
                if heads == self._heads:  # the head did not end within the bound
                    self._refuse(head_too_large(bounds))
                    return
                view = rest

        def _feed(self, piece: memoryview) -> None:
            """Parse `piece`; a head that begins in it after a request ended there is counted
            as all of `piece` but the body bytes parsed (never fewer bytes than it has)."""
            self._fed_body = 0
            self._completed = False
            if self._in_head:
                self._head += len(piece)
            super().data_received(piece)  # type: ignore[arg-type]  # httptools reads any buffer
            if self._refused is None and self._completed and self._began:
                self._head = len(piece) - self._fed_body
                if self._head > bounds.max_head_bytes:
                    self._refuse(head_too_large(bounds))

        def on_message_begin(self) -> None:
            if self._refused is not None:
                return
            self._began = True
            self._body = 0
            if self._head_since is None:  # a kept-alive connection: from the head's first byte
                self._head_since = self.loop.time()
                if self._timer is None:
                    self._arm(bounds.head_timeout, self._head_timed_out)
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            if self._refused is None:
                super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._refused is None:
                super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if self._refused is not None:
                return
            self._heads += 1
            self._in_head = self._began = False
            self._head_since = None  # the timer, when it fires, finds no head pending
            if _content_length(self.headers) > bounds.max_body_bytes:
                self._refuse(body_too_large(bounds))  # before the application starts
                return
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if self._refused is not None:
                return
            self._fed_body += len(body)
            self._body += len(body)
            if self._body > bounds.max_body_bytes:  # a chunked body
                self._refuse(body_too_large(bounds), own_body=not self.pipeline)
                return
            super().on_body(body)

        def on_message_complete(self) -> None:
            if self._refused is not None:
                return
            self._completed = self._in_head = True
            self._head = 0
            super().on_message_complete()

        def on_response_complete(self) -> None:
            cast(JoinedWrites, self.transport).flush()  # a response without a body write (HEAD)
            super().on_response_complete()

        def _arm(self, seconds: float, callback: Callable[[], None]) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, callback)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _head_timed_out(self) -> None:
            self._timer = None
            since = self._head_since
            if since is None or self._refused is not None or self.transport.is_closing():
                return  # no head pending (an idle kept-alive connection is uvicorn's)
            left = since + bounds.head_timeout - self.loop.time()
            if left > 0:  # a later head than the one this timer was armed for
                self._arm(left, self._head_timed_out)
                return
            if not self._began:  # nothing sent since the connection opened: no request
                self.transport.close()
                return
            self._refuse(head_timeout(bounds))

        def _refuse(self, bound: Bound, address: str | None = None, own_body: bool = False) -> None:
            """Answer `bound`'s status and close (after `LINGER` seconds of reading and
            dropping, so that the client reads the answer); a response already started, or
            one a pipelined request waits behind, cannot be replaced: the connection closes.
            `own_body`: the body of the request being answered passed the bound."""
            self._refused = bound
            self._disarm()
            shown = (address or self._address or "peer:unknown").partition(":")[2]
            left_out = quiet.shown(bound.reason, self.loop.time())
            if left_out is not None:
                logger.warning(
                    "connection refused (%s): %s (peer %s)%s",
                    bound.reason,
                    bound.message,
                    shown,
                    f" ({left_out} more like it not shown)" if left_out else "",
                )
            if on_bound is not None:
                on_bound(bound)
            cycle = self.cycle
            transport = self.transport
            if self.pipeline or (
                cycle is not None
                and not cycle.response_complete
                and (cycle.response_started or not own_body)
            ):
                if cycle is not None:
                    cycle.disconnected = True
                    cycle.message_event.set()
                transport.close()
                return
            if cycle is not None and not cycle.response_complete:  # its body was too large
                cycle.disconnected = True  # the application's receive says the client left
                cycle.message_event.set()
            transport.write(refusal_bytes(bound, self.server_state.default_headers))
            if transport.can_write_eof():
                transport.write_eof()
            if self.flow is not None:
                self.flow.resume_reading()
            self._timer = self.loop.call_later(LINGER, transport.abort)

    return ListenerProtocol


class _Quiet:
    """At most one warning a reason each `QUIET_WINDOW` seconds (a flood of refused
    connections is one line a second, not one a connection); the next one says how many were
    left out."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[float, int]] = {}  # reason -> (shown at, left out since)

    def shown(self, reason: str, now: float) -> int | None:
        """`None`: leave this one out; else show it, with how many were left out before."""
        last = self._last.get(reason)
        if last is not None and now - last[0] < QUIET_WINDOW:
            self._last[reason] = (last[0], last[1] + 1)
            return None
        self._last[reason] = (now, 0)
        return last[1] if last is not None else 0


def _content_length(headers: list[tuple[bytes, bytes]]) -> int:
    """The request's `Content-Length` (0 without one; httptools refused a malformed one)."""
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0
