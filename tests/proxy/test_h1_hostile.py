"""The pooled HTTP/1.1 client (`_pool.H1Pool`) against a hostile upstream's framing tricks: what
follows a chunked body (trailer fields) is bounded as the head is, and never changes the
head the caller already read.

Oracles: RFC 9112 section 7.1.2 (the trailer section of a chunked body: header fields after
the last chunk); RFC 9110 section 6.5.1 (a recipient must not merge trailer fields into the
header section unless the field's definition allows it).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import pytest

from conduit_mcp.proxy.upstream._pool import MAX_HEAD, H1Pool, UpstreamUnreachable

from .test_h1_pool import BACKENDS, _read_request, _run, _serving

_BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
_CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
)


def _chunked(trailers: bytes) -> bytes:
    return _CHUNKED_HEAD + b"%x\r\n" % len(_BODY) + _BODY + b"\r\n0\r\n" + trailers


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", ["many fields", "one endless value"])
def test_endless_trailers_fail_the_response_with_bounded_memory(
    backend: tuple[str, dict[str, Any]], shape: str
) -> None:
    """After the last chunk the upstream sends trailer fields and never ends them (many
    distinct names, or one value that never ends): the response fails once they pass
    `MAX_HEAD` bytes, as a head that never ends does, instead of growing the trailer table
    (or the parser's value buffer) with every byte the upstream sends."""

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if not await _read_request(stream, []):
                return
            await stream.send(_chunked(b"x-t: " if shape == "one endless value" else b""))
            n = 0
            try:
                while True:
                    if shape == "many fields":
                        piece = b"".join(b"x-t%d: v\r\n" % (n + i) for i in range(1000))
                    else:
                        piece = b"a" * 16384
                    n += 1000
                    await stream.send(piece)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return

    async def test(pool: H1Pool) -> tuple[str, int]:
        async with pool.post(b"{}", {}) as response:
            try:
                async for _ in response.body():
                    pass
            except UpstreamUnreachable as exc:
                return str(exc), len(response.headers)
        return "", len(response.headers)

    failure, fields = _run(backend, lambda: _serving(serve, test))
    assert failure  # the response failed instead of reading trailers for ever
    assert fields < 16  # the head's fields only: no trailer field was merged into it
    assert MAX_HEAD < 2**20


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trailer_never_rewrites_the_head(backend: tuple[str, dict[str, Any]]) -> None:
    """A trailer field named like a head field (`content-type`) does not change the head the
    caller read; the body arrives whole."""

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if await _read_request(stream, []):
                trailers = b"content-type: text/event-stream\r\nx-late: 1\r\n\r\n"
                await stream.send(_chunked(trailers))
                await anyio.sleep_forever()

    async def test(pool: H1Pool) -> tuple[bytes, dict[str, str]]:
        async with pool.post(b"{}", {}) as response:
            body = b"".join([piece async for piece in response.body()])
            return body, dict(response.headers)

    body, headers = _run(backend, lambda: _serving(serve, test))
    assert body == _BODY
    assert headers["content-type"] == "application/json"
    assert "x-late" not in headers


@pytest.mark.parametrize("backend", BACKENDS)
def test_interim_responses_are_skipped_and_bounded(backend: tuple[str, dict[str, Any]]) -> None:
    """RFC 9110 section 15.2: a client parses any number of 1xx responses before the final
    one (100 Continue, 103 Early Hints from a CDN): the final response is the answer, its
    head without the interim heads' fields. An upstream that sends interim responses for
    ever fails once their bytes pass `MAX_HEAD`."""
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
    final = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + b"content-length: %d\r\n\r\n" % len(_BODY)
        + _BODY
    )

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            while await _read_request(stream, []):
                await stream.send(interim + final)

    async def endless(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if await _read_request(stream, []):
                try:
                    while True:
                        await stream.send(interim * 100)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    return

    async def test(pool: H1Pool) -> list[tuple[int, dict[str, str], bytes]]:
        answers = []
        for _ in range(2):  # the connection is reused after a response with interim ones
            async with pool.post(b"{}", {}) as response:
                body = b"".join([piece async for piece in response.body()])
                answers.append((response.status, dict(response.headers), body))
        return answers

    async def test_endless(pool: H1Pool) -> str:
        try:
            async with pool.post(b"{}", {}):
                return ""
        except UpstreamUnreachable as exc:
            return str(exc)

    for status, headers, body in _run(backend, lambda: _serving(serve, test)):
        assert (status, body) == (200, _BODY)
        assert "link" not in headers and headers["content-type"] == "application/json"
    assert _run(backend, lambda: _serving(endless, test_endless))
