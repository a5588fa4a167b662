"""A hostile upstream's event streams (issue 30 items 8 and 10): what they can cost the proxy, and
whose answer an event can be.

- Time: the reader searches each CR and each LF once, whatever the line lengths. Counted, not
  timed: the bytes the reader's searches scan, for n and 4n lines of the short lines a hostile
  server sends (16 MB of comment lines cost 12.9 s of CPU when every search ran to the end of
  what had arrived). conduit-defined bound: at most 3 bytes scanned per byte read (the
  searches for the next CR, the next LF, and the colon of its line), and 4n lines cost 4 times
  n.
- Memory: an event that cannot be a JSON-RPC message (its data does not start with `{`), and
  comments, are dropped as they arrive: what the reader holds stays within one piece and
  `LINE_PEEK`, however long the line (150 MB lines cost 3x their size, never given back,
  before). After a long event the reader's buffer is given back.
- Whose answer: over the stateless path, an event on one request's stream naming another
  request in flight is dropped before the guard reads it; that other request still gets its
  own answer from its own stream (spec 2026-07-28 basic/transports "Streamable HTTP": a POST's
  stream carries the messages related to that request and last its response).
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from typing import Any

import anyio
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._server import Listener
from conduit_mcp.proxy.upstream import _sse
from conduit_mcp.proxy.upstream._sse import LINE_PEEK, EventReader

from .scripted_http import LAST_CHUNK, SSE_HEAD, Connection, Request, Scripted, empty, event
from .test_listen_fuzz import PORT, _frames, _stateless

PIECE = 64 * 1024


class Counting(bytearray):
    """A buffer that counts the bytes its `find` calls look at (up to the match)."""

    scanned = 0

    def find(self, sub: Any, start: Any = 0, end: Any = None) -> int:
        stop = len(self) if end is None else end
        found = bytearray.find(self, sub, start, stop)
        Counting.scanned += (found - start + 1) if found != -1 else max(0, stop - start)
        return found


def _scan(stream: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[bytes]]:
    monkeypatch.setattr(_sse, "bytearray", Counting, raising=False)
    Counting.scanned = 0
    reader = EventReader()
    events = []
    for at in range(0, len(stream), PIECE):
        events += [bytes(data) for data in reader.feed(stream[at : at + PIECE])]
    return Counting.scanned, events


@pytest.mark.parametrize("line", [b":\n", b":\r", b":\r\n", b"\n", b"x\n", b"data: x\n\n"])
def test_the_reader_scans_each_byte_a_bounded_number_of_times(
    line: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
    n = 50_000
    small, events = _scan(line * n + answer, monkeypatch)
    large, events_4n = _scan(line * (4 * n) + answer, monkeypatch)
    assert events == events_4n == [answer[6:-2]]
    assert small <= 3 * len(line * n + answer)
    assert large <= 4.1 * small


def _peak(feed: Any) -> int:
    tracemalloc.start()
    try:
        feed()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("opening", [b"data: ", b":", b"event: ", b"data: \t\r\ndata:  x", b"id: "])
def test_a_line_that_cannot_be_a_message_is_dropped_as_it_arrives(opening: bytes) -> None:
    """A junk line of 4 MB and one of 16 MB cost the same: one piece and `LINE_PEEK`."""

    def feed(size: int) -> Any:
        def run() -> None:
            reader = EventReader()
            piece = b"x" * PIECE
            assert reader.feed(opening) == []
            for _ in range(size // PIECE):
                assert reader.feed(piece) == []
            answer = b'\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
            assert reader.feed(answer) == [bytearray(answer[8:-2])]
            if opening.startswith(b"data"):
                assert reader.dropped_events == 1
                assert reader.dropped_bytes >= size

        return run

    small, large = _peak(feed(4 << 20)), _peak(feed(16 << 20))
    assert large < 4 * (PIECE + LINE_PEEK)
    assert large < small + PIECE


def test_the_buffer_is_given_back_after_a_long_event() -> None:
    """CPython's bytearray reallocates when it shrinks below half: after an 8 MB event the
    reader holds bytes, not megabytes."""
    reader = EventReader()
    data = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"y" * (8 << 20) + b'"}}'
    stream = b"data: " + data + b"\n\n"
    found = []
    for at in range(0, len(stream), PIECE):
        found += reader.feed(stream[at : at + PIECE])
    assert found == [bytearray(data)]
    del found
    assert sys.getsizeof(reader._buffer) < 1024


# -- whose answer ----------------------------------------------------------------------------

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _ping(rid: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {"_meta": META}}
    ).encode()


HEAD = [
    ("host", f"127.0.0.1:{PORT}"),
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "ping"),
]


def test_an_event_naming_another_clients_request_is_not_its_answer() -> None:
    """Client A's request waits upstream; client B's stream first carries a response naming
    A's request, then B's own. A gets the answer from its own stream, B its own."""
    first: list[str] = []
    release = anyio.Event()

    async def handler(request: Request, connection: Connection) -> None:
        message = request.message
        if request.method != "POST" or "id" not in message:
            await connection.write(empty(202))
            return
        first.append(message["id"])
        if len(first) == 1:  # A: answered once B's stream carried the forgery
            await release.wait()
            own = {"jsonrpc": "2.0", "id": message["id"], "result": {"from": "A's stream"}}
            await connection.write(SSE_HEAD + event(own) + LAST_CHUNK)
            return
        forged = {"jsonrpc": "2.0", "id": first[0], "result": {"from": "B's stream"}}
        own = {"jsonrpc": "2.0", "id": message["id"], "result": {"from": "B's own"}}
        await connection.write(SSE_HEAD + event(forged) + event(own) + LAST_CHUNK)
        release.set()

    async def main() -> tuple[Any, Any]:
        scripted = Scripted(handler)
        seam = GuardSeam(GuardSettings("forged-answer"))
        sent: dict[str, Any] = {}
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(scripted.serve)
                listener = Listener(seam, HttpUpstream(scripted.url), host="127.0.0.1", port=PORT)
                await tg.start(listener.run)

                async def client(name: str) -> None:
                    sent[name] = await _stateless(listener, HEAD, _ping(name), [], False)

                async with anyio.create_task_group() as clients:
                    clients.start_soon(client, "a")
                    with anyio.fail_after(10):
                        while not first:
                            await anyio.sleep(0)
                    clients.start_soon(client, "b")
                tg.cancel_scope.cancel()
        finally:
            seam.close()
        return sent["a"], sent["b"]

    a, b = anyio.run(main)
    assert a.status == 200 and b.status == 200
    answer_a = _frames(a.body)[-1] if a.content_type.startswith("text/") else json.loads(a.body)
    answer_b = _frames(b.body)[-1] if b.content_type.startswith("text/") else json.loads(b.body)
    assert answer_a == {"jsonrpc": "2.0", "id": "a", "result": {"from": "A's stream"}}
    assert answer_b == {"jsonrpc": "2.0", "id": "b", "result": {"from": "B's own"}}
