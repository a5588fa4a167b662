"""2026-07-28 stateless requests to an HTTP upstream on the pooled POST path (`_direct`, `_pool`):
what the upstream receives (the spec's headers, the client's `Authorization`, on the guard's
own listing too), the answer's related messages streamed with the client's ids, the client
leaving closing the upstream request, and the event-stream framing.

Oracles: MCP 2026-07-28 basic/transports "Streamable HTTP" (a request's `MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name` headers; closing the response stream cancels the request); WHATWG HTML
"Server-sent events" (line ends CRLF, LF or CR; `data:` lines of one event joined with LF; a
blank line ends an event) for the framing cases, worked out by hand.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._server import Listener
from conduit_mcp.proxy.upstream._sse import EventReader

from .test_listen_fuzz import PORT, _frames, _stateless

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}}},
    {"name": "slow", "inputSchema": {"type": "object"}},
]


class Upstream:
    """A raw ASGI Streamable HTTP server (2026-07-28 only): `tools/list`; `echo` answers with
    an event stream (a progress notification for the request's token, then the result);
    `slow` never answers and records the client leaving."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], Any]] = []
        self.left = anyio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        value = json.loads(body)
        self.requests.append((headers, value))
        params = value.get("params") or {}
        if value.get("method") == "tools/list":
            answer = {
                "jsonrpc": "2.0",
                "id": value["id"],
                "result": {"tools": TOOLS, "resultType": "complete"},
            }
            await _json(send, answer)
        elif params.get("name") == "echo":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            token = params["_meta"]["progressToken"]
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2},
            }
            text = params["arguments"]["m"]
            result = {"content": [{"type": "text", "text": text}], "resultType": "complete"}
            answer = {"jsonrpc": "2.0", "id": value["id"], "result": result}
            for event in (progress, answer):
                data = b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n"
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif params.get("name") == "slow":
            while (await receive())["type"] != "http.disconnect":
                pass
            self.left.set()
        else:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})


async def _json(send: Any, value: Any) -> None:
    data = json.dumps(value).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    await send({"type": "http.response.body", "body": data})


def _head(name: str) -> list[tuple[str, str]]:
    return [
        ("host", f"127.0.0.1:{PORT}"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
        ("authorization", "Bearer client-token"),
    ]


def _call(rid: Any, name: str, arguments: dict[str, Any], token: Any = None) -> bytes:
    meta = {**META, "progressToken": token} if token is not None else META
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


async def _with_upstream(test: Any, keep_alive: int = 5) -> Any:
    import uvicorn

    from tests.guard.conftest import free_port

    upstream = Upstream()
    port = free_port()
    config = uvicorn.Config(
        upstream,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_keep_alive=keep_alive,
    )
    server = uvicorn.Server(config)
    seam = GuardSeam(GuardSettings("direct"))
    target = HttpUpstream(f"http://127.0.0.1:{port}/mcp", {"x-static": "s"})
    listener = Listener(seam, target, host="127.0.0.1", port=PORT)
    assert listener.modern.direct is not None  # the pooled path serves this upstream
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.01)
            async with anyio.create_task_group() as proxy:
                await proxy.start(listener.run)
                try:
                    return await test(listener, upstream)
                finally:
                    proxy.cancel_scope.cancel()  # the listener closes its pooled connections
                    server.should_exit = True
    finally:
        seam.close()


def test_a_call_goes_up_with_the_spec_headers_and_its_progress_comes_back() -> None:
    async def test(listener: Listener, upstream: Upstream) -> Any:
        sent = await _stateless(
            listener, _head("echo"), _call(7, "echo", {"m": "hi"}, 5), [], False
        )
        return sent, upstream.requests

    sent, requests = anyio.run(_with_upstream, test)
    assert sent.status == 200
    events = _frames(sent.body)
    assert events[0]["method"] == "notifications/progress"
    assert events[0]["params"]["progressToken"] == 5  # the client's own token
    assert events[-1]["id"] == 7 and events[-1]["result"]["content"][0]["text"] == "hi"
    # The guard had never seen the tools: it listed them first, with the caller's credentials.
    (list_headers, listing), (call_headers, call) = requests
    assert listing["method"] == "tools/list"
    assert list_headers["authorization"] == "Bearer client-token"
    assert list_headers["mcp-method"] == "tools/list"
    assert call["id"] != 7  # unique upstream id, restored on the way back
    for name, value in {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
        "authorization": "Bearer client-token",
        "x-static": "s",
        "content-type": "application/json",
    }.items():
        assert call_headers[name] == value
    assert "text/event-stream" in call_headers["accept"]


