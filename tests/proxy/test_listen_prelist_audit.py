"""`--audit-calls` on the 2026-07-28 stateless paths while the proxy lists the tools itself
before a call of a tool the guard has not seen (`GuardSeam.before_call`; on the pooled POST
path the guard's `from_client`): a call whose caller leaves during that listing, or whose
listener stops, was never written to the server and has its row, `refused` (docs/identity.md,
the call audit). A review found that such a call left no row at all: the stateless exchange
watched its client only once the call was sent on, and a call stopped before it was written
was recorded by nobody.

Real parts: the listener (`Listener`) on uvicorn with the listener's own protocol on a free
loopback port (or called as uvicorn calls it, for the listener stopping), its `CallerGate`, a
`CallAuditor` writing a sqlite `PinStore` read back as an auditor reads it; the caller's
verified identity in the ASGI scope as `_auth.AuthMiddleware` leaves it; behind it the
hostile server's `flood` scenario as the shared server process (it holds back its second
tools/list: the proxy's own), or a raw ASGI Streamable HTTP server (2026-07-28) on the
pooled POST path that holds back the proxy's own tools/list. Clients: the official Python
SDK (`mcp.Client`, mode 2026-07-28: a cancelled call's POST is closed, the version's
cancellation) and a raw socket that writes a POST and closes.

Oracle: what the test arranges (the server's own log, or the upstream's record, shows the
proxy's listing arrived and the call never did) and the verdicts docs/identity.md defines:
`refused` for a call the proxy never wrote to the server, reason `caller_gone` (the client
left; on the stateless paths closing the response stream is also how a client cancels, MCP
2026-07-28 basic/transports "Streamable HTTP") or `session_closed` (the listener stopped).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from conduit_mcp.pins import PinStore
from conduit_mcp.policy import Policy
from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._access import Access
from conduit_mcp.proxy._callaudit import CallAuditor
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._callers import IDENTITY_KEY, CallerGate
from conduit_mcp.proxy.listen._server import Listener
from tests.guard.conftest import Hostile

from .conftest import hostile_argv
from .test_listen_fuzz import _scope, _Sent
from .test_listen_unanswered_audit import ALICE, META, _call, _head, _json, _result

TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]
#: A call's row, as the test reads it: tool, verdict, reason, the client's request id.
Row = tuple[str, str, "str | None", "str | None"]


@pytest.fixture(autouse=True)
def _listing_outlasts_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy's own listing waits longer than any test here (10 s in service): a row that
    comes while the test runs came from the client leaving, never from the listing's end."""
    from conduit_mcp.proxy import _seam

    monkeypatch.setattr(_seam, "PRELIST_TIMEOUT", 30.0)


class _Identified:
    """The listener with alice's verified identity in each HTTP request's scope, as
    `_auth.AuthMiddleware` leaves it after checking her token."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, IDENTITY_KEY: ALICE}
        await self._listener(scope, receive, send)


class HoldingUpstream:
    """A raw ASGI Streamable HTTP server (2026-07-28): a client's tools/list is answered
    (`echo`); the proxy's own (its id `conduit-mcp-list-...`) is held until its POST closes,
    or until `released` (then answered with `ghost` listed too); every tools/call is
    recorded and answered."""

    def __init__(self) -> None:
        self.held: list[str] = []  # the proxy's own listings, as they arrived
        self.called: list[str] = []
        self.released = False

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
        if method == "tools/list" and str(value["id"]).startswith("conduit-mcp-list-"):
            self.held.append(value["id"])
            gone = False
            async with anyio.create_task_group() as held:

                async def disconnected() -> None:
                    nonlocal gone
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    gone = True
                    held.cancel_scope.cancel()

                held.start_soon(disconnected)
                while not self.released:
                    await anyio.sleep(0.02)
                held.cancel_scope.cancel()
            if not gone:
                tools = [*TOOLS, {"name": "ghost", "inputSchema": {"type": "object"}}]
                await _json(send, 200, _result(value["id"], _listing(tools)))
            return
        if method == "tools/list":
            await _json(send, 200, _result(value["id"], _listing(TOOLS)))
            return
        if method == "tools/call":
            self.called.append(params.get("name"))
            text = {"content": [{"type": "text", "text": "ran"}]}
            await _json(send, 200, _result(value["id"], text))
            return
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _listing(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A 2026-07-28 tools/list result (its cache hints required)."""
    return {"tools": tools, "ttlMs": 0, "cacheScope": "private"}


