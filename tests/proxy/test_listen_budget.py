"""Each stateless (2026-07-28) client's budget on `--listen` (`_budget`), attacked: one client
opening `subscriptions/listen` streams or slow requests until it is refused while another
client's `tools/call` still succeeds; many clients with distinct credentials; the table of
clients back to empty once they leave; credentials never in a log line.

Oracles: RFC 6585 section 4 (429 Too Many Requests, `Retry-After`), RFC 9110 section 15.6.4
(503) and 10.2.3 (`Retry-After`); MCP 2026-07-28 schema `InternalError` (-32603: the spec
defines no overload error); the caps given to the listener (the counts are worked out from
them, not read from the code under test).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._metrics import Metrics
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen import _budget
from conduit_mcp.proxy.listen._budget import NETWORKS_KEPT, ClientBudget
from conduit_mcp.proxy.listen._server import Listener

from .test_listen_direct import META, Upstream, _call
from .test_listen_fuzz import PORT, _frames, _Sent

PEER = ("127.0.0.1", 50000)
SECRET = "Bearer attacker-secret-7f3a9c"


class ListeningUpstream(Upstream):
    """`Upstream` (test_listen_direct) that also serves `subscriptions/listen`: an event
    stream with the acknowledgment (honouring nothing), open until the client leaves."""

    def __init__(self) -> None:
        super().__init__()
        self.listening = 0

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
        if value.get("method") != "subscriptions/listen":
            replay = [body]

            async def again() -> Any:
                if replay:
                    return {"type": "http.request", "body": replay.pop(), "more_body": False}
                return await receive()

            await super().__call__(scope, again, send)
            return
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": value["id"]},
                "notifications": {},
            },
        }
        head = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        data = b"event: message\ndata: " + json.dumps(ack).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": data, "more_body": True})
        self.listening += 1
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        finally:
            self.listening -= 1


def _head(method: str, authorization: str | None, name: str | None = None) -> list[Any]:
    head = [
        ("host", f"127.0.0.1:{PORT}"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ]
    if name is not None:
        head.append(("mcp-name", name))
    if authorization is not None:
        head.append(("authorization", authorization))
    return head


def _listen_body(rid: Any) -> bytes:
    params = {"_meta": META, "notifications": {"toolsListChanged": True}}
    request = {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
    return json.dumps(request).encode()


async def _post(
    listener: Listener,
    head: list[Any],
    body: bytes,
    leave: anyio.Event | None = None,
    peer: tuple[str, int] = ("127.0.0.1", 50000),
    sent: _Sent | None = None,
) -> _Sent:
    """POST `body` to the listener as the ASGI server would; the client goes away when
    `leave` is set (never, when `None`)."""
    sent = sent if sent is not None else _Sent()
    chunks = [body]

    async def receive() -> Any:
        if chunks:
            return {"type": "http.request", "body": chunks.pop(), "more_body": False}
        if leave is None:
            await anyio.sleep_forever()
        else:
            await leave.wait()
        return {"type": "http.disconnect"}

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("utf-8")) for k, v in head],
        "client": peer,
        "server": ("127.0.0.1", PORT),
    }
    await listener(scope, receive, sent)
    return sent


async def _with_listener(test: Any, budget: ClientBudget, metrics: Metrics | None = None) -> Any:
    import uvicorn

    from tests.guard.conftest import free_port

    upstream = ListeningUpstream()
    port = free_port()
    config = uvicorn.Config(upstream, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    seam = GuardSeam(GuardSettings("budget"))
    target = HttpUpstream(f"http://127.0.0.1:{port}/mcp")
    listener = Listener(seam, target, host="127.0.0.1", port=PORT, budget=budget, metrics=metrics)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.01)
            async with anyio.create_task_group() as proxy:
                await proxy.start(listener.run)
                try:
                    with anyio.fail_after(60):
                        return await test(listener, upstream)
                finally:
                    proxy.cancel_scope.cancel()
                    server.should_exit = True
    finally:
        seam.close()


async def _until(condition: Any) -> None:
    while not condition():
        await anyio.sleep(0.01)


def _refusal(sent: _Sent) -> tuple[int | None, str | None, Any]:
    """(HTTP status, Retry-After, the JSON-RPC error) of a refused request."""
    head = next(m for m in sent.messages if m["type"] == "http.response.start")
    retry = dict(head["headers"]).get(b"retry-after")
    return sent.status, retry.decode() if retry else None, json.loads(sent.body)["error"]


def _echo_ok(sent: _Sent, text: str) -> bool:
    frames = _frames(sent.body) if sent.content_type == "text/event-stream" else []
    answer = frames[-1] if frames else json.loads(sent.body)
    return bool(sent.status == 200 and answer["result"]["content"][0]["text"] == text)


def test_one_client_opening_listen_streams_is_refused_while_another_calls() -> None:
    """The attacker opens listen streams until refused (429, `Retry-After`, the reason);
    another client's call still succeeds; once the streams close, the table is empty."""
    budget = ClientBudget(max_listen_streams_per_client=3, max_listen_streams=8)

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        leave = anyio.Event()
        async with anyio.create_task_group() as tg:
            for rid in range(3):
                tg.start_soon(
                    _post, listener, _head("subscriptions/listen", SECRET), _listen_body(rid), leave
                )
            await _until(lambda: upstream.listening == 3)
            refused = await _post(listener, _head("subscriptions/listen", SECRET), _listen_body(99))
            other = await _post(
                listener,
                _head("tools/call", "Bearer someone-else", "echo"),
                _call(1, "echo", {"m": "still served"}, token=1),
            )
            tracked = len(budget)
            leave.set()
        await _until(lambda: upstream.listening == 0)
        return _refusal(refused), _echo_ok(other, "still served"), tracked, len(budget)

    refusal, served, tracked, after = anyio.run(_with_listener, test, budget)
    status, retry, error = refusal
    assert (status, retry) == (429, "1")
    assert error["code"] == -32603
    assert error["data"]["reason"] == "too_many_listen_streams_per_client"
    assert served
    assert tracked == 1  # the attacker (the other client's call had ended)
    assert after == 0
    assert budget.listening == 0


