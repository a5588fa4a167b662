"""Sessions of `conduit-mcp proxy --listen` (2025-11-25 and before), attacked (issue 30, items 3
and 8): a request on a session opened by someone else, with another credential or none; one
client (one address) opening sessions until refused while another still opens one; a full
table making room by closing the session idle the longest; and each session's own protocol
version on its upstream requests.

Oracles: MCP 2025-11-25 basic/transports "Session Management" (a server answers a request
with a session id it does not know 404; the client then starts a new session) and "Protocol
Version Header" (the client sends the version negotiated for that connection); RFC 6585
section 4 (429) and RFC 9110 section 15.6.4 (503); the caps given to the listener and what
the upstream (tests/proxy/http_server.py, the official Python SDK server) logged receiving.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._budget import ClientBudget
from conduit_mcp.proxy.listen._protocol import http_protocol
from conduit_mcp.proxy.listen._server import Listener

from .conftest import header_log

OPENER = "Bearer opener-s3cret-4b1d"
OTHER = "Bearer other-s3cret-9c2e"


def _initialize(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "sessions-test", "version": "0"},
        },
    }


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _messages(data: bytes) -> list[Any]:
    """The JSON-RPC messages of a response body: one JSON object, or the `data:` lines of an
    event stream."""
    text = data.decode()
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [
        json.loads(line[5:])
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def _post(url: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], list[Any]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            fields = {k.lower(): v for k, v in response.headers.items()}
            return response.status, fields, _messages(response.read())
    except urllib.error.HTTPError as exc:
        fields = {k.lower(): v for k, v in exc.headers.items()}
        return exc.code, fields, _messages(exc.read())


def _open(url: str, headers: dict[str, str], version: str = "2025-11-25") -> str:
    """A session opened through the proxy (initialize, then initialized): its id."""
    status, fields, _ = _post(url, _initialize(version), headers)
    assert status == 200
    session = fields["mcp-session-id"]
    session_headers = {**headers, "mcp-session-id": session, "mcp-protocol-version": version}
    assert _post(url, _INITIALIZED, session_headers)[0] == 202
    return session


def test_a_session_answers_only_the_credential_that_opened_it(
    sdk_http_server: tuple[str, Path], listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """Measured on main: with `--listen --upstream`, a request with no credential, or another
    one, on a session someone else opened reached the upstream carrying the opener's bearer
    token and was answered. Now it is answered 404 as if the session did not exist (the spec's
    answer to an unknown session), the upstream never sees it, and the proxy's log names the
    client by its credential's keyed hash only; the opener is still served. A session opened
    without a credential is as closed to a request with one."""
    upstream, log = sdk_http_server
    url = listening_proxy("owned", "--upstream", upstream)
    session = _open(url, {"authorization": OPENER})
    named = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}

    status, _, body = _post(url, _LIST, named)
    assert status == 404 and body[0]["error"]["code"] == -32600
    status, _, body = _post(url, _LIST, {**named, "authorization": OTHER})
    assert status == 404 and body[0]["error"]["message"] == "Session not found"
    status, _, body = _post(url, _LIST, {**named, "authorization": OPENER})
    assert status == 200
    assert [tool["name"] for tool in body[-1]["result"]["tools"]] == ["add", "forecast", "region"]

    anonymous = _open(url, {})
    status, _, _ = _post(
        url,
        _LIST,
        {"mcp-session-id": anonymous, "mcp-protocol-version": "2025-11-25", "authorization": OTHER},
    )
    assert status == 404
    status, _, _ = _post(
        url, _LIST, {"mcp-session-id": anonymous, "mcp-protocol-version": "2025-11-25"}
    )
    assert status == 200

    # Upstream, within each upstream session: the initialized notification and the one
    # tools/list its opener sent (on main: the two refused requests too, on the opener's).
    posts: dict[str, list[str | None]] = {}
    for request in header_log(log):
        fields = request["headers"]
        if request["method"] == "POST" and "mcp-session-id" in fields:
            posts.setdefault(fields["mcp-session-id"], []).append(fields.get("authorization"))
    assert sorted(posts.values(), key=repr) == [[OPENER, OPENER], [None, None]]

    logged = "".join(p.read_text() for p in tmp_path.glob("proxy-*.jsonl"))
    assert "s3cret" not in logged
    refusals = [
        json.loads(line)["message"] for line in logged.splitlines() if "not the client" in line
    ]
    assert len(refusals) == 3
    assert all("credential #" in m or "peer 127.0.0.1" in m for m in refusals)


def test_each_session_stamps_its_own_negotiated_version(
    sdk_http_server: tuple[str, Path], listening_proxy: Callable[..., str]
) -> None:
    """Measured on main: every session's upstream requests carried the protocol version of
    whichever session initialized last. Session A negotiates 2025-06-18, session B then
    2025-11-25; A's next request upstream still says 2025-06-18 (spec 2025-11-25
    basic/transports "Protocol Version Header": the version negotiated for that session)."""
    upstream, log = sdk_http_server
    url = listening_proxy("versions", "--upstream", upstream)
    first = _open(url, {}, "2025-06-18")
    _open(url, {}, "2025-11-25")
    status, _, body = _post(
        url, _LIST, {"mcp-session-id": first, "mcp-protocol-version": "2025-06-18"}
    )
    assert status == 200 and "result" in body[-1]
    by_session: dict[str, set[str]] = {}
    for request in header_log(log):
        fields = request["headers"]
        if request["method"] == "POST" and "mcp-session-id" in fields:
            by_session.setdefault(fields["mcp-session-id"], set()).add(
                fields.get("mcp-protocol-version", "")
            )
    assert sorted(by_session.values(), key=sorted) == [{"2025-06-18"}, {"2025-11-25"}]


# -- session budgets, in process: a real uvicorn, clients from several loopback addresses --


async def _serving(
    upstream: str,
    budget: ClientBudget,
    test: Callable[[str, Listener], Awaitable[Any]],
    idle_under_pressure: float = 60.0,
) -> Any:
    """A `Listener` in front of `upstream`, on uvicorn with the listener's protocol on a free
    loopback port, while `test(url, listener)` runs."""
    import uvicorn

    from tests.guard.conftest import free_port

    port = free_port()
    seam = GuardSeam(GuardSettings("sessions"))
    listener = Listener(
        seam,
        HttpUpstream(upstream),
        host="127.0.0.1",
        port=port,
        budget=budget,
        idle_under_pressure=idle_under_pressure,
    )
    config = uvicorn.Config(
        listener,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        http=http_protocol(),
        ws="none",
    )
    server = uvicorn.Server(config)
    served = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve()
        finally:
            served.set()

    try:
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            tg.start_soon(serve)
            while not server.started:
                await anyio.sleep(0.01)
            try:
                with anyio.fail_after(60):
                    return await test(f"http://127.0.0.1:{port}/mcp", listener)
            finally:
                server.should_exit = True  # uvicorn closes its sockets, then the sessions end
                with anyio.fail_after(30):
                    await served.wait()
                tg.cancel_scope.cancel()
    finally:
        seam.close()


async def _apost(
    url: str, source: str, body: Any, headers: dict[str, str]
) -> tuple[int, dict[str, str], list[Any]]:
    import httpx

    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, timeout=30) as client:
        response = await client.post(
            url,
            json=body,
            headers={"accept": "application/json, text/event-stream", **headers},
        )
        fields = {k.lower(): v for k, v in response.headers.items()}
        return response.status_code, fields, _messages(response.content)


def _host(url: str) -> dict[str, str]:
    return {"host": url.split("/")[2]}


def test_one_address_fills_its_share_and_another_client_still_opens_a_session(
    sdk_http_server: tuple[str, Path],
) -> None:
    """Measured on main: one client with no credential opened 1,000 sessions in 8 s and every
    other client's `initialize` got 503 (sessions were capped only in total). Caps 2 per
    client and 3 per address: 127.0.0.1 without a credential opens 2, its third is 429
    (`too_many_sessions_per_client`); a made-up credential from the same address opens the
    address's third, a fourth made-up one is 429 (`too_many_sessions_per_address`); a client
    at 127.0.0.2 still opens a session."""
    upstream, _ = sdk_http_server
    budget = ClientBudget(max_sessions_per_client=2, max_sessions_per_address=3)

    async def test(url: str, listener: Listener) -> list[tuple[int, Any]]:
        host = _host(url)
        outcomes = []
        for headers in (
            {},
            {},
            {},
            {"authorization": "Bearer made-up-1"},
            {"authorization": "Bearer made-up-2"},
        ):
            status, fields, body = await _apost(
                url, "127.0.0.1", _initialize(), {**host, **headers}
            )
            outcomes.append((status, fields.get("retry-after"), body[0].get("error")))
        status, _, body = await _apost(url, "127.0.0.2", _initialize(), host)
        outcomes.append((status, None, body[0].get("error")))
        return outcomes

    outcomes = anyio.run(_serving, upstream, budget, test)
    statuses = [status for status, _, _ in outcomes]
    assert statuses == [200, 200, 429, 200, 429, 200]
    assert outcomes[2][1] == "1" and outcomes[4][1] == "1"
    assert outcomes[2][2]["data"]["reason"] == "too_many_sessions_per_client"
    assert outcomes[4][2]["data"]["reason"] == "too_many_sessions_per_address"
    assert budget.sessions == 0  # every session ended with the listener


def test_a_full_table_closes_the_session_idle_the_longest_for_a_new_client(
    sdk_http_server: tuple[str, Path],
) -> None:
    """Sessions capped at 2 in all, a session idle for `idle_under_pressure` (0 here) may be
    closed to make room: clients at 127.0.0.1 and 127.0.0.2 open one each; a client at
    127.0.0.3 still opens one (on main: 503 until a session ended by itself, 30 minutes
    idle); the first session, idle the longest, is gone (404, the spec's answer that tells its
    client to start a new session); the second is still served."""
    upstream, _ = sdk_http_server
    budget = ClientBudget(max_sessions=2)

    async def test(url: str, listener: Listener) -> tuple[int, int, int]:
        host = _host(url)
        sessions = []
        for source in ("127.0.0.1", "127.0.0.2"):
            status, fields, _ = await _apost(url, source, _initialize(), host)
            assert status == 200
            sessions.append(fields["mcp-session-id"])
        status, _, _ = await _apost(url, "127.0.0.3", _initialize(), host)
        named = {**host, "mcp-protocol-version": "2025-11-25"}
        first, _, _ = await _apost(
            url, "127.0.0.1", _LIST, {**named, "mcp-session-id": sessions[0]}
        )
        second, _, _ = await _apost(
            url, "127.0.0.2", _INITIALIZED, {**named, "mcp-session-id": sessions[1]}
        )
        return status, first, second

    opened, first, second = anyio.run(_serving, upstream, budget, test, 0.0)
    assert opened == 200
    assert first == 404
    assert second == 202


@pytest.mark.parametrize("cap", ["client", "address"])
def test_a_busy_session_is_never_closed_to_make_room(
    sdk_http_server: tuple[str, Path], cap: str
) -> None:
    """Only a session without a POST in flight may be closed under pressure: with the client's
    (or the address's) one session busy on a request that has not ended, its next
    `initialize` is refused 429, the busy session untouched."""
    upstream, _ = sdk_http_server
    budget = (
        ClientBudget(max_sessions_per_client=1)
        if cap == "client"
        else ClientBudget(max_sessions_per_address=1)
    )

    async def test(url: str, listener: Listener) -> tuple[int, int]:
        host = _host(url)
        status, fields, _ = await _apost(url, "127.0.0.1", _initialize(), host)
        assert status == 200
        session = listener.sessions[fields["mcp-session-id"]]
        session.posts += 1  # a POST of the session in flight
        status, _, _ = await _apost(url, "127.0.0.1", _initialize(), host)
        session.posts -= 1
        return status, len(listener.sessions)

    status, open_sessions = anyio.run(_serving, upstream, budget, test, 0.0)
    assert status == 429
    assert open_sessions == 1