async def _uvicorn(app: Any, tg: Any, port: int | None = None) -> tuple[int, Any]:
    """`app` on uvicorn with the listener's protocol on loopback `port` (default: a free
    one), in `tg`: the port, and what stops it (its sockets closed; a request still under way
    after 0.2 s cancelled, as the proxy's `SHUTDOWN_GRACE` does: a call whose client left
    waits for the proxy's own listing, held here, as it did before)."""
    import uvicorn

    from conduit_mcp.proxy.listen._protocol import http_protocol
    from tests.guard.conftest import free_port

    port = port if port is not None else free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        http=http_protocol(),
        ws="none",
        lifespan="off",
        timeout_graceful_shutdown=0.2,
    )
    server = uvicorn.Server(config)
    served = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve()
        finally:
            served.set()

    async def stop() -> None:
        server.should_exit = True
        with anyio.fail_after(10):
            await served.wait()

    tg.start_soon(serve)
    await _until(lambda: server.started)
    return port, stop


async def _until(found: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not found():
            await anyio.sleep(0.02)


def _serving(
    tmp_path: Path,
    target: Any,
    test: Callable[[str, Callable[[], list[Row]], Listener], Awaitable[Any]],
) -> list[Row]:
    """A listener with the call audit on (every tool allowed) in front of `target` (a
    server command, or an ASGI app: an HTTP upstream served on uvicorn first), on uvicorn,
    while `test(url, rows, listener)` runs; `rows()` reads the audit back as an auditor does
    (the auditor writes every 50 ms). Returns the rows once the listener stopped."""
    from tests.guard.conftest import free_port

    policy = Policy.parse('default = "allow"\n', "allow", version=1)
    path = str(tmp_path / "pins.db")

    def rows() -> list[Row]:
        with PinStore(path) as pins:
            return [(r.tool, r.verdict, r.reason, r.request_id) for r in pins.calls_since(0)]

    with PinStore(path) as store:
        auditor = CallAuditor(store, "s", interval=0.05)
        gate = CallerGate(Access.fixed("s", policy), auditor=auditor)
        seam = GuardSeam(GuardSettings("s"))

        async def main() -> None:
            async with anyio.create_task_group() as outer:
                upstream, stop_upstream = target, None
                if not isinstance(target, list):  # an HTTP upstream: served first
                    up_port, stop_upstream = await _uvicorn(target, outer)
                    upstream = HttpUpstream(f"http://127.0.0.1:{up_port}/mcp", {})
                port = free_port()
                listener = Listener(seam, upstream, host="127.0.0.1", port=port, gate=gate)
                async with anyio.create_task_group() as proxy:
                    await proxy.start(listener.run)
                    _, stop = await _uvicorn(_Identified(listener), proxy, port)
                    try:
                        await test(f"http://127.0.0.1:{port}/mcp", rows, listener)
                    finally:
                        await stop()
                        proxy.cancel_scope.cancel()  # the listener stops: its pool closes
                if stop_upstream is not None:
                    await stop_upstream()

        try:
            anyio.run(main)
        finally:
            seam.close()
            auditor.close()
    return rows()


async def _first_row(rows: Callable[[], list[Row]]) -> list[Row]:
    """The audit once it has a row (at most 10 s: the proxy's own listing waits 30)."""
    await _until(lambda: bool(rows()))
    return rows()


def _modern_client(url: str) -> tuple[Any, Any]:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(timeout=60)
    return http, mcp.Client(streamable_http_client(url, http_client=http), mode="2026-07-28")


async def _sdk_cancels_ghost(url: str, listing: Callable[[], bool]) -> None:
    """The official SDK client lists the tools, calls `ghost` (a tool nobody listed), and
    cancels the call once `listing()` says the proxy's own listing reached the server."""
    http, client = _modern_client(url)
    async with http, client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] != []
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "ghost", {})
            await _until(listing)
            tg.cancel_scope.cancel()  # the SDK closes the call's POST: its cancellation