def test_listen_streams_of_many_clients_stop_at_the_total_and_calls_go_on() -> None:
    """Distinct credentials, one stream each: past the total, 503 for the next client's
    stream; a call is still served (ordinary requests keep their headroom)."""
    budget = ClientBudget(max_listen_streams_per_client=2, max_listen_streams=5)

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        leave = anyio.Event()
        async with anyio.create_task_group() as tg:
            for n in range(5):
                head = _head("subscriptions/listen", f"Bearer client-{n}")
                tg.start_soon(_post, listener, head, _listen_body(n), leave)
            await _until(lambda: upstream.listening == 5)
            refused = await _post(
                listener, _head("subscriptions/listen", "Bearer client-6"), _listen_body(6)
            )
            other = await _post(
                listener,
                _head("tools/call", "Bearer client-6", "echo"),
                _call(2, "echo", {"m": "ok"}, token=2),
            )
            tracked = len(budget)
            leave.set()
        await _until(lambda: upstream.listening == 0)
        return _refusal(refused), _echo_ok(other, "ok"), tracked, len(budget)

    (status, retry, error), served, tracked, after = anyio.run(_with_listener, test, budget)
    assert (status, retry, error["data"]["reason"]) == (503, "1", "too_many_listen_streams")
    assert served
    assert tracked == 5
    assert after == 0


def test_slow_requests_of_one_client_are_capped_and_the_table_empties() -> None:
    """One client's slow calls up to its cap, the next refused with 429; another client's
    call served; everyone gone, nothing is left in the table."""
    budget = ClientBudget(max_in_flight_per_client=4)

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        leave = anyio.Event()
        async with anyio.create_task_group() as tg:
            for rid in range(4):
                head = _head("tools/call", SECRET, "slow")
                tg.start_soon(_post, listener, head, _call(rid, "slow", {}), leave)
            await _until(
                lambda: sum(
                    1 for _, v in upstream.requests if v.get("params", {}).get("name") == "slow"
                )
                == 4
            )
            refused = await _post(
                listener, _head("tools/call", SECRET, "slow"), _call(9, "slow", {})
            )
            other = await _post(
                listener,
                _head("tools/call", None, "echo"),
                _call(3, "echo", {"m": "mine"}, token=3),
                peer=("10.0.0.2", 40000),
            )
            leave.set()
        await _until(lambda: len(budget) == 0)
        return _refusal(refused), _echo_ok(other, "mine")

    (status, retry, error), served = anyio.run(_with_listener, test, budget)
    assert (status, retry, error["data"]["reason"]) == (429, "1", "too_many_in_flight_per_client")
    assert served
    assert len(budget) == 0


