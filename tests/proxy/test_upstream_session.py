"""The session client of an HTTP upstream (`upstream/_session.UpstreamSession`) against a
scripted server that loses its session, cuts a stream, or forges an answer on cue.

Spec-mandated (MCP 2025-11-25 basic/transports "Streamable HTTP", "Session Management" 3-4): a
server that terminated a session MUST answer 404 to requests carrying its id, and the client
MUST then start a new session with a new `InitializeRequest` without a session id; every
request of a session carries its `Mcp-Session-Id` and the `MCP-Protocol-Version` negotiated.
conduit-defined (docs/proxy.md "When the upstream loses the session"): the new session is
opened with the client's own initialize parameters and must choose the same version; a request
answered 404 never ran and is sent again (once); a request whose stream was cut may have run
and is answered with an error, never sent again; what the client sends meanwhile goes to the
new session only; the client is told `notifications/tools/list_changed`; at most
`MAX_REOPENS` sessions are opened again until a request succeeds.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.upstream._session import MAX_REOPENS, UpstreamSession

from .scripted_http import (
    LAST_CHUNK,
    SSE_HEAD,
    Connection,
    Request,
    Scripted,
    empty,
    event,
    json_answer,
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _list(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}


class Server:
    """A session server: `initialize` opens session `s-N`; a request naming a session not
    alive is answered 404; `tools/call` of `slow` streams one progress event and waits for
    `cut`, then the connection is dropped (a restart under it)."""

    def __init__(self) -> None:
        self.alive: set[str] = set()
        self.opened = 0
        self.cut = anyio.Event()
        self.hold_initialize: anyio.Event | None = None
        self.waiting: Request | None = None  # an initialize held by `hold_initialize`
        self.version = "2025-11-25"
        self.lose_at_once = False  # every session is lost as soon as it is opened

    async def __call__(self, request: Request, connection: Connection) -> None:
        if request.method == "GET":
            await connection.write(empty(405))
            return
        if request.method == "DELETE":
            await connection.write(empty(200))
            return
        message = request.message
        sid = request.headers.get("mcp-session-id")
        if message.get("method") == "initialize":
            if self.hold_initialize is not None and self.opened >= 1:
                self.waiting = request
                await self.hold_initialize.wait()
            self.opened += 1
            session = f"s-{self.opened}"
            if not self.lose_at_once:
                self.alive.add(session)
            result = {
                "protocolVersion": self.version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"},
            }
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            await connection.write(json_answer(answer, headers={"mcp-session-id": session}))
            return
        if sid not in self.alive:
            await connection.write(json_answer({"error": "session not found"}, status=404))
            return
        if "id" not in message:
            await connection.write(empty(202))
            return
        if message.get("method") == "tools/call":
            await connection.write(SSE_HEAD)
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1},
            }
            await connection.write(event(progress))
            await self.cut.wait()
            await connection.close()
            return
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
        await connection.write(json_answer(answer))

    def lose_all(self) -> None:
        self.alive.clear()
        self.cut.set()


async def _run(server: Server, steps: Any) -> tuple[Scripted, list[dict[str, Any]]]:
    scripted = Scripted(server)
    got: list[dict[str, Any]] = []
    arrived = anyio.Event()

    async def deliver(message: dict[str, Any]) -> None:
        got.append(message)
        arrived.set()

    async with anyio.create_task_group() as tg:
        await tg.start(scripted.serve)
        async with UpstreamSession(HttpUpstream(scripted.url), deliver) as session:

            async def answered(count: int) -> None:
                with anyio.fail_after(10):
                    while len(got) < count:
                        nonlocal arrived
                        arrived = anyio.Event()
                        await arrived.wait()

            await steps(session, answered, tg, scripted)
        tg.cancel_scope.cancel()
    return scripted, got


def _posts(scripted: Scripted) -> list[tuple[str | None, Any, str | None]]:
    return [
        (r.message.get("method"), r.message.get("id"), r.headers.get("mcp-session-id"))
        for r in scripted.requests
        if r.method == "POST"
    ]


@pytest.mark.anyio
async def test_a_lost_session_is_opened_again_and_only_what_never_ran_is_sent_again() -> None:
    server = Server()

    async def steps(session: UpstreamSession, answered: Any, tg: Any, scripted: Any) -> None:
        await session.send(INITIALIZE)
        await answered(1)
        await session.send(INITIALIZED)
        slow = {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "slow"}}
        await session.send(slow)
        await answered(2)  # its progress: the call is running upstream
        server.lose_all()  # the server restarts: the session is gone, the stream cut
        await session.send(_list(11))
        await answered(5)  # the call's error, list_changed, the listing

    scripted, got = await _run(server, steps)
    by_id = {m.get("id"): m for m in got if "id" in m}
    assert by_id[1]["result"]["protocolVersion"] == "2025-11-25"
    # The call was under way when its stream was cut: it may have run, so it is an error ...
    assert by_id[10]["error"]["code"] == -32603
    assert "may have run" in by_id[10]["error"]["message"]
    # ... the listing was answered 404 (never ran): sent again to the new session.
    assert by_id[11]["result"] == {"tools": []}
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in got
    posts = _posts(scripted)
    assert posts == [
        ("initialize", 1, None),
        ("notifications/initialized", None, "s-1"),
        ("tools/call", 10, "s-1"),
        ("tools/list", 11, "s-1"),  # 404
        ("initialize", posts[4][1], None),  # a new InitializeRequest without a session id
        ("notifications/initialized", None, "s-2"),
        ("tools/list", 11, "s-2"),
    ]
    assert [p for p in posts if p[0] == "tools/call"] == [("tools/call", 10, "s-1")]
    again = [r.message for r in scripted.requests if r.method == "POST"][4]
    assert again["id"] != 1 and again["params"] == INITIALIZE["params"]  # same parameters
    later = [r for r in scripted.requests if r.headers.get("mcp-session-id") == "s-2"]
    assert all(r.headers.get("mcp-protocol-version") == "2025-11-25" for r in later)


@pytest.mark.anyio
async def test_what_the_client_sends_while_the_session_is_reopened_goes_to_the_new_one() -> None:
    server = Server()
    server.hold_initialize = anyio.Event()

    async def steps(session: UpstreamSession, answered: Any, tg: Any, scripted: Any) -> None:
        await session.send(INITIALIZE)
        await answered(1)
        await session.send(INITIALIZED)
        server.lose_all()
        await session.send(_list(2))  # 404: the session is being opened again ...
        with anyio.fail_after(10):
            while server.waiting is None:
                await anyio.sleep(0)
        notice = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        tg.start_soon(session.send, notice)  # ... meanwhile the client sends this
        await anyio.wait_all_tasks_blocked()
        server.hold_initialize.set()  # type: ignore[union-attr]
        await answered(3)  # list_changed and the listing
        with anyio.fail_after(10):
            while not any(r.headers.get("mcp-session-id") == "s-2" for r in roots(scripted)):
                await anyio.sleep(0)

    def roots(scripted: Scripted) -> list[Request]:
        return [
            r
            for r in scripted.requests
            if r.method == "POST" and r.message.get("method") == "notifications/roots/list_changed"
        ]

    scripted, _got = await _run(server, steps)
    sent = [r.headers.get("mcp-session-id") for r in roots(scripted)]
    assert sent == ["s-2"]  # never sent to the lost session


@pytest.mark.anyio
async def test_a_server_that_loses_every_session_gets_a_bounded_number_of_new_ones() -> None:
    server = Server()

    async def steps(session: UpstreamSession, answered: Any, tg: Any, scripted: Any) -> None:
        await session.send(INITIALIZE)
        await answered(1)
        server.lose_at_once = True
        server.alive.clear()
        for n in range(6):
            await session.send(_list(100 + n))
            await answered(2 + n + min(n + 1, MAX_REOPENS))  # list_changed per new session

    scripted, got = await _run(server, steps)
    initializes = [p for p in _posts(scripted) if p[0] == "initialize"]
    assert len(initializes) == 1 + MAX_REOPENS
    errors = [m for m in got if "error" in m]
    assert [m["id"] for m in errors] == list(range(100, 106))
    assert all("ended the session (HTTP 404)" in m["error"]["message"] for m in errors)
    assert all(m["error"]["data"]["status"] == 404 for m in errors)


@pytest.mark.anyio
async def test_a_new_session_on_another_version_is_not_used() -> None:
    """The client negotiated 2025-11-25; a server that now chooses another version would
    change the protocol under the client: the request gets an error instead."""
    server = Server()

    async def steps(session: UpstreamSession, answered: Any, tg: Any, scripted: Any) -> None:
        await session.send(INITIALIZE)
        await answered(1)
        server.version = "2025-06-18"
        server.lose_all()
        await session.send(_list(2))
        await answered(2)

    scripted, got = await _run(server, steps)
    assert got[-1]["id"] == 2 and "error" in got[-1]
    assert not any(r.headers.get("mcp-session-id") == "s-2" for r in scripted.requests)


@pytest.mark.anyio
async def test_a_response_naming_another_request_is_no_ones_answer() -> None:
    """A request's event stream that carries a response naming another request (the other
    one in flight) then its own: only its own is delivered, the forged one dropped."""

    async def handler(request: Request, connection: Connection) -> None:
        message = request.message
        if request.method != "POST" or "id" not in message:
            await connection.write(empty(202))
            return
        if message["id"] == 1:  # waits: the forged answer must not end it
            return
        forged = {"jsonrpc": "2.0", "id": 1, "result": {"forged": True}}
        own = {"jsonrpc": "2.0", "id": 2, "result": {"own": True}}
        await connection.write(SSE_HEAD + event(forged) + event(own) + LAST_CHUNK)

    scripted = Scripted(handler)
    got: list[dict[str, Any]] = []

    async def deliver(message: dict[str, Any]) -> None:
        got.append(message)

    modern = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    async with anyio.create_task_group() as tg:
        await tg.start(scripted.serve)
        async with UpstreamSession(HttpUpstream(scripted.url), deliver) as session:
            await session.send({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": modern})
            await session.send({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": modern})
            with anyio.fail_after(10):
                while not got:
                    await anyio.sleep(0)
            await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert got == [{"jsonrpc": "2.0", "id": 2, "result": {"own": True}}]


@pytest.mark.anyio
async def test_an_event_stream_answer_keeps_its_connection() -> None:
    """RFC 9112 section 9.3: a persistent connection serves the next request once the
    response's body ended. A server writes the end of an event stream after the response
    event: the connection is kept for the next request, not closed (54 connections for 53
    requests before)."""

    delivered = anyio.Event()

    async def handler(request: Request, connection: Connection) -> None:
        nonlocal delivered
        message = request.message
        if request.method != "POST" or "id" not in message:
            await connection.write(empty(202))
            return
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        await connection.write(SSE_HEAD + event(answer))
        await delivered.wait()  # the stream's end comes after the response was delivered
        delivered = anyio.Event()
        await connection.write(LAST_CHUNK)

    scripted = Scripted(handler)
    got: list[dict[str, Any]] = []

    async def deliver(message: dict[str, Any]) -> None:
        got.append(message)
        delivered.set()

    modern = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    async with anyio.create_task_group() as tg:
        await tg.start(scripted.serve)
        async with UpstreamSession(HttpUpstream(scripted.url), deliver) as session:
            for rid in range(1, 11):
                await session.send(
                    {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": modern}
                )
                with anyio.fail_after(10):
                    while len(got) < rid:
                        await anyio.sleep(0)
                with anyio.fail_after(10):  # the stream's end read: the connection is idle
                    while len(session.pool._idle) != 1:
                        await anyio.sleep(0)
        tg.cancel_scope.cancel()
    assert [m["id"] for m in got] == list(range(1, 11))
    assert scripted.connections == 1