async def _raw_hangs_up_on_ghost(url: str, listing: Callable[[], bool]) -> None:
    """A raw client POSTs a call of `ghost` on a socket of its own and closes that socket
    once `listing()` says the proxy's own listing reached the server."""
    host, _, rest = url.removeprefix("http://").partition(":")
    port = int(rest.partition("/")[0])
    params = {"name": "ghost", "arguments": {}, "_meta": META}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    head = (
        "POST /mcp HTTP/1.1\r\n"
        f"host: {host}:{port}\r\n"
        "accept: application/json, text/event-stream\r\n"
        "content-type: application/json\r\n"
        "mcp-protocol-version: 2026-07-28\r\n"
        "mcp-method: tools/call\r\n"
        "mcp-name: ghost\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    async with await anyio.connect_tcp(host, port) as sock:
        await sock.send(head.encode() + body.encode())
        await _until(listing)
    # closed: the client hung up with nothing read


async def _post(listener: Listener, url: str, name: str, rid: int) -> None:
    """POST a call of `name` as alice to `listener` at `url`, called as uvicorn calls it (the
    client stays until its answer)."""
    chunks = [_call(rid, name)]

    async def receive() -> Any:
        if chunks:
            return {"type": "http.request", "body": chunks.pop(), "more_body": False}
        await anyio.sleep_forever()

    host = [("host", url.split("/")[2])]
    head = host + [(k, v) for k, v in _head(name) if k != "host"]
    with anyio.fail_after(10):
        await listener({**_scope(head), IDENTITY_KEY: ALICE}, receive, _Sent())


def _proxys_listing(server: Hostile) -> Callable[[], bool]:
    """Whether the flood server got its second tools/list (the proxy's own: held back)."""

    def listed() -> bool:
        listings = [m for m in server.received() if m.get("method") == "tools/list"]
        return len(listings) == 2

    return listed


def test_on_the_shared_server_a_call_the_sdk_client_cancels_during_the_proxys_listing(
    tmp_path: Path,
) -> None:
    """The shared server process of stateless requests: the SDK client cancels its call of
    `ghost` while the proxy's own listing (the flood server's second) is held back. The call
    was never written to the server: `refused`, `caller_gone`, at once (before: no row until
    the listing ended, up to `PRELIST_TIMEOUT`, and none at all if the listener stopped
    first)."""
    server = Hostile("flood", tmp_path / "flood.jsonl")
    seen: list[list[Row]] = []

    async def test(url: str, rows: Callable[[], list[Row]], _: Listener) -> None:
        await _sdk_cancels_ghost(url, _proxys_listing(server))
        seen.append(await _first_row(rows))

    final = _serving(tmp_path, hostile_argv(server), test)
    assert seen[0] == final
    assert [row[:3] for row in final] == [("ghost", "refused", "caller_gone")]
    assert [name for name, _ in server.calls()] == []  # never written to the server
    listings = [m["id"] for m in server.received() if m.get("method") == "tools/list"]
    assert str(listings[1]).startswith("conduit-mcp-list-")  # the proxy's own


def test_on_the_shared_server_a_call_whose_client_hangs_up_during_the_proxys_listing(
    tmp_path: Path,
) -> None:
    """The same with a raw client that hangs up (its socket closed) after a first client's
    listing: `refused`, `caller_gone`, and the call never reaches the server."""
    server = Hostile("flood", tmp_path / "flood.jsonl")
    seen: list[list[Row]] = []

    async def test(url: str, rows: Callable[[], list[Row]], _: Listener) -> None:
        http, client = _modern_client(url)
        async with http, client:
            await client.list_tools()  # the flood server's first listing: answered
        await _raw_hangs_up_on_ghost(url, _proxys_listing(server))
        seen.append(await _first_row(rows))

    final = _serving(tmp_path, hostile_argv(server), test)
    assert seen[0] == final == [("ghost", "refused", "caller_gone", "7")]
    assert [name for name, _ in server.calls()] == []


@pytest.mark.parametrize("client", ["sdk", "raw"])
def test_on_the_pooled_post_path_a_call_whose_client_leaves_during_the_proxys_listing(
    tmp_path: Path, client: str
) -> None:
    """The pooled POST path to an HTTP upstream, which holds the proxy's own listing: the SDK
    client cancels its call of `ghost`, or a raw client hangs up on it, while that listing
    waits. The call is never POSTed: `refused`, `caller_gone` (before: no row until the
    listing ended; then, its client gone, the call POSTed all the same)."""
    upstream = HoldingUpstream()
    seen: list[list[Row]] = []

    async def test(url: str, rows: Callable[[], list[Row]], _: Listener) -> None:
        leaves = _sdk_cancels_ghost if client == "sdk" else _raw_hangs_up_on_ghost
        await leaves(url, lambda: len(upstream.held) == 1)
        seen.append(await _first_row(rows))

    final = _serving(tmp_path, upstream, test)
    assert seen[0] == final
    assert [row[:3] for row in final] == [("ghost", "refused", "caller_gone")]
    assert upstream.called == []  # never POSTed


def test_a_call_whose_client_left_is_not_sent_when_the_proxys_listing_ends(
    tmp_path: Path,
) -> None:
    """The pooled POST path: the raw client hangs up during the proxy's own listing, which
    then ends, listing `ghost` (the guard would now pass the call). The call is still never
    POSTed (the request ends there; the guard stops waiting for it), its one row `refused`,
    `caller_gone`, written when the client left."""
    upstream = HoldingUpstream()
    seen: list[list[Row]] = []

    async def test(url: str, rows: Callable[[], list[Row]], listener: Listener) -> None:
        await _raw_hangs_up_on_ghost(url, lambda: len(upstream.held) == 1)
        seen.append(await _first_row(rows))
        assert len(listener.budget) == 1  # the request waits for the listing, as before
        upstream.released = True
        await _until(lambda: len(listener.budget) == 0)  # the request ended
        assert listener.seam.guard.tool_status("ghost") is not None  # listed

    final = _serving(tmp_path, upstream, test)
    assert seen[0] == final == [("ghost", "refused", "caller_gone", "7")]
    assert upstream.called == []  # never POSTed


@pytest.mark.parametrize("upstream", ["process", "http"])
def test_a_call_waiting_for_the_proxys_listing_when_the_listener_stops_is_refused(
    tmp_path: Path, upstream: str
) -> None:
    """The listener stops under a call waiting for the proxy's own listing (the request's
    task cancelled, as uvicorn does past its shutdown grace; the call made as uvicorn calls
    the listener): never written to the server, so `refused`, `session_closed` (before: no
    row at all)."""
    server = Hostile("flood", tmp_path / "flood.jsonl")
    holding = HoldingUpstream()

    async def test(url: str, rows: Callable[[], list[Row]], listener: Listener) -> None:
        listed: Callable[[], bool]
        if upstream == "http":

            def listed() -> bool:
                return len(holding.held) == 1

        else:
            await _post(listener, url, "echo", 1)  # the flood server's first listing
            listed = _proxys_listing(server)
        async with anyio.create_task_group() as calls:
            calls.start_soon(_post, listener, url, "ghost", 2)
            await _until(listed)
            calls.cancel_scope.cancel()  # the listener stops under the call

    rows = _serving(tmp_path, holding if upstream == "http" else hostile_argv(server), test)
    assert rows[-1] == ("ghost", "refused", "session_closed", "2")
    assert [name for name, _ in server.calls()] == ([] if upstream == "http" else ["echo"])
    assert holding.called == []
