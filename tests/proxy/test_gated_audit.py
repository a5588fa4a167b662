"""A session's call audit kept whole by `GatedSink` (proxy/listen/_gated.py): every request in
flight known by its id, a cancelled call's row, a call in flight at the session's end.

Found by a hostile review of the call audit: a tools/call reusing the id of a ping in flight
had the ping's `{}` audited as its answer; a cancelled call left no row, and reusing its id put
its late answer on the next call's row; a call in flight when the session ended was never
recorded. Real parts: `CallerGate`, `CallAuditor`, a sqlite `PinStore` (rows read back as an
auditor reads them); the sink's client side is a list.

Oracle: MCP 2025-11-25 basic "Requests" (an id MUST NOT have been used before by the
requestor in the same session: JSON-RPC -32600 Invalid Request for one that is), basic/
utilities/cancellation (a cancelled request's response may still come and MAY be ignored),
and who answered, as each test arranges it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from conduit_mcp.pins import PinStore
from tests.guard.conftest import Hostile
from tests.proxy.jwks import Issuer

from .conftest import hostile_argv
from .test_listen_forged_audit import _rows
from .test_listen_identity import auth_args, conduit, token
from .test_listen_identity import issuer as issuer  # the fixture

ECHOED = {"content": [{"type": "text", "text": "hi"}]}


class _Client:
    """The session's client side: what the sink hands it."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, item: Any) -> None:
        self.sent.append(item.message.model_dump(by_alias=True, exclude_none=True))


def _request(request_id: Any, method: str, tool: str | None = None) -> Any:
    from mcp.types.jsonrpc import JSONRPCRequest

    params = {"name": tool, "arguments": {}} if tool is not None else {}
    return JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)


def _cancel(request_id: Any) -> Any:
    from mcp.types.jsonrpc import JSONRPCNotification

    params = {"requestId": request_id}
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params)


async def _went_on(sink: Any, request: Any) -> bool:
    """What the session's pump does with a client request: `refused` lets it go on, then it
    is handed to the guard's write side (`writing`). `True`: it went on."""
    if await sink.refused(request, None):
        return False
    sink.writing(request.id)
    return True


def _answer(request_id: Any, result: dict[str, Any]) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCResponse

    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def _audited(
    tmp_path: Path, script: Any, metrics: Any = None, **patches: int
) -> tuple[list[Any], list[Any]]:
    """Run `script(sink)` against a `GatedSink` of caller alice of group ops (a policy naming
    ops, allowing every tool); close the session; the messages the client got and the rows
    read back. `metrics`: the listener's `Metrics` the gate counts into."""
    from conduit_mcp.policy import Caller, Policy
    from conduit_mcp.proxy._access import Access
    from conduit_mcp.proxy._callaudit import CallAuditor
    from conduit_mcp.proxy.listen import _gated
    from conduit_mcp.proxy.listen._callers import CallerGate

    policy = Policy.parse(FLOOD_POLICY.replace("flood/*", "s/*"), "allow", version=1)
    with pytest.MonkeyPatch.context() as patched:
        for name, value in patches.items():
            patched.setattr(_gated, name, value)
        with PinStore(str(tmp_path / "pins.db")) as store:
            auditor = CallAuditor(store, "s", interval=3600)  # written at close

            async def main() -> list[Any]:
                gate = CallerGate(Access.fixed("s", policy), auditor=auditor, metrics=metrics)
                client = _Client()
                sink = _gated.GatedSink(client, gate, Caller("alice", frozenset({"ops"})))
                await script(sink)
                sink.close()
                return client.sent

            sent = anyio.run(main)
            auditor.close()
            rows = [(r.tool, r.verdict, r.reason, r.request_id) for r in store.calls_since(0)]
    return sent, rows


