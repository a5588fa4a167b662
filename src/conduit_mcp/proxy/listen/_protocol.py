"""The listener's HTTP protocol: uvicorn's own (httptools), a response's head joined to its body
in one socket write.

Not a public module. uvicorn writes a response's head when the application sends
`http.response.start` and its body at each `http.response.body`: a JSON answer is two socket
writes, each one a system call that on a loopback connection also runs the receiver's side of
TCP and wakes it. Here a head that announces a body (`content-length` above 0) is held until
the body's first write and leaves with it in one write (one wake-up of the client); the next
write, the response's end (a HEAD request's head is all there is), `close` and `write_eof` all
send it. A body piece of `JOIN_BELOW` bytes or more goes out after the head, not copied onto it.
A head without `content-length` (an event stream, chunked) is written at once, as uvicorn does.

Spec: RFC 9112 (HTTP/1.1 message syntax): the bytes on the wire are exactly uvicorn's, in order.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, cast

#: The methods of uvicorn's protocol `http_protocol` overrides.
_OVERRIDDEN: Final = ("connection_made", "on_response_complete")
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


def http_protocol() -> Any:
    """uvicorn's httptools protocol class with `JoinedWrites` on each connection (for
    `uvicorn.Config(http=...)`), or `"auto"` when httptools is not installed (uvicorn's h11
    protocol, writes unjoined), or when uvicorn's protocol has no method this overrides."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return "auto"
    if not all(callable(getattr(HttpToolsProtocol, name, None)) for name in _OVERRIDDEN):
        return "auto"  # a uvicorn whose protocol changed shape: its own, writes unjoined

    class JoinedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's `HttpToolsProtocol` writing through `JoinedWrites`."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(cast(asyncio.Transport, JoinedWrites(transport)))

        def on_response_complete(self) -> None:
            cast(JoinedWrites, self.transport).flush()  # a response without a body write (HEAD)
            super().on_response_complete()

    return JoinedHttpToolsProtocol
