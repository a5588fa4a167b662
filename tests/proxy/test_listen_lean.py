"""A 2025-11-25 session's POSTs through `--listen` answered by the listener itself
(proxy/listen/_lean.py), past the SDK's transport: the wire a client sees is the spec's, the
messages related to a call still come on its POST's event stream, and a client that leaves
ends only its own wait.

Spec: MCP 2025-11-25 basic/transports "Streamable HTTP", "Sending Messages to the Server": a
POST of a notification or a response is answered 202 Accepted with no body; a POST of a
request is answered `application/json` (one object) or `text/event-stream` (the server's
messages, then the response, as the last event); "Disconnection SHOULD NOT be interpreted as
the client cancelling its request". Oracle for the related messages: the same call with the
official mcp 2.x `Client` (mode "legacy": the `initialize` handshake) run directly against the
server over stdio (tests/proxy/progress_server.py).
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "progress_server.py")]
#: The server the tests' own SDK clients start directly (`stdio_client`) is forked from the
#: worker's warm interpreter, as the proxy's is (tests/conftest.py `forked_children`).
pytestmark = pytest.mark.usefixtures("forked_children")
BOTH = "application/json, text/event-stream"


async def _steps(transport: Any, count: int) -> tuple[str, list[Any], list[Any]]:
    """`steps(count)` in a session with a progress callback and logging: (text, progress,
    logs)."""
    import mcp

    progress: list[Any] = []
    logs: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data))

    async with mcp.Client(transport, mode="legacy", logging_callback=on_log) as client:
        result = await client.call_tool("steps", {"count": count}, progress_callback=on_progress)
    return result.content[0].text, progress, logs  # type: ignore[union-attr]


def test_a_session_calls_progress_and_logs_reach_the_client_as_directly(
    listening_proxy: Callable[..., str],
) -> None:
    """Real parts: the official Python SDK client in a session, through `--listen`, in front
    of the SDK's own server (a process per session); the same call directly over stdio is
    the oracle: progress and log messages compared whole."""
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    direct = anyio.run(
        _steps, stdio_client(StdioServerParameters(command=SERVER[0], args=SERVER[1:])), 3
    )
    url = listening_proxy("progress", "--", *SERVER)
    proxied = anyio.run(_steps, streamable_http_client(url), 3)
    assert direct[0] == "done 3"
    assert [p[0] for p in direct[1]] == [1, 2, 3] and len(direct[2]) == 3  # the oracle is live
    assert proxied == direct


def _post(
    url: str, body: Any, headers: dict[str, str], method: str = "POST"
) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                (response.read()),
            )
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def _events(data: bytes) -> list[Any]:
    """The `data:` of each SSE event (WHATWG "Server-sent events" framing)."""
    events = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if lines:
            events.append(json.loads(b"\n".join(lines)))
    return events


def _call(rid: Any, count: int, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "steps", "arguments": {"count": count}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_the_wire_of_a_sessions_posts(listening_proxy: Callable[..., str]) -> None:
    """Spec-mandated (2025-11-25 "Sending Messages to the Server", "Session Management"): a
    notification is answered 202 with no body; a call whose progress comes first is an event
    stream (progress, then the response); a call nothing precedes one JSON object with the
    request's own id (a string id stays a string); a client that does not accept
    `text/event-stream` is refused 406 as by the SDK's transport, a foreign `Origin` 403 and
    a body that is not `application/json` 400 as by the SDK's check; after DELETE the
    session is unknown (404)."""
    url = listening_proxy("progress", "--", *SERVER)
    head = {"content-type": "application/json", "accept": BOTH}
    opening = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    status, headers, _ = _post(url, opening, head)
    assert status == 200
    session = {**head, "mcp-session-id": headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"

    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _post(url, initialized, session)[::2] == (202, b"")

    status, headers, data = _post(url, _call("c-1", 2, "tok"), session)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = _events(data)
    progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
    assert progress == [
        {"progressToken": "tok", "progress": 1, "total": 2, "message": "step 1"},
        {"progressToken": "tok", "progress": 2, "total": 2, "message": "step 2"},
    ]
    assert events[-1]["id"] == "c-1"
    assert events[-1]["result"]["content"] == [{"type": "text", "text": "done 2"}]

    listing = {"jsonrpc": "2.0", "id": "l-1", "method": "tools/list"}
    status, headers, data = _post(url, listing, session)
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(data)
    assert answer["id"] == "l-1"
    assert {t["name"] for t in answer["result"]["tools"]} == {"steps", "touch"}

    json_only = {**session, "accept": "application/json"}
    assert _post(url, _call(7, 1), json_only)[0] == 406
    # Spec-mandated ("Security Warning": validate Origin): the SDK's own check, on this path too
    assert _post(url, _call(9, 1), {**session, "origin": "http://evil.example"})[0] == 403
    assert _post(url, _call(10, 1), {**session, "content-type": "text/plain"})[0] == 400

    assert _post(url, None, session, "DELETE")[0] == 200
    assert _post(url, _call(8, 1), session)[0] == 404


def test_a_client_that_leaves_ends_its_wait_and_nothing_else(tmp_path: Path) -> None:
    """Spec-mandated (2025-11-25: "Disconnection SHOULD NOT be interpreted as the client
    cancelling its request"): the listener (in process, ASGI) stops waiting for the call
    whose client left, writes nothing to it and sends the server no `notifications/cancelled`;
    the session goes on (the next call is answered). Real parts: the hostile test server's
    `slow` tool never answers (tests/guard/hostile_server.py, scenario flood)."""
    from conduit_mcp.proxy import GuardSeam, GuardSettings
    from conduit_mcp.proxy.listen._server import Listener
    from tests.guard.conftest import Hostile

    from .conftest import hostile_argv
    from .test_listen_fuzz import PORT, _stateless

    server = Hostile("flood", tmp_path / "flood.jsonl")
    seam = GuardSeam(GuardSettings("lean-leave"))
    listener = Listener(seam, hostile_argv(server), host="127.0.0.1", port=PORT)
    head = [
        ("host", f"127.0.0.1:{PORT}"),
        ("accept", BOTH),
        ("content-type", "application/json"),
    ]
    opening = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }

    def call(rid: int, name: str, arguments: dict[str, Any]) -> bytes:
        params = {"name": name, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        return json.dumps(body).encode()

    async def main() -> tuple[Any, Any, Any]:
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            opened = await _stateless(listener, head, json.dumps(opening).encode(), [], False)
            start = next(m for m in opened.messages if m["type"] == "http.response.start")
            session_id = dict(start["headers"])[b"mcp-session-id"].decode()
            session = [
                *head,
                ("mcp-session-id", session_id),
                ("mcp-protocol-version", "2025-11-25"),
            ]
            initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await _stateless(listener, session, initialized.encode(), [], False)
            left = await _stateless(listener, session, call(1, "slow", {}), [], True)
            after = await _stateless(
                listener, session, call(2, "echo", {"message": "m"}), [], False
            )
            waiting = dict(listener.sessions[session_id].waiting)
            tg.cancel_scope.cancel()
        return left, after, waiting

    try:
        left, after, waiting = anyio.run(main)
    finally:
        seam.close()
    assert left.status is None  # nobody to answer
    assert json.loads(after.body)["result"]["content"][0]["text"] == "m"
    assert waiting == {}  # the wait of the call whose client left is gone
    received = server.received()
    assert [m["params"]["name"] for m in received if m.get("method") == "tools/call"] == [
        "slow",
        "echo",
    ]
    assert not [m for m in received if m.get("method") == "notifications/cancelled"]


def test_the_inbox_keeps_order_holds_senders_back_and_passes_a_left_turn_on() -> None:
    """conduit-defined (listen/_lean.Inbox): messages come out in the order sent; past its
    limit a sender waits for room; a sender woken for room that leaves (cancelled) before it
    runs passes the room to the next one (else both would wait for ever); once closed, what
    is queued still comes out, then `EndOfStream`, and a send raises
    `ClosedResourceError`."""
    import asyncio

    import pytest

    from conduit_mcp.proxy.listen._lean import Inbox

    async def main() -> None:
        inbox = Inbox(1)
        await inbox.send("a")
        loop = asyncio.get_running_loop()
        b = loop.create_task(inbox.send("b"))
        await anyio.wait_all_tasks_blocked()
        c = loop.create_task(inbox.send("c"))
        await anyio.wait_all_tasks_blocked()
        assert not b.done() and not c.done()  # no room: both wait
        assert await inbox.receive() == "a"  # room for b, which has not run yet
        b.cancel()  # b leaves before it runs
        with anyio.fail_after(10):  # only stops a hang: c never gets the room
            assert await inbox.receive() == "c"
        assert b.cancelled() and c.done()
        await inbox.send("d")
        inbox.close()
        assert await inbox.receive() == "d"
        with pytest.raises(anyio.EndOfStream):
            await inbox.receive()
        with pytest.raises(anyio.ClosedResourceError):
            await inbox.send("e")

    anyio.run(main)