def test_a_call_reusing_the_id_of_a_ping_in_flight_is_refused_and_the_ping_keeps_its_answer(
    tmp_path: Path,
) -> None:
    """The review's case: ping 5 in flight, then tools/call 5. Before, only tools/list and
    tools/call ids were known: the call went on, the ping's `{}` was audited as its result.
    Now the call is answered -32600 at once, never sent on, its row `refused`
    (`request_id_in_use`); the ping's `{}` reaches the client as the ping's, no row."""
    decided: list[bool] = []

    async def script(sink: Any) -> None:
        decided.append(await sink.refused(_request(5, "ping"), None))
        decided.append(await sink.refused(_request(" 5", "tools/call", "echo"), None))
        await sink.send(_answer(5, {}))

    sent, rows = _audited(tmp_path, script)
    assert decided == [False, True]
    assert [(m["id"], m["error"]["code"]) for m in sent if "error" in m] == [(" 5", -32600)]
    assert sent[-1] == {"jsonrpc": "2.0", "id": 5, "result": {}}
    assert rows == [("echo", "refused", "request_id_in_use", " 5")]


def test_a_cancelled_call_gets_its_row_and_its_id_stays_taken(tmp_path: Path) -> None:
    """A call the client cancels (the SDK's courtesy cancel after a timeout): its row is
    `unanswered`, reason `cancelled` (before: none). Reusing its id is refused (before: the
    second call's row took the first one's late answer). A cancelled call whose answer still
    comes (the guard passed it before it read the cancellation) is audited by that answer."""

    async def script(sink: Any) -> None:
        assert await _went_on(sink, _request(1, "tools/call", "slow"))
        assert await _went_on(sink, _request(2, "tools/call", "echo"))
        sink.cancelled(_cancel(1))
        sink.cancelled(_cancel(2))
        assert await sink.refused(_request(1, "tools/call", "other"), None) is True
        await sink.send(_answer(2, ECHOED))  # call 2's answer, late

    sent, rows = _audited(tmp_path, script)
    assert [(m["id"], m["error"]["code"]) for m in sent if "error" in m] == [(1, -32600)]
    assert sorted(rows) == [
        ("echo", "passed", None, "2"),
        ("other", "refused", "request_id_in_use", "1"),
        ("slow", "unanswered", "cancelled", "1"),
    ]


def test_a_call_in_flight_when_the_session_ends_gets_its_row(tmp_path: Path) -> None:
    """The session ends (a DELETE, the idle timeout, the server gone) with a call in flight:
    its row is `unanswered`, reason `session_closed` (before: none); a listing in flight,
    or a ping, writes no row (the call audit is of tools/call)."""

    async def script(sink: Any) -> None:
        for request in (
            _request(1, "tools/call", "slow"),
            _request(2, "tools/list"),
            _request(3, "ping"),
        ):
            assert await _went_on(sink, request)

    _, rows = _audited(tmp_path, script)
    assert rows == [("slow", "unanswered", "session_closed", "1")]


def test_a_call_never_written_when_the_session_ends_is_refused(tmp_path: Path) -> None:
    """A call the pump let go on but never handed to the guard's write side (it waited for the
    proxy's own tools/list, `GuardSeam.before_call`) when the session ends: the server never
    got it, so its row is `refused`, reason `session_closed` (was `unanswered`, which says
    the server got it); counted `allowed` (the policy let it), as the guard's refusal of a
    call never written is. A call handed on is `unanswered`, as before."""
    from conduit_mcp.proxy._metrics import Metrics

    metrics = Metrics("s")

    async def script(sink: Any) -> None:
        assert await _went_on(sink, _request(1, "tools/call", "sent"))
        assert await sink.refused(_request(2, "tools/call", "listing"), None) is False

    _, rows = _audited(tmp_path, script, metrics=metrics)
    assert sorted(rows) == [
        ("listing", "refused", "session_closed", "2"),
        ("sent", "unanswered", "session_closed", "1"),
    ]
    assert _caller_calls(metrics.render().decode()) == {("ops", "allowed"): 2}


