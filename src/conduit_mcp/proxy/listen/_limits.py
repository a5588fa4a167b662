"""The listener's bounds on what a client sends before the application sees a request: the size
of a request head and the time it may take to arrive, the size of a body, connections per
address, and how long an idle kept-alive connection stays.

Not a public module. The bounds are enforced in the listener's HTTP protocol (`_protocol`),
before a byte of the head is kept past them and before any body is read; what they answer is
written here.

Spec: RFC 9110 section 15.5.9 (408 Request Timeout), 15.5.14 (413 Content Too Large); RFC 6585
section 5 (431 Request Header Fields Too Large), section 4 (429 Too Many Requests, with
`Retry-After`, RFC 9110 section 10.2.3); RFC 9112 section 9.6 (a server that closes after a
response sends `Connection: close`, and lingers so that the client reads the response before
a reset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

#: Defaults.
MAX_HEAD_BYTES: Final = 64 * 1024
HEAD_TIMEOUT: Final = 10.0
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
MAX_CONNECTIONS_PER_ADDRESS: Final = 256
KEEP_ALIVE_TIMEOUT: Final = 5.0
#: Seconds a refused connection is read (and what it sends dropped) before it is closed, so
#: that the client reads the refusal instead of a reset (RFC 9112 section 9.6).
LINGER: Final = 2.0
#: The smallest head bound accepted: a request line and the headers an MCP client sends.
MIN_HEAD_BYTES: Final = 1024


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What one HTTP connection of the listener may send and hold.

    Attributes:
        max_head_bytes: bytes of a request head (request line and header fields, up to the
            blank line); past it 431 and the connection closes.
        head_timeout: seconds for a whole head to arrive (from the connection, or from the
            head's first byte on a kept-alive connection); past it 408 (nothing at all sent:
            the connection just closes).
        max_body_bytes: bytes of a request body; a `Content-Length` above it is 413 before
            the body is read, a chunked body is 413 when it passes it.
        max_connections_per_address: connections open at once from one address (an IPv6
            address counts as its /64, as the budgets count it); past it 429.
        keep_alive_timeout: seconds a connection may stay idle between requests.

    Raises:
        ValueError: a bound below its minimum (`max_head_bytes` below 1,024, any other
            below or at 0).
    """

    max_head_bytes: int = MAX_HEAD_BYTES
    head_timeout: float = HEAD_TIMEOUT
    max_body_bytes: int = MAX_BODY_BYTES
    max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS
    keep_alive_timeout: float = KEEP_ALIVE_TIMEOUT

    def __post_init__(self) -> None:
        if self.max_head_bytes < MIN_HEAD_BYTES:
            raise ValueError(f"max_head_bytes must be at least {MIN_HEAD_BYTES}")
        if min(self.head_timeout, self.keep_alive_timeout) <= 0:
            raise ValueError("head_timeout and keep_alive_timeout must be above 0")
        if min(self.max_body_bytes, self.max_connections_per_address) < 1:
            raise ValueError("max_body_bytes and max_connections_per_address must be at least 1")


@dataclass(frozen=True, slots=True)
class Bound:
    """A bound a connection went past.

    Attributes:
        reason: `head_too_large`, `head_timeout`, `body_too_large` or
            `too_many_connections_per_address` (a metric label and `data.reason`).
        status: 431, 408, 413 or 429.
        message: one sentence for the client.
    """

    reason: str
    status: int
    message: str


def head_too_large(limits: HttpLimits) -> Bound:
    return Bound(
        "head_too_large", 431, f"the request head is larger than {limits.max_head_bytes} bytes"
    )


def head_timeout(limits: HttpLimits) -> Bound:
    return Bound(
        "head_timeout", 408, f"the request head did not arrive within {limits.head_timeout:g} s"
    )


def body_too_large(limits: HttpLimits) -> Bound:
    return Bound(
        "body_too_large", 413, f"the request body is larger than {limits.max_body_bytes} bytes"
    )


def too_many_connections(limits: HttpLimits) -> Bound:
    return Bound(
        "too_many_connections_per_address",
        429,
        f"this address has {limits.max_connections_per_address} connections open",
    )


_PHRASES: Final = {
    408: b"Request Timeout",
    413: b"Content Too Large",
    429: b"Too Many Requests",
    431: b"Request Header Fields Too Large",
}


def refusal_bytes(bound: Bound, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole response refusing a connection past `bound`: its status, `Connection: close`,
    `Retry-After: 1` for 429, and a JSON-RPC error (-32600, `id` null: no request was read)
    whose `data.reason` names the bound. `default_headers`: the server's (`server`, `date`)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": f"conduit-mcp proxy: {bound.message}",
                "data": {"reason": bound.reason},
            },
        }
    ).encode()
    lines = [b"HTTP/1.1 %d %s\r\n" % (bound.status, _PHRASES[bound.status])]
    lines += [name + b": " + value + b"\r\n" for name, value in default_headers]
    lines.append(b"content-type: application/json\r\n")
    lines.append(b"content-length: %d\r\n" % len(body))
    if bound.status == 429:
        lines.append(b"retry-after: 1\r\n")
    lines.append(b"connection: close\r\n\r\n")
    return b"".join(lines) + body


class ConnectionCount:
    """Connections open per address, for one listener (used from its event loop only).

    Args:
        limit: connections one address may hold at once.
    """

    __slots__ = ("_open", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def __len__(self) -> int:
        """Addresses with a connection open."""
        return len(self._open)

    def add(self, address: str) -> bool:
        """Count one more connection from `address`, or False past the limit (not counted)."""
        count = self._open.get(address, 0)
        if count >= self.limit:
            return False
        self._open[address] = count + 1
        return True

    def remove(self, address: str) -> None:
        """One counted connection from `address` closed."""
        count = self._open.get(address, 0) - 1
        if count > 0:
            self._open[address] = count
        else:
            self._open.pop(address, None)
