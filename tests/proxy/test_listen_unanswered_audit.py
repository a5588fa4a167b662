"""`--audit-calls` on the 2026-07-28 stateless paths: every `tools/call` sent on to the server
has its row, answered or not (docs/identity.md, the call audit). A hostile review found calls
the server received that left no row: a client that hung up before the answer, a call whose
server never answered within the proxy's time limit; and on the pooled POST path to an HTTP
upstream a call the upstream refused with HTTP 401 or 403, or never answered, was recorded as
the server's own `error`.

Real parts: the listener (`Listener`, in this process: its ASGI app called as uvicorn calls it,
the caller's verified identity in the scope as `_auth.AuthMiddleware` leaves it), its
`CallerGate`, a `CallAuditor` writing a sqlite `PinStore`; behind it the hostile server's
`flood` scenario as the shared server process (its `slow` is never answered), or a raw ASGI
Streamable HTTP server (2026-07-28) on the pooled POST path. The time limits are shortened for
the test (`_stateless.REQUEST_TIMEOUT`, `SSE_PING_INTERVAL`: 300 s and 15 s in service).

Oracle: what the test arranges (the client leaves, the server stays silent, the upstream
answers 401 / 403: the server's own log, or the upstream's record, shows the call arrived)
and the verdicts docs/identity.md defines: `unanswered` with `caller_gone` or `timeout`;
`error` with `upstream_http_401` / `upstream_http_403`. RFC 9110 sections 15.5.2 and 15.5.4
(401 Unauthorized, 403 Forbidden) for the statuses.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from conduit_mcp.pins import PinStore
from conduit_mcp.policy import Policy
from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._access import Access
from conduit_mcp.proxy._callaudit import CallAuditor
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._auth import Identity
from conduit_mcp.proxy.listen._callers import IDENTITY_KEY, CallerGate
from conduit_mcp.proxy.listen._server import Listener
from tests.guard.conftest import Hostile

from .conftest import hostile_argv
from .test_listen_fuzz import PORT, _frames, _scope, _Sent

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ALICE = Identity("alice", frozenset({"ops"}), {"sub": "alice", "groups": ["ops"]})
TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object"}},
    {"name": "slow", "inputSchema": {"type": "object"}},
    {"name": "locked", "inputSchema": {"type": "object"}},
    {"name": "forbidden", "inputSchema": {"type": "object"}},
]
CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'


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


def _call(rid: int, name: str) -> bytes:
    arguments = {"message": "hi"} if name == "echo" else {}  # as each tool's inputSchema asks
    params = {"name": name, "arguments": arguments, "_meta": META}
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def _post(listener: Listener, name: str, rid: int, leave: bool = False) -> _Sent:
    """POST a call of `name` as alice; `leave`: she hangs up right after the body (ASGI
    `http.disconnect`, as uvicorn reports a closed connection)."""
    sent = _Sent()
    chunks = [_call(rid, name)]

    async def receive() -> Any:
        if chunks:
            return {"type": "http.request", "body": chunks.pop(), "more_body": False}
        if leave:
            return {"type": "http.disconnect"}
        await anyio.sleep_forever()

    with anyio.fail_after(60):
        await listener({**_scope(_head(name)), IDENTITY_KEY: ALICE}, receive, sent)
    return sent


def _audited(
    tmp_path: Path,
    target: Any,
    test: Callable[[Listener], Awaitable[Any]],
) -> tuple[Any, list[tuple[str, str, str | None, str | None]]]:
    """Run `test` against a listener in front of `target` with the call audit on (every tool
    allowed); returns what `test` returned and the audit's rows (tool, verdict, reason, the
    client's request id), written when the auditor closes."""
    policy = Policy.parse('default = "allow"\n', "allow", version=1)
    with PinStore(str(tmp_path / "pins.db")) as store:
        auditor = CallAuditor(store, "s", interval=3600)  # written at close
        gate = CallerGate(Access.fixed("s", policy), auditor=auditor)
        seam = GuardSeam(GuardSettings("s"))
        listener = Listener(seam, target, host="127.0.0.1", port=PORT, gate=gate)

        async def main() -> Any:
            async with anyio.create_task_group() as proxy:
                await proxy.start(listener.run)
                try:
                    return await test(listener)
                finally:
                    proxy.cancel_scope.cancel()

        try:
            out = anyio.run(main)
        finally:
            seam.close()
            auditor.close()
        rows = [(r.tool, r.verdict, r.reason, r.request_id) for r in store.calls_since(0)]
    return out, rows


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stateless time limits shortened: a request quiet for 0.7 s fails."""
    from conduit_mcp.proxy.listen import _stateless

    monkeypatch.setattr(_stateless, "SSE_PING_INTERVAL", 0.2)
    monkeypatch.setattr(_stateless, "REQUEST_TIMEOUT", 0.7)


async def _until(found: Callable[[], bool]) -> None:
    with anyio.fail_after(20):
        while not found():
            await anyio.sleep(0.02)


def test_on_the_shared_server_a_call_nobody_waits_for_has_its_row(
    tmp_path: Path, fast: None
) -> None:
    """The shared server process of stateless requests: `slow` is never answered. Alice hangs
    up on her first call of it (no row before: `if gone: return`), and waits out the proxy's
    time limit on her second (no row before: `answer(None)` recorded nothing). Both calls
    reached the server."""
    server = Hostile("flood", tmp_path / "flood.jsonl")

    async def test(listener: Listener) -> Any:
        echoed = await _post(listener, "echo", 1)
        await _post(listener, "slow", 2, leave=True)
        await _until(lambda: len(server.calls()) == 2)
        waited = await _post(listener, "slow", 3)
        return echoed, waited

    (echoed, waited), rows = _audited(tmp_path, hostile_argv(server), test)
    assert json.loads(echoed.body)["result"]["content"][0]["text"] == "hi"
    last = _frames(waited.body)[-1]  # an event stream: its keep-alive pings came first
    assert last["id"] == 3 and last["error"]["code"] == -32603
    assert [name for name, _ in server.calls()] == ["echo", "slow", "slow"]
    assert rows == [
        ("echo", "passed", None, "1"),
        ("slow", "unanswered", "caller_gone", "2"),
        ("slow", "unanswered", "timeout", "3"),
    ]


def test_on_the_shared_server_a_call_in_flight_when_the_server_ends_has_its_row(
    tmp_path: Path,
) -> None:
    """The shared server process ends (exits, its stdout closed) with alice's call in flight:
    she gets the proxy's error (502), and the call, which the server received, is
    `unanswered` with `session_closed` (no row before: `answer(None)` recorded nothing)."""
    server = Hostile("flood", tmp_path / "flood.jsonl", ("--exit-on", "slow"))

    async def test(listener: Listener) -> _Sent:
        return await _post(listener, "slow", 1)

    sent, rows = _audited(tmp_path, hostile_argv(server), test)
    assert sent.status == 502
    assert json.loads(sent.body)["error"]["message"] == "The upstream server did not answer"
    assert server.calls() == [("slow", {})]
    assert rows == [("slow", "unanswered", "session_closed", "1")]


class Upstream:
    """A raw ASGI Streamable HTTP server (2026-07-28): `tools/list`; `echo` answers; `slow`
    never does (it records its client leaving); `locked` is answered 401 with a
    `WWW-Authenticate` challenge, `forbidden` 403 (the caller's credentials refused)."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.left = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        value = json.loads(body)
        method, params = value.get("method"), value.get("params") or {}
        if method == "tools/list":
            await _json(send, 200, _result(value["id"], {"tools": TOOLS}))
            return
        if method != "tools/call":
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        name = params["name"]
        self.called.append(name)
        if name == "echo":
            text = {"content": [{"type": "text", "text": "hi"}]}
            await _json(send, 200, _result(value["id"], text))
        elif name == "slow":
            while (await receive())["type"] != "http.disconnect":
                pass
            self.left += 1
        else:
            status = 401 if name == "locked" else 403
            challenge = CHALLENGE if status == 401 else 'Bearer error="insufficient_scope"'
            head = [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": status, "headers": head})
            await send({"type": "http.response.body", "body": b""})


def _result(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {**result, "resultType": "complete"}}


async def _json(send: Any, status: int, value: Any) -> None:
    data = json.dumps(value).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})