def test_cancelled_ids_kept_are_bounded_and_each_let_go_gets_its_row(tmp_path: Path) -> None:
    """Memory grows with the calls in flight, not with the session's history: past
    `CANCELLED_KEPT` cancellations the oldest is let go, its row written then (and its id
    free again, as the guard's own table frees it)."""

    async def script(sink: Any) -> None:
        for request_id in range(1, 6):
            assert await _went_on(sink, _request(request_id, "tools/call", "slow"))
            sink.cancelled(_cancel(request_id))
        assert len(sink._cancelled) == 2
        assert await _went_on(sink, _request(1, "tools/call", "again"))

    _, rows = _audited(tmp_path, script, CANCELLED_KEPT=2)
    assert [(tool, verdict, reason) for tool, verdict, reason, _ in rows] == [
        *[("slow", "unanswered", "cancelled")] * 5,
        ("again", "unanswered", "session_closed"),
    ]
    assert [r[3] for r in rows] == ["1", "2", "3", "4", "5", "1"]


def _caller_calls(exposition: str) -> dict[tuple[str, str], float]:
    """`conduit_mcp_proxy_caller_calls_total` by (group, verdict), read back with
    prometheus-client's own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (sample.labels["group"], sample.labels["verdict"]): sample.value
        for family in text_string_to_metric_families(exposition)
        if family.name == "conduit_mcp_proxy_caller_calls"
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def test_the_sessions_own_refusals_are_counted_by_group(tmp_path: Path) -> None:
    """conduit-defined (docs/identity.md: `/metrics` counts each caller's calls by group and
    verdict): a call refused for reusing the id of a request in flight, and one past the
    session's bound in flight, were audited `refused` but never counted. Each is counted
    `refused` under the caller's group, as a policy's refusal is; a ping refused for the same
    reasons is no call, and is not counted."""
    from conduit_mcp.proxy._metrics import Metrics

    metrics = Metrics("s")

    async def script(sink: Any) -> None:
        assert await _went_on(sink, _request(1, "tools/call", "slow"))
        assert await _went_on(sink, _request(2, "ping"))
        assert await sink.refused(_request(1, "tools/call", "reused"), None) is True
        assert await sink.refused(_request(2, "ping"), None) is True
        assert await sink.refused(_request(3, "tools/call", "flood"), None) is True  # past 2
        assert await sink.refused(_request(4, "ping"), None) is True
        await sink.send(_answer(1, ECHOED))

    sent, rows = _audited(tmp_path, script, metrics=metrics, MAX_WATCHED=2)
    assert [(m["id"], m["error"]["code"]) for m in sent if "error" in m] == [
        (1, -32600),
        (2, -32600),
        (3, -32603),
        (4, -32603),
    ]
    assert sorted(rows) == [
        ("flood", "refused", "too_many_in_flight", "3"),
        ("reused", "refused", "request_id_in_use", "1"),
        ("slow", "passed", None, "1"),
    ]
    assert _caller_calls(metrics.render().decode()) == {
        ("ops", "allowed"): 1,
        ("ops", "refused"): 2,
    }


FLOOD_POLICY = """\
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["flood/*"]
"""


def _flood_proxy(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> tuple[str, Hostile, Path]:
    """`conduit-mcp proxy --listen --auth jwt --audit-calls` in front of the hostile `flood`
    scenario (a process per session), its policy allowing group ops every tool: the URL,
    the server (its log) and the pin store."""
    store = tmp_path / "pins.db"
    policy = tmp_path / "policy.toml"
    policy.write_text(FLOOD_POLICY, encoding="utf-8")
    done = conduit("policy", "set", str(policy), "--store", str(store), "--approver", "alice")
    assert done.returncode == 0, done.stderr
    server = Hostile("flood", tmp_path / "flood.jsonl")
    url = listening_proxy(
        "flood",
        *("--pins", str(store), "--new", "pin", "--audit-calls", *auth_args(issuer)),
        *("--", *hostile_argv(server)),
    )
    return url, server, store


def test_a_call_the_sdk_client_abandons_is_recorded_unanswered(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """End to end: `conduit-mcp proxy --listen --auth jwt --audit-calls` as a process, the
    hostile server's `flood` scenario (its `slow` is never answered) per session, the official
    Python SDK client (mcp 2.x, a session over Streamable HTTP) calling `slow` for a
    caller that gives up: the SDK writes `notifications/cancelled` ("courtesy cancel"). The
    call reached the server (its log), no answer came: its row is `unanswered`, reason
    `cancelled`, written when the client closes the session (before: no row at all)."""
    url, server, store = _flood_proxy(issuer, listening_proxy, tmp_path)

    async def calls() -> str:
        import httpx2
        import mcp
        from mcp.client.streamable_http import streamable_http_client

        bearer = token(issuer, "alice", "ops")
        # The abandoned call's POST stays open until the session ends (nothing answers it):
        # a read timeout past the test's length, not httpx's 5 s.
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bearer}"}, timeout=60)
        client = mcp.Client(streamable_http_client(url, http_client=http), mode="legacy")
        async with http, client:
            await client.list_tools()  # the scenario's first listing (its second is held)
            echoed = (await client.call_tool("echo", {"message": "hi"})).content[0].text
            with anyio.move_on_after(0.5) as waited:  # the caller gives up
                await client.call_tool("slow", {})
            assert waited.cancelled_caught
        return str(echoed)

    assert anyio.run(calls) == "hi"
    assert [name for name, _ in server.calls()] == ["echo", "slow"]
    rows = _rows(store, 2)
    assert [(r.subject, r.tool, r.verdict, r.reason) for r in rows] == [
        ("alice", "echo", "passed", None),
        ("alice", "slow", "unanswered", "cancelled"),
    ]


def test_a_call_waiting_for_the_proxys_own_listing_when_the_session_ends_is_refused(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """End to end, the official Python SDK client over Streamable HTTP: after its listing, the
    client calls `ghost`, a tool the guard has not seen, so the proxy lists the tools itself
    first (the flood scenario holds that second listing back); the client gives up and
    closes the session while the call waits for it. The call was never written to the server
    (its log has no `ghost`): its row is `refused`, reason `session_closed`; before, it was
    `unanswered`, which says the server got it."""
    url, server, store = _flood_proxy(issuer, listening_proxy, tmp_path)

    async def calls() -> None:
        import httpx2
        import mcp
        from mcp.client.streamable_http import streamable_http_client

        bearer = token(issuer, "alice", "ops")
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bearer}"}, timeout=60)
        client = mcp.Client(streamable_http_client(url, http_client=http), mode="legacy")
        async with http, client:
            await client.list_tools()  # the scenario's first listing (its second is held)
            with anyio.move_on_after(1) as waited:  # the caller gives up
                await client.call_tool("ghost", {})
            assert waited.cancelled_caught

    anyio.run(calls)
    rows = _rows(store, 1)
    assert [(r.subject, r.tool, r.verdict, r.reason) for r in rows] == [
        ("alice", "ghost", "refused", "cancelled"),  # the SDK's courtesy cancel came first
    ]
    assert [name for name, _ in server.calls()] == []  # never written to the server
    listings = [m["id"] for m in server.received() if m.get("method") == "tools/list"]
    assert len(listings) == 2 and str(listings[1]).startswith("conduit-mcp-list-")  # the proxy's


def test_a_call_waiting_for_the_proxys_own_listing_when_a_raw_session_ends_is_refused(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """The same without a cancellation (a raw HTTP client: its POST of `ghost` waits, then it
    DELETEs the session): `refused`, reason `session_closed`, never `unanswered`."""
    import httpx2

    url, server, store = _flood_proxy(issuer, listening_proxy, tmp_path)
    headers = {
        "authorization": f"Bearer {token(issuer, 'alice', 'ops')}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    version = "2025-11-25"
    init = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=60) as http:
            opened = await http.post(
                url,
                headers=headers,
                json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            )
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = version
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, headers=session, json=note)
            listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            await http.post(url, headers=session, json=listing)
            ghost = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            ghost["params"] = {"name": "ghost", "arguments": {}}

            def proxys_listing() -> bool:
                return len([m for m in server.received() if m.get("method") == "tools/list"]) == 2

            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(http.post, url, headers=session, json=ghost))
                with anyio.fail_after(10):
                    while not proxys_listing():
                        await anyio.sleep(0.02)
                await http.delete(url, headers=session)
                tg.cancel_scope.cancel()

    anyio.run(main)
    rows = _rows(store, 1)
    assert [(r.subject, r.tool, r.verdict, r.reason) for r in rows] == [
        ("alice", "ghost", "refused", "session_closed"),
    ]
    assert [name for name, _ in server.calls()] == []  # never written to the server


def test_a_post_reusing_the_id_of_a_call_in_flight_is_refused_at_once(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """A session's POST of a request whose id a call of the session in flight has (the `slow`
    call, never answered): answered -32600 Invalid Request in its own POST at once (MCP basic
    "Requests"), its row `refused` (`request_id_in_use`). Before, it was handed to the SDK's
    transport and the pump's refusal answered the first call's POST instead: the first
    caller got the second's refusal, the second waited. A raw HTTP client (the official SDKs
    never reuse an id)."""
    import httpx2

    url, server, store = _flood_proxy(issuer, listening_proxy, tmp_path)
    headers = {
        "authorization": f"Bearer {token(issuer, 'alice', 'ops')}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    version = "2025-11-25"
    init = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }

    def call(request_id: int, tool: str) -> dict[str, Any]:
        params = {"name": tool, "arguments": {}}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    async def main() -> tuple[Any, Any]:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(
                url,
                headers=headers,
                json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            )
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = version
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, headers=session, json=note)
            listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            await http.post(url, headers=session, json=listing)
            first: list[Any] = []

            async def slow() -> None:
                first.append(await http.post(url, headers=session, json=call(5, "slow")))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                with anyio.fail_after(10):
                    while "slow" not in [name for name, _ in server.calls()]:
                        await anyio.sleep(0.02)
                    second = await http.post(url, headers=session, json=call(5, "echo"))
                await http.delete(url, headers=session)  # the first call: answered at the end
            metrics = url.rsplit("/mcp", 1)[0] + "/metrics"
            with anyio.fail_after(10):  # the first call's end is counted as its row is written
                while ("ops", "allowed") not in _caller_calls(
                    (await http.get(metrics, headers=headers)).text
                ):
                    await anyio.sleep(0.05)
            counted.update(_caller_calls((await http.get(metrics, headers=headers)).text))
            return first[0], second

    counted: dict[tuple[str, str], float] = {}
    first, second = anyio.run(main)
    # `/metrics` counts both by the caller's group: the refusal as the policy's are counted.
    assert counted == {("ops", "allowed"): 1, ("ops", "refused"): 1}
    assert second.status_code == 200
    assert second.json()["id"] == 5 and second.json()["error"]["code"] == -32600
    assert first.json()["id"] == 5 and first.json()["error"]["code"] == -32603  # upstream gone
    assert [name for name, _ in server.calls()] == ["slow"]  # the second never sent on
    rows = _rows(store, 2)
    assert [(r.tool, r.verdict, r.reason) for r in rows] == [
        ("echo", "refused", "request_id_in_use"),
        ("slow", "unanswered", "session_closed"),
    ]


def test_what_a_session_keeps_of_its_requests_grows_with_those_in_flight() -> None:
    """A hostile review: `_Related` (which request a server message belongs to) let a request
    go only when answered, so every cancelled request (whose late answer the guard drops)
    stayed for the session's life, and a respelled answer's lookup walked them all (423 ms
    of CPU a lookup over 4,096 ids of 4,000 digits). A cancellation lets its request go, its
    progress tokens with it; the lookup is by key."""
    from mcp.types.jsonrpc import JSONRPCRequest

    from conduit_mcp.proxy.listen._server import _Related

    related = _Related()
    for n in range(10_000):
        params = {"_meta": {"progressToken": f"t{n}"}}
        related.sent(JSONRPCRequest(jsonrpc="2.0", id=n, method="tools/call", params=params))
    related.sent(JSONRPCRequest(jsonrpc="2.0", id="x", method="ping", params={}))
    for n in range(10_000):
        related.answered(n)  # answered, or cancelled by the client (`_pump_down_to_up`)
    assert list(related.in_flight) == ["x"] and related.keys == {"x": "x"}
    assert related.tokens == {} and related._tokens_of == {}
    assert related.asked_as(" 5") is None and related.asked_as("x") == "x"


def test_a_reused_ids_refusal_leaves_the_first_request_its_place() -> None:
    """The refusal of a request reusing the id of one in flight (`InUse`) reaches the client
    by the SDK's transport, and the first request keeps its waiter and its place: its answer,
    even respelled by the server (`" 5"`), goes to its own POST under its own id. Before,
    the refusal took the first POST's waiter and its entry."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse

    from conduit_mcp.proxy.listen._gated import InUse, id_in_use
    from conduit_mcp.proxy.listen._server import _Related, _RelatingSink

    class Waiter:
        def __init__(self) -> None:
            self.got: list[Any] = []

        def finish(self, message: Any) -> None:
            self.got.append(message.model_dump(by_alias=True, exclude_none=True))

    transport = _Client()
    related = _Related()
    first = Waiter()
    sink = _RelatingSink(transport, related, {5: first})  # type: ignore[dict-item]

    async def main() -> None:
        related.sent(JSONRPCRequest(jsonrpc="2.0", id=5, method="tools/call", params={}))
        await sink.send(InUse(id_in_use(5)))  # the second request's refusal
        assert 5 in related.in_flight and first.got == []
        respelled = JSONRPCResponse(jsonrpc="2.0", id=" 5", result={"content": []})
        await sink.send(SessionMessage(respelled))

    anyio.run(main)
    assert [(m["id"], m["error"]["code"]) for m in transport.sent] == [(5, -32600)]
    assert first.got == [{"jsonrpc": "2.0", "id": 5, "result": {"content": []}}]
    assert related.in_flight == {}


