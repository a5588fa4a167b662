"""The listener's HTTP protocol (`_joined`): uvicorn's httptools protocol with a response's head
joined to its body in one socket write, the bytes on the wire unchanged.

Oracles: RFC 9112 (status line, header fields, `content-length` and chunked bodies; a HEAD
response has no body; persistent connections), worked out by hand for each response; the
socket writes are counted on the real transport under uvicorn.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conduit_mcp.proxy.listen._protocol import JOIN_BELOW, JoinedWrites, http_protocol

pytest.importorskip("httptools")


class Recorder:
    """A transport that records its writes."""

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        if self.inner is not None:
            self.inner.write(data)

    def is_closing(self) -> bool:
        return self.closed if self.inner is None else bool(self.inner.is_closing())

    def close(self) -> None:
        self.closed = True
        if self.inner is not None:
            self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


def test_a_head_announcing_a_body_leaves_with_it() -> None:
    inner = Recorder()
    joined = JoinedWrites(inner)  # type: ignore[arg-type]
    joined.write(HEAD)
    assert inner.writes == []
    joined.write(b"{}")
    assert inner.writes == [HEAD + b"{}"]


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        HEAD + b"{}",  # uvicorn's own error responses: head and body already in one write
    ],
)
def test_anything_else_is_written_at_once(head: bytes) -> None:
    inner = Recorder()
    JoinedWrites(inner).write(head)  # type: ignore[arg-type]
    assert inner.writes == [head]


def test_a_large_body_piece_follows_the_head_uncopied() -> None:
    inner = Recorder()
    joined = JoinedWrites(inner)  # type: ignore[arg-type]
    head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % (2 * JOIN_BELOW)
    joined.write(head)
    piece = b"x" * JOIN_BELOW
    joined.write(piece)
    joined.write(piece)
    assert inner.writes == [head, piece, piece]


@pytest.mark.parametrize("end", ["flush", "close", "write_eof"])
def test_a_held_head_is_written_when_the_response_or_connection_ends(end: str) -> None:
    inner = Recorder()
    inner.write_eof = lambda: None  # type: ignore[method-assign]
    joined = JoinedWrites(inner)  # type: ignore[arg-type]
    joined.write(HEAD)
    getattr(joined, end)()
    assert inner.writes == [HEAD]


#: Set by the test once the event stream's head reached it (one event a run of the app).
_HEAD_READ: list[anyio.Event] = []


async def _app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/sse":
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        # The first event waits until the client has read the head: a head held back until
        # the first body bytes never arrives, and the client's bound stops the hang.
        await _HEAD_READ[0].wait()
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b'{"ok":true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def test_under_uvicorn_each_response_is_one_write_and_the_bytes_are_uvicorns() -> None:
    """JSON answers on one kept-alive connection, a HEAD request (its head written at the
    response's end: the next request on the connection is answered), and an event stream
    whose head reaches the client before its first event."""
    import uvicorn

    from tests.guard.conftest import free_port

    recorders: list[Recorder] = []
    base = http_protocol()

    class Counting(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: Any) -> None:
            recorder = Recorder(transport)
            recorders.append(recorder)
            super().connection_made(recorder)

    port = free_port()
    config = uvicorn.Config(
        _app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", http=Counting
    )
    server = uvicorn.Server(config)

    async def read_response(stream: Any, head_only: bool = False) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data or (not head_only and not data.endswith(b"}")):
            data += await stream.receive()
        return data

    async def main() -> tuple[list[bytes], bytes, bytes]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.01)
            request = b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}"
            head_request = b"HEAD /x HTTP/1.1\r\nhost: a\r\n\r\n"
            answers = []
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                for raw in (request, request, head_request, request):
                    await stream.send(raw)
                    with anyio.fail_after(5):
                        answers.append(await read_response(stream, raw is head_request))
            _HEAD_READ[:] = [anyio.Event()]
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(b"POST /sse HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n")
                with anyio.fail_after(30):  # only stops a hang: the app's first event waits
                    sse_head = await read_response(stream, head_only=True)
                _HEAD_READ[0].set()
            server.should_exit = True
        return answers, sse_head, b"".join(recorders[0].writes)

    answers, sse_head, wire = anyio.run(main)
    for answer in answers[:2] + answers[3:]:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"content-length: 11" in head and body == b'{"ok":true}'
    assert answers[2].startswith(b"HTTP/1.1 200 OK\r\n") and answers[2].endswith(b"\r\n\r\n")
    assert sse_head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked" in sse_head
    writes = recorders[0].writes
    assert len(writes) == 4  # one write per response, the HEAD response's head included
    assert wire == b"".join(answers)


def test_a_uvicorn_whose_protocol_changed_shape_gets_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The listener subclasses uvicorn's internal httptools protocol: a uvicorn without a
    method it overrides serves with its own h11 protocol ("h11": unjoined, the head's size
    bounded by `h11_max_incomplete_event_size`), never a subclass that would fail on the
    first response."""
    from uvicorn.protocols.http import httptools_impl

    from conduit_mcp.proxy.listen._protocol import http_protocol

    assert not isinstance(http_protocol(), str)
    monkeypatch.delattr(httptools_impl.HttpToolsProtocol, "on_response_complete")
    assert http_protocol() == "h11"


def test_pipelined_requests_in_one_write_are_answered_in_order_and_whole() -> None:
    """RFC 9112 section 9.3.2: requests pipelined in one write (a HEAD among them, a
    `Connection: close` last) are answered in order, each head with its own body (the HEAD
    response's head alone), nothing held back at the close."""
    import uvicorn

    from tests.guard.conftest import free_port

    port = free_port()
    config = uvicorn.Config(
        _app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", http=http_protocol()
    )
    server = uvicorn.Server(config)
    post = b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}"
    burst = (
        post
        + b"HEAD /x HTTP/1.1\r\nhost: a\r\n\r\n"
        + post.replace(b"host: a\r\n", b"host: a\r\nconnection: close\r\n")
    )

    async def main() -> bytes:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.01)
            data = b""
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(burst)
                with anyio.fail_after(5):
                    try:
                        while True:
                            data += await stream.receive()
                    except anyio.EndOfStream:
                        pass
            server.should_exit = True
        return data

    wire = anyio.run(main)
    parts = wire.split(b"HTTP/1.1 200 OK\r\n")
    assert parts[0] == b"" and len(parts) == 4, wire
    for part, body in zip(parts[1:], (b'{"ok":true}', b"", b'{"ok":true}'), strict=True):
        head, _, rest = part.partition(b"\r\n\r\n")
        assert b"content-length: 11" in head and rest == body, wire
