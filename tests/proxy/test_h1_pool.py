"""The pooled HTTP/1.1 client of the stateless path (`_pool.H1Pool`) against raw TCP servers, on
asyncio's loop and on uvloop (the listener's): a request is one socket write, a kept-alive
connection is reused, one its server sent unasked bytes on or closed is not, a slow reader
holds a bounded part of a large body, and a POST is never written twice.

Oracles: RFC 9112 (a `content-length` body; section 9.3: a server may close an idle
connection, and bytes on an idle connection answer no request); RFC 9110 section 9.2.2 (a
POST is not idempotent: never retried).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import pytest

from conduit_mcp.proxy.upstream._pool import MAX_UNREAD, H1Pool, UpstreamUnreachable

BACKENDS = [
    pytest.param(("asyncio", {}), id="asyncio"),
    pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"),
]


def _run(backend: tuple[str, dict[str, Any]], main: Any) -> Any:
    if backend[1].get("use_uvloop"):
        pytest.importorskip("uvloop")
    return anyio.run(main, backend=backend[0], backend_options=backend[1])


def _answer(rid: int, extra: bytes = b"") -> bytes:
    body = b'{"jsonrpc":"2.0","id":%d,"result":{}}' % rid
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
        + extra
    )


async def _read_request(stream: anyio.abc.SocketStream, reads: list[bytes]) -> bool:
    """One request (head and `content-length` body) off `stream`, each read kept in `reads`;
    `False` when the client closed the connection first."""
    data = b""
    while b"\r\n\r\n" not in data or len(data) < _length(data):
        try:
            piece = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return False
        reads.append(piece)
        data += piece
    return True


def _length(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(head) + 4


async def _serving(serve: Any, test: Any) -> Any:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    pool = H1Pool(f"http://127.0.0.1:{port}/mcp", {"x-static": "s"})
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            with anyio.fail_after(20):
                return await test(pool)
        finally:
            await pool.aclose()
            tg.cancel_scope.cancel()


async def _post(pool: H1Pool, body: bytes = b"{}") -> bytes:
    async with pool.post(body, {"content-type": "application/json"}) as response:
        return b"".join([piece async for piece in response.body()])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_kept_alive_connection_is_reused_and_a_request_is_one_write(
    backend: tuple[str, dict[str, Any]],
) -> None:
    connections: list[list[bytes]] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        reads: list[bytes] = []
        connections.append(reads)
        async with stream:
            rid = 0
            while await _read_request(stream, reads):
                rid += 1
                await stream.send(_answer(rid))

    async def test(pool: H1Pool) -> list[bytes]:
        return [await _post(pool, b'{"n":%d}' % i) for i in range(3)]

    answers = _run(backend, lambda: _serving(serve, test))
    assert [json.loads(a)["id"] for a in answers] == [1, 2, 3]
    assert len(connections) == 1  # one connection for the three
    reads = connections[0]
    # Each request arrived whole in one read: head and body were written together.
    assert len(reads) == 3
    assert all(r.startswith(b"POST /mcp HTTP/1.1\r\n") and r.endswith(b"}") for r in reads)
    assert b"x-static: s\r\n" in reads[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("misbehaviour", ["unasked bytes", "close"])
def test_an_idle_connection_the_server_wrote_on_or_closed_is_not_reused(
    backend: tuple[str, dict[str, Any]], misbehaviour: str
) -> None:
    """The server answers, then (while the connection is idle) sends bytes nobody asked for,
    or closes it: the next request goes on a new connection and is answered there."""
    connections: list[list[bytes]] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        reads: list[bytes] = []
        connections.append(reads)
        async with stream:
            if not await _read_request(stream, reads):
                return
            await stream.send(_answer(len(connections)))
            if len(connections) == 1:
                if misbehaviour == "close":
                    return
                await anyio.sleep(0.05)
                await stream.send(_answer(99))
                await anyio.sleep_forever()

    async def test(pool: H1Pool) -> list[bytes]:
        first = await _post(pool)
        await anyio.sleep(0.3)  # the misbehaviour arrives while the connection is idle
        return [first, await _post(pool)]

    answers = _run(backend, lambda: _serving(serve, test))
    assert [json.loads(a)["id"] for a in answers] == [1, 2]
    assert len(connections) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_past_the_response_keep_the_connection_out_of_the_pool(
    backend: tuple[str, dict[str, Any]],
) -> None:
    """A response followed at once by bytes nobody asked for (here a second, unrequested
    response): the connection is not reused, so those bytes never answer the next request."""
    connections: list[list[bytes]] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        reads: list[bytes] = []
        connections.append(reads)
        async with stream:
            while await _read_request(stream, reads):
                await stream.send(_answer(len(connections), extra=_answer(99)))

    async def test(pool: H1Pool) -> list[bytes]:
        return [await _post(pool), await _post(pool)]

    answers = _run(backend, lambda: _serving(serve, test))
    assert [json.loads(a)["id"] for a in answers] == [1, 2]
    assert len(connections) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_slow_reader_holds_a_bounded_part_of_a_large_body(
    backend: tuple[str, dict[str, Any]],
) -> None:
    """A 16 MiB body read slowly: the pool stops reading from the socket while more than
    `MAX_UNREAD` bytes wait unread, so what it holds stays near that bound (plus one read),
    and the body arrives whole."""
    size = 16 * 2**20
    body = bytes(range(256)) * (size // 256)

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if await _read_request(stream, []):
                head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size
                await stream.send(head + body)
                await anyio.sleep_forever()

    async def test(pool: H1Pool) -> tuple[bytes, int]:
        got = bytearray()
        held = 0
        async with pool.post(b"{}", {}) as response:
            async for piece in response.body():
                held = max(held, response._connection.unread + len(piece))
                got += piece
                await anyio.sleep(0.001)  # slower than the socket
        return bytes(got), held

    got, held = _run(backend, lambda: _serving(serve, test))
    assert got == body
    assert held <= MAX_UNREAD + 2**20


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_post_the_server_dropped_is_never_written_again(
    backend: tuple[str, dict[str, Any]],
) -> None:
    """RFC 9110 section 9.2.2: a request written on a kept-alive connection that the server
    then closed without a response is an error for its caller, never written again."""
    seen: list[bytes] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            while await _read_request(stream, seen):
                if len(seen) > 1:
                    return  # read, then closed without a response
                await stream.send(_answer(1))

    async def test(pool: H1Pool) -> str:
        await _post(pool)
        try:
            await _post(pool)
        except UpstreamUnreachable as exc:
            return str(exc)
        return ""

    assert _run(backend, lambda: _serving(serve, test))
    assert len(seen) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_requests_past_the_cap_wait_for_a_connection(
    backend: tuple[str, dict[str, Any]],
) -> None:
    """Twelve concurrent requests to a slow upstream through a pool capped at three
    connections: the upstream never has more than three open at once (counted as it accepts
    them), and every request is answered, each exactly once."""
    cap, total = 3, 12
    open_now = [0]
    most = [0]
    seen: list[bytes] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        try:
            async with stream:
                reads: list[bytes] = []
                while await _read_request(stream, reads):
                    request = b"".join(reads)
                    reads.clear()
                    seen.append(request)
                    await anyio.sleep(0.05)  # slow: the other requests pile up meanwhile
                    n = json.loads(request.partition(b"\r\n\r\n")[2])["n"]
                    await stream.send(_answer(n))
        finally:
            open_now[0] -= 1

    async def test(pool: H1Pool) -> list[bytes]:
        pool._max = cap
        answers: list[bytes] = []

        async def one(i: int) -> None:
            answer = await _post(pool, b'{"n":%d}' % i)
            assert json.loads(answer)["id"] == i
            answers.append(answer)

        async with anyio.create_task_group() as tg:
            for i in range(total):
                tg.start_soon(one, i)
        return answers

    answers = _run(backend, lambda: _serving(serve, test))
    assert most[0] <= cap
    assert len(seen) == total  # each request written once
    # each answer the one to its own request (the upstream echoes the request's `n`)
    assert sorted(json.loads(a)["id"] for a in answers) == list(range(total))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_request_that_waits_too_long_for_a_connection_fails_unwritten(
    backend: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All connections busy past `POOL_WAIT_TIMEOUT`: the waiting request fails as an
    unreachable upstream does, with the cause, and was never written."""
    from conduit_mcp.proxy.upstream import _pool as _h1

    monkeypatch.setattr(_h1, "POOL_WAIT_TIMEOUT", 0.2)
    seen: list[bytes] = []
    release = anyio.Event()

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            while await _read_request(stream, seen):
                await release.wait()
                await stream.send(_answer(len(seen)))

    async def test(pool: H1Pool) -> tuple[str, bytes]:
        pool._max = 1
        first: list[bytes] = []

        async def slow() -> None:
            first.append(await _post(pool))

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            await anyio.sleep(0.05)
            try:
                await _post(pool)
                failure = ""
            except UpstreamUnreachable as exc:
                failure = str(exc)
            release.set()
        return failure, first[0]

    failure, first = _run(backend, lambda: _serving(serve, test))
    assert "busy" in failure and "1 connections" in failure
    assert json.loads(first)["id"] == 1
    assert len(seen) == 1  # the request that waited was never written