OUTPUT_POLICY = """\
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["oldoutput/*"]
"""


def test_a_result_withheld_for_its_structured_content_is_audited_withheld(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """`--invalid-output withhold`: the server ran the call and answered `structuredContent`
    that fails the tool's outputSchema (the hostile `oldoutput` scenario's `weather`); the
    guard hands the client an `isError` result in its place, saying why under its own
    `_meta` key (`conduit-mcp/guard`: `{"result_withheld": "invalid_structured_content"}`, a key the
    guard removes from any result a server sends). Its row was `error`, as if the server had
    failed; it is `withheld` with the reason. The official SDK client reads the result."""
    store = tmp_path / "pins.db"
    policy = tmp_path / "policy.toml"
    policy.write_text(OUTPUT_POLICY, encoding="utf-8")
    done = conduit("policy", "set", str(policy), "--store", str(store), "--approver", "alice")
    assert done.returncode == 0, done.stderr
    server = Hostile("oldoutput", tmp_path / "oldoutput.jsonl")
    url = listening_proxy(
        "oldoutput",
        *("--pins", str(store), "--new", "pin", "--invalid-output", "withhold"),
        *("--audit-calls", *auth_args(issuer), "--", *hostile_argv(server)),
    )

    async def call() -> Any:
        import httpx2
        import mcp
        from mcp.client.streamable_http import streamable_http_client

        bearer = token(issuer, "alice", "ops")
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bearer}"}, timeout=30)
        client = mcp.Client(streamable_http_client(url, http_client=http), mode="legacy")
        async with http, client:
            return await client.call_tool("weather", {"city": "Paris"})

    result = anyio.run(call)
    assert result.is_error is True
    assert result.meta == {"conduit-mcp/guard": {"result_withheld": "invalid_structured_content"}}
    assert [name for name, _ in server.calls()] == ["weather"]
    rows = _rows(store, 1)
    assert [(r.subject, r.tool, r.verdict, r.reason) for r in rows] == [
        ("alice", "weather", "withheld", "invalid_structured_content")
    ]