def test_the_table_of_clients_does_not_grow_with_history() -> None:
    """300 clients, each with its own credential, one call each: afterwards the table is
    empty (memory follows the clients active now, not every client ever seen)."""
    budget = ClientBudget()

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        served = 0
        for n in range(300):
            sent = await _post(
                listener,
                _head("tools/call", f"Bearer client-{n}", "echo"),
                _call(n, "echo", {"m": str(n)}, token=n),
            )
            served += _echo_ok(sent, str(n))
        return served

    assert anyio.run(_with_listener, test, budget) == 300
    assert len(budget) == 0


def test_past_the_clients_tracked_at_once_a_new_client_waits() -> None:
    """`max_clients` clients with something in flight: a new one is refused (503), one of
    them is not; without credentials a client is its address (two peers, two budgets)."""
    budget = ClientBudget(max_clients=2, max_in_flight_per_client=2)

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        leave = anyio.Event()
        async with anyio.create_task_group() as tg:
            for n, peer in enumerate((("10.0.0.1", 1), ("10.0.0.2", 1))):
                head = _head("tools/call", None, "slow")
                tg.start_soon(_post, listener, head, _call(n, "slow", {}), leave, peer)
            await _until(lambda: len(budget) == 2)
            newcomer = await _post(
                listener,
                _head("tools/call", None, "echo"),
                _call(5, "echo", {"m": "x"}, token=5),
                peer=("10.0.0.3", 1),
            )
            known = await _post(
                listener,
                _head("tools/call", None, "echo"),
                _call(6, "echo", {"m": "y"}, token=6),
                peer=("10.0.0.1", 2),  # another connection of the same address
            )
            leave.set()
        await _until(lambda: len(budget) == 0)
        return _refusal(newcomer), _echo_ok(known, "y")

    (status, _, error), served = anyio.run(_with_listener, test, budget)
    assert (status, error["data"]["reason"]) == (503, "too_many_clients")
    assert served