def test_on_the_pooled_post_path_every_call_sent_has_its_row(tmp_path: Path, fast: None) -> None:
    """The pooled POST path to an HTTP upstream: a call the upstream refuses with 401 or 403
    is `error`, the status in the reason (recorded before as an `error` with no reason, as if
    the server had answered one: the proxy's own failure); a client that hangs up (no row
    before) and a call the upstream never answers (`error` before) are `unanswered`."""
    import uvicorn

    from tests.guard.conftest import free_port

    upstream = Upstream()
    port = free_port()
    config = uvicorn.Config(
        upstream, host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    ids = itertools.count(1)

    async def test(listener: Listener) -> Any:
        assert listener.modern.direct is not None  # the pooled path serves this upstream
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            await _until(lambda: server.started)
            try:
                sent = {}
                for name in ("echo", "locked", "forbidden"):
                    sent[name] = await _post(listener, name, next(ids))
                await _post(listener, "slow", next(ids), leave=True)
                await _until(lambda: upstream.left == 1)
                sent["slow"] = await _post(listener, "slow", next(ids))
                await _until(lambda: upstream.left == 2)
                return sent
            finally:
                server.should_exit = True

    target = HttpUpstream(f"http://127.0.0.1:{port}/mcp", {})
    sent, rows = _audited(tmp_path, target, test)
    # With --auth jwt (the call audit's caller) the client's token is the proxy's: an upstream
    # refusing the proxy's credential is the proxy's failure, HTTP 502 (never a login to run).
    for name, refused in (("locked", "HTTP 401 Unauthorized"), ("forbidden", "HTTP 403 Forbidden")):
        assert sent[name].status == 502
        assert refused in json.loads(sent[name].body)["error"]["message"]
    last = _frames(sent["slow"].body)[-1]
    assert last["id"] == 5 and "did not answer in time" in last["error"]["message"]
    assert upstream.called == ["echo", "locked", "forbidden", "slow", "slow"]
    assert rows == [
        ("echo", "passed", None, "1"),
        ("locked", "error", "upstream_http_401", "2"),
        ("forbidden", "error", "upstream_http_403", "3"),
        ("slow", "unanswered", "caller_gone", "4"),
        ("slow", "unanswered", "timeout", "5"),
    ]