def test_a_client_that_leaves_closes_the_upstream_request() -> None:
    """Closing the response stream is the request's cancellation: the upstream sees its
    request's connection end."""

    async def test(listener: Listener, upstream: Upstream) -> Any:
        await _stateless(listener, _head("echo"), _call(1, "echo", {"m": "x"}, 1), [], False)
        left = await _stateless(listener, _head("slow"), _call(2, "slow", {}), [], True)
        with anyio.fail_after(10):
            await upstream.left.wait()
        after = await _stateless(
            listener, _head("echo"), _call(3, "echo", {"m": "y"}, 2), [], False
        )
        return left, after

    left, after = anyio.run(_with_upstream, test)
    assert left.status is None  # nobody to answer
    assert _frames(after.body)[-1]["result"]["content"][0]["text"] == "y"


def test_a_connection_the_upstream_closed_while_idle_is_replaced() -> None:
    """RFC 9112 section 9.3: a server may close an idle persistent connection; the request
    that finds it closed goes again on a new one (nothing of it was answered)."""

    async def test(listener: Listener, upstream: Upstream) -> Any:
        texts = []
        for rid in range(3):
            sent = await _stateless(
                listener, _head("echo"), _call(rid, "echo", {"m": str(rid)}, rid), [], False
            )
            texts.append(_frames(sent.body)[-1]["result"]["content"][0]["text"])
            await anyio.sleep(1.5)  # past the upstream's keep-alive timeout
        return texts

    assert anyio.run(lambda: _with_upstream(test, keep_alive=1)) == ["0", "1", "2"]


def test_an_unreachable_upstream_is_a_json_rpc_error() -> None:
    """A request the guard lets through to a server nobody listens for: HTTP 502 with a
    JSON-RPC error for the client's id (a tools/call would be refused by the guard first: it
    cannot list the tools)."""
    from tests.guard.conftest import free_port

    head = [*_head("x")[:4], ("mcp-method", "tools/list")]
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": META}}
    ).encode()

    async def main() -> Any:
        seam = GuardSeam(GuardSettings("direct"))
        target = HttpUpstream(f"http://127.0.0.1:{free_port()}/mcp")
        listener = Listener(seam, target, host="127.0.0.1", port=PORT)
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(listener.run)
                sent = await _stateless(listener, head, body, [], False)
                tg.cancel_scope.cancel()
        finally:
            seam.close()
        return sent

    sent = anyio.run(main)
    assert sent.status == 502
    answer = json.loads(sent.body)
    assert answer["id"] == 9 and answer["error"]["code"] == -32603
    assert "could not be reached" in answer["error"]["message"]


def _events(pieces: list[bytes]) -> list[bytes]:
    reader = EventReader()
    found = [bytes(data) for piece in pieces for data in reader.feed(piece)]
    last = reader.close()
    return found if last is None else [*found, bytes(last)]


STREAM = (
    b': comment\r\nevent: message\r\ndata: {"a":1}\r\n\r\n'
    b'data: {"one":\ndata:2}\n\n'
    b'id: 4\rdata: {"cr":3}\r\r'
    b"datax: ignored\ndata\n\n"
    b"data: not json\n\n"
    b"data:\r\ndata:  \t{}\r\n\r\n"
)
#: Worked out by hand from the WHATWG rules; an event with no data (`data` with no value) is
#: not handed on, nor one whose data cannot be a JSON object (the proxy reads nothing else).
EXPECTED = [b'{"a":1}', b'{"one":\n2}', b'{"cr":3}', b"\n \t{}"]


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(STREAM)])
def test_event_stream_framing_whatever_the_pieces(size: int) -> None:
    pieces = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    assert _events(pieces) == EXPECTED


def test_a_request_the_upstream_dropped_unanswered_is_not_sent_again() -> None:
    """RFC 9110 section 9.2.2: a POST is not idempotent (a tools/call may have run), so one
    that was written on a kept-alive connection the server then closed without a response is
    an error for its caller, never written a second time. The server here answers the first
    request, reads the second and hangs up: it must see two requests, not three."""
    from conduit_mcp.proxy.upstream._pool import H1Pool, UpstreamUnreachable

    seen: list[bytes] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            while True:
                data = await stream.receive()
                seen.append(data)
                if len(seen) == 1:
                    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
                    await stream.send(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        + b"content-length: %d\r\n\r\n" % len(body)
                        + body
                    )
                else:
                    return  # read, then closed without a response

    async def main() -> tuple[bytes, str]:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        pool = H1Pool(f"http://127.0.0.1:{port}/mcp", {})
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            async with pool.post(b"{}", {"content-type": "application/json"}) as response:
                first = b"".join([piece async for piece in response.body()])
            try:
                async with pool.post(b"{}", {"content-type": "application/json"}):
                    pass
            except UpstreamUnreachable as exc:
                failure = str(exc) or type(exc).__name__
            else:
                failure = ""
            await pool.aclose()
            tg.cancel_scope.cancel()
        return first, failure

    first, failure = anyio.run(main)
    assert json.loads(first)["id"] == 1
    assert failure  # the caller is told; the request is not sent again
    assert len(seen) == 2