def test_a_refusal_is_logged_and_counted_without_the_credential(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The log line names the cause and the client by a short keyed hash; neither the
    credential nor its full hash is in any record; the Prometheus counter has the reason."""
    budget = ClientBudget(max_in_flight_per_client=1)
    metrics = Metrics("budget")

    async def test(listener: Listener, upstream: ListeningUpstream) -> Any:
        leave = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _post, listener, _head("tools/call", SECRET, "slow"), _call(1, "slow", {}), leave
            )
            await _until(lambda: len(budget) == 1)
            refused = await _post(
                listener, _head("tools/call", SECRET, "slow"), _call(2, "slow", {})
            )
            leave.set()
        return refused

    with caplog.at_level(logging.DEBUG):
        refused = anyio.run(_with_listener, test, budget, metrics)
    assert refused.status == 429
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "too_many_in_flight_per_client" in text
    assert "attacker-secret" not in text and "attacker-secret" not in refused.body.decode()
    assert budget.client(SECRET, None).key.partition(":")[2] not in text
    exposition = metrics.render().decode()
    assert (
        'conduit_mcp_proxy_budget_refused_total{reason="too_many_in_flight_per_client",'
        'server_id="budget"} 1.0'
    ) in exposition


def test_the_real_proxy_refuses_an_attackers_streams_and_serves_the_others(
    listening_proxy: Any, tmp_path: Path
) -> None:
    """`conduit-mcp proxy --listen --max-listen-streams-per-client 2` in a subprocess, in
    front of an SDK server (one shared upstream for stateless requests): the attacker's
    third listen stream is refused with 429 while another client's `tools/call` succeeds;
    the proxy's log names the cause, never the credential; `/metrics` counts the refusal."""
    import contextlib

    import httpx

    from .test_listen_stream import SERVER

    url = listening_proxy(
        "budget",
        "--max-listen-streams-per-client",
        "2",
        "--max-listen-streams",
        "4",
        "--max-listen-streams-per-address",
        "3",
        "--",
        *SERVER,
    )

    def head(method: str, authorization: str, name: str | None = None) -> dict[str, str]:
        return dict(_head(method, authorization, name)[1:])  # httpx sets Host itself

    async def main() -> Any:
        with anyio.fail_after(60):
            return await talk()

    async def talk() -> Any:
        pieces: list[Any] = []
        async with httpx.AsyncClient(timeout=30) as client, contextlib.AsyncExitStack() as open_:
            for rid in range(2):
                response = await open_.enter_async_context(
                    client.stream(
                        "POST",
                        url,
                        headers=head("subscriptions/listen", SECRET),
                        content=_listen_body(rid),
                    )
                )
                assert response.status_code == 200
                # the iterator is kept: dropped, it would close the stream when collected
                pieces.append(response.aiter_bytes())
                first = await pieces[-1].__anext__()  # the acknowledgment
                assert b"notifications/subscriptions/acknowledged" in first
            refused = await client.post(
                url, headers=head("subscriptions/listen", SECRET), content=_listen_body(3)
            )
            # Made-up credentials, each claiming another address: all from one TCP peer.
            spoofed = []
            for rid in (4, 5):
                spoof = head("subscriptions/listen", f"Bearer made-up-{rid}")
                spoof["X-Forwarded-For"] = f"10.9.9.{rid}"
                if rid == 4:
                    response = await open_.enter_async_context(
                        client.stream("POST", url, headers=spoof, content=_listen_body(rid))
                    )
                    pieces.append(response.aiter_bytes())
                    await pieces[-1].__anext__()
                    spoofed.append(response.status_code)
                else:
                    late = await client.post(url, headers=spoof, content=_listen_body(rid))
                    spoofed.append(late.status_code)
                    spoofed.append(late.json()["error"]["data"]["reason"])
            params = {"name": "touch", "arguments": {}, "_meta": META}
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
            served = await client.post(
                url,
                headers=head("tools/call", "Bearer another", "touch"),
                content=json.dumps(call).encode(),
            )
            metrics = await client.get(url.removesuffix("/mcp") + "/metrics")
        return refused, served, metrics.text, spoofed

    refused, served, metrics, spoofed = anyio.run(main)
    assert spoofed == [200, 429, "too_many_listen_streams_per_address"]
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert refused.json()["error"]["data"]["reason"] == "too_many_listen_streams_per_client"
    assert served.status_code == 200
    answer = (
        served.json() if "json" in served.headers["content-type"] else _frames(served.content)[-1]
    )
    assert answer["id"] == 7 and "result" in answer, answer
    assert 'reason="too_many_listen_streams_per_client"' in metrics
    (log,) = tmp_path.glob("proxy-*.jsonl")
    text = log.read_text()
    assert "too_many_listen_streams_per_client" in text
    assert "attacker-secret" not in text


def test_who_a_client_is() -> None:
    """A credential is one client whatever its address, never kept as written, hashed with a
    key of the budget's own (another budget hashes it otherwise); without one, an address
    is one client whatever its port; caps below 1 are refused."""
    budget, other = ClientBudget(), ClientBudget()
    who = budget.client(SECRET, ("10.0.0.1", 1))
    key = who.key
    assert key == budget.client(SECRET, ("10.0.0.2", 2)).key
    assert who.address == "peer:10.0.0.1"
    assert key.startswith("credential:") and "attacker-secret" not in key
    assert key != other.client(SECRET, None).key
    assert key != budget.client("Bearer another", None).key
    assert budget.client(None, ("10.0.0.1", 1)) == budget.client("", ("10.0.0.1", 9))
    assert budget.client(None, ("10.0.0.1", 1)) != budget.client(None, ("10.0.0.2", 1))
    assert budget.client(None, None).key == "peer:unknown"
    with pytest.raises(ValueError, match="at least 1"):
        ClientBudget(max_listen_streams=0)
    with pytest.raises(ValueError, match="at least 1"):
        ClientBudget(max_in_flight_per_address=0)


def test_made_up_credentials_share_their_address_budget(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The proxy checks no credential: one address presenting a new made-up credential per
    request gets a client budget each, but all of them share the address's budget (RFC 6585
    429); another address is served meanwhile, and both tables are empty once all ends."""
    budget = ClientBudget(max_in_flight_per_address=3, max_listen_streams_per_address=2)
    attacker = [budget.client(f"Bearer made-up-{n}", ("10.6.6.6", n)) for n in range(5)]
    assert len({who.key for who in attacker}) == 5
    assert budget.admit(attacker[0], True) is None
    assert budget.admit(attacker[1], True) is None
    listen = budget.admit(attacker[2], True)
    assert listen is not None and listen.status == 429
    assert listen.reason == "too_many_listen_streams_per_address"
    assert budget.admit(attacker[2], False) is None
    with caplog.at_level(logging.WARNING, logger="conduit_mcp.proxy"):
        refused = budget.admit(attacker[3], False)
    assert refused is not None and refused.reason == "too_many_in_flight_per_address"
    assert "made-up" not in caplog.text and "10.6.6.6" in caplog.text
    neighbour = budget.client("Bearer made-up-9", ("10.7.7.7", 1))
    assert budget.admit(neighbour, True) is None
    for who, listening in ((attacker[0], True), (attacker[1], True), (attacker[2], False)):
        budget.release(who, listening)
    budget.release(neighbour, True)
    assert len(budget) == 0 and budget.listening == 0
    assert budget.admit(attacker[4], False) is None  # the address's share is back
    budget.release(attacker[4], False)
    assert len(budget) == 0 and not budget._addresses


def test_remembered_addresses_stay_bounded_and_answer_as_when_parsed() -> None:
    """conduit-defined (the per-request address is remembered, issue 33): a flood of distinct
    peer addresses leaves at most `NETWORKS_KEPT` remembered, and an address asked again after
    being pushed out, or asked while remembered, is budgeted as RFC 4291 / RFC 7421 read it (an
    IPv6 address's /64; an IPv4-mapped one as IPv4; a zone index dropped)."""
    budget = ClientBudget()
    flood = [budget.client(None, (f"2001:db8:1:{n:x}::1", 1)) for n in range(NETWORKS_KEPT + 50)]
    assert len(_budget._networks) <= NETWORKS_KEPT
    assert flood[-1].address == f"peer:2001:db8:1:{NETWORKS_KEPT + 49:x}::/64"
    for _ in range(2):  # pushed out by the flood, then remembered
        assert budget.client(None, ("2001:db8:1:0::9", 1)).address == "peer:2001:db8:1::/64"
        assert budget.client(None, ("::ffff:192.0.2.7", 1)).address == "peer:192.0.2.7"
        assert budget.client(None, ("fe80::1%eth0", 1)).address == "peer:fe80::/64"
        assert budget.client(None, ("not an address", 1)).address == "peer:not an address"


def test_an_ipv6_network_and_a_credential_less_client_share_their_address_budget() -> None:
    """A client holding an IPv6 /64 (RFC 7421: one subscriber's usual share) cannot take a
    fresh budget per address: every address of the /64 is one address budget, and an
    IPv4-mapped address is its IPv4 one. A request without a credential counts against its
    address's budget too, so an address's made-up credentials and its credential-less client
    together stay within it."""
    budget = ClientBudget(max_in_flight_per_client=2, max_in_flight_per_address=3)
    v6 = [budget.client(None, (f"2001:db8:0:7::{n:x}", 1)) for n in range(1, 6)]
    assert {who.address for who in v6} == {"peer:2001:db8:0:7::/64"}
    assert budget.client(None, ("2001:db8:0:8::1", 1)).address == "peer:2001:db8:0:8::/64"
    assert budget.client(None, ("::ffff:10.0.0.1", 1)).address == "peer:10.0.0.1"
    assert budget.client(None, ("10.0.0.1", 1)).address == "peer:10.0.0.1"
    assert budget.admit(v6[0], False) is None
    assert budget.admit(v6[1], False) is None
    refused = budget.admit(v6[2], False)
    assert refused is not None and refused.reason == "too_many_in_flight_per_client"
    # The same address: two without a credential, then made-up credentials share the rest.
    plain = budget.client(None, ("10.9.9.9", 1))
    made_up = [budget.client(f"Bearer m{n}", ("10.9.9.9", 2)) for n in range(3)]
    assert budget.admit(plain, False) is None and budget.admit(plain, False) is None
    assert budget.admit(made_up[0], False) is None
    refused = budget.admit(made_up[1], False)
    assert refused is not None and refused.reason == "too_many_in_flight_per_address"
    for who in (v6[0], v6[1], plain, plain, made_up[0]):
        budget.release(who, False)
    assert len(budget) == 0 and not budget._addresses