@pytest.mark.parametrize("endless", ["names", "value"])
def test_an_endless_response_head_fails_the_request(endless: str) -> None:
    """A hostile upstream that never ends its response head (distinct header lines without
    end, or one header value without end) fails the request once the head passes `MAX_HEAD`
    bytes: the client is not left holding the head in memory while the upstream writes on.
    The upstream writes 16 MiB of head and then waits with the connection open: without a
    bound the request would wait for the rest of the head."""
    from conduit_mcp.proxy.upstream._pool import MAX_HEAD, H1Pool, UpstreamUnreachable

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
            if endless == "value":
                await stream.send(b"x-endless: ")
            try:
                for i in range(16):
                    if endless == "names":
                        chunk = b"".join(b"x-%d-%d: v\r\n" % (i, j) for j in range(100_000))
                    else:
                        chunk = b"a" * 2**20
                    await stream.send(chunk)
            except (anyio.BrokenResourceError, OSError):
                return
            await anyio.sleep_forever()

    async def main() -> str:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        pool = H1Pool(f"http://127.0.0.1:{port}/mcp", {})
        failure = ""
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            with anyio.fail_after(20):
                try:
                    async with pool.post(b"{}", {"content-type": "application/json"}):
                        pass
                except UpstreamUnreachable as exc:
                    failure = str(exc) or type(exc).__name__
            await pool.aclose()
            tg.cancel_scope.cancel()
        return failure

    assert MAX_HEAD < 2**20
    assert anyio.run(main)


@pytest.mark.parametrize("delivers", [False, True])
def test_a_listen_stream_is_promised_list_changed_only_where_it_is_delivered(
    delivers: bool,
) -> None:
    """Under a policy that changes the list by itself (`new="hold"`), the guard may add
    `toolsListChanged` to the server's acknowledgment of a `subscriptions/listen` stream: only
    on a link whose seam delivers the guard's notifications (`send_notices_to`; the pooled
    POST path sets it at its first request: test_listen_direct_notify.py), so no client is
    promised what it would not get."""
    from conduit_mcp.proxy import GuardSettings as Settings

    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {}}

    async def main() -> Any:
        seam = GuardSeam(Settings(server_id="notify", policy={"new": "hold"}))

        async def write(_message: Any) -> None:
            return None

        link = seam.connect(write, transport="streamable-http")
        if delivers:
            link.send_notices_to(lambda _messages: None)
        try:
            await link.from_client(
                {
                    "jsonrpc": "2.0",
                    "id": "conduit-1",
                    "method": "subscriptions/listen",
                    "params": {"_meta": meta, "notifications": {"toolsListChanged": True}},
                }
            )
            _, ack = await link.from_server(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {
                        "_meta": {"io.modelcontextprotocol/subscriptionId": "conduit-1"},
                        "notifications": {},
                    },
                }
            )
        finally:
            seam.close()
        return ack

    ack = anyio.run(main)
    promised = ack is not None and ack["params"]["notifications"].get("toolsListChanged") is True
    assert promised is delivers


def test_a_quiet_request_gets_keep_alive_pings_then_times_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request whose upstream stays silent: a keep-alive comment each ping interval on an
    event stream, then past the time limit an error for the client's id as the last event,
    and the upstream POST closed (the upstream sees its client leave). The intervals are
    shortened for the test (15 s and 300 s in service)."""
    from conduit_mcp.proxy.listen import _stateless as _modern

    monkeypatch.setattr(_modern, "SSE_PING_INTERVAL", 0.2)
    monkeypatch.setattr(_modern, "REQUEST_TIMEOUT", 0.7)

    async def test(listener: Listener, upstream: Upstream) -> Any:
        await _stateless(listener, _head("echo"), _call(1, "echo", {"m": "x"}, 1), [], False)
        sent = await _stateless(listener, _head("slow"), _call(2, "slow", {}), [], False)
        with anyio.fail_after(10):
            await upstream.left.wait()
        return sent

    sent = anyio.run(_with_upstream, test)
    assert sent.status == 200
    assert sent.body.count(b": ping\r\n\r\n") == 3  # at 0.2, 0.4 and 0.6 s; 0.8 s is past 0.7
    last = _frames(sent.body)[-1]
    assert last["id"] == 2 and last["error"]["code"] == -32603
    assert "did not answer in time" in last["error"]["message"]
