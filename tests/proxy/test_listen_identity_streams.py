"""A stateless caller's `subscriptions/listen` stream and the tool policy (issue 32): when a new
policy version changes what the stream's caller would see, the stream gets
`notifications/tools/list_changed` stamped with its own id; a caller whose view did not change
gets nothing. The listener in-process (as its ASGI server calls it), the caller's verified
identity put in the scope as `_auth.AuthMiddleware` puts it, on both stateless paths: a shared
server process (the official SDK's `MCPServer`, tests/proxy/progress_server.py: tools `steps`
and `touch`) and the pooled POST path to an HTTP upstream (tests/proxy/test_listen_budget.py's
`ListeningUpstream`: tools `echo` and `slow`).

Oracle: MCP 2026-07-28 schema `SubscriptionFilter` (a notification only on a stream that asked
for it, stamped with that stream's id); the views worked out from the policies by hand.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from conduit_mcp.policy import Policy
from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._access import Access
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._auth import Identity
from conduit_mcp.proxy.listen._callers import IDENTITY_KEY, CallerGate
from conduit_mcp.proxy.listen._server import Listener

from .test_listen_budget import PEER, ListeningUpstream, _head, _listen_body, _post, _until
from .test_listen_direct import META
from .test_listen_fuzz import PORT, _frames, _Sent
from .test_listen_stream import SERVER

BOB = Identity("bob", frozenset({"dev"}), {"sub": "bob"})
ANN = Identity("ann", frozenset({"ops"}), {"sub": "ann"})


def _policies(server_id: str, first: str, added: str) -> tuple[Policy, Policy]:
    """Version 1: dev may use `first`; version 2: `added` too. ops: everything, both times."""
    text = f"""\
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["{server_id}/*"]
[[rule]]
groups = ["dev"]
allow = ["{server_id}/{first}"]
"""
    newer = text.replace(f'"{server_id}/{first}"', f'"{server_id}/{first}", "{server_id}/{added}"')
    return Policy.parse(text, "v1", version=1), Policy.parse(newer, "v2", version=2)


class _As:
    """The listener behind a caller's verified identity (what `AuthMiddleware` hands on)."""

    def __init__(self, listener: Listener, identity: Identity) -> None:
        self.listener = listener
        self.identity = identity

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.listener({**scope, IDENTITY_KEY: self.identity}, receive, send)


async def _scenario(
    listener: Listener, gate: CallerGate, current: list[Policy], after: Policy
) -> tuple[Any, ...]:
    list_body = json.dumps(
        {"jsonrpc": "2.0", "id": "l1", "method": "tools/list", "params": {"_meta": META}}
    ).encode()
    bob, ann = _As(listener, BOB), _As(listener, ANN)
    first = await _post(bob, _head("tools/list", None), list_body)  # type: ignore[arg-type]
    leave = anyio.Event()
    mine, theirs = _Sent(), _Sent()
    head = _head("subscriptions/listen", None)
    async with anyio.create_task_group() as clients:
        clients.start_soon(_post, bob, head, _listen_body("mine"), leave, PEER, mine)
        clients.start_soon(_post, ann, head, _listen_body("theirs"), leave, PEER, theirs)
        await _until(lambda: len(_frames(mine.body)) == 1 and len(_frames(theirs.body)) == 1)
        current[0] = after
        told = gate.sessions.changed()  # what the store's follower calls with a new version
        await _until(lambda: len(_frames(mine.body)) == 2)
        leave.set()
    second = await _post(bob, _head("tools/list", None), list_body)  # type: ignore[arg-type]
    return first, _frames(mine.body), _frames(theirs.body), told, second


def _check(found: tuple[Any, ...], before: list[str], after: list[str]) -> None:
    first, mine, theirs, told, second = found
    assert sorted(t["name"] for t in json.loads(first.body)["result"]["tools"]) == before
    assert told == 1  # bob's view changed; ann's did not
    assert mine[1] == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "mine"}},
    }
    assert len(theirs) == 1  # the acknowledgment only
    assert sorted(t["name"] for t in json.loads(second.body)["result"]["tools"]) == after


def _gate(server_id: str, v1: Policy) -> tuple[CallerGate, list[Policy]]:
    current = [v1]
    return CallerGate(Access(server_id, lambda: current[0])), current


def test_a_listen_stream_on_the_shared_server_is_told_when_its_view_changes() -> None:
    """Real parts: the SDK's `MCPServer` as the one shared server process."""
    v1, v2 = _policies("shared", "touch", "steps")
    gate, current = _gate("shared", v1)

    async def main() -> Any:
        seam = GuardSeam(GuardSettings("shared"))
        listener = Listener(seam, SERVER, host="127.0.0.1", port=PORT, gate=gate)
        try:
            async with anyio.create_task_group() as proxy:
                await proxy.start(listener.run)
                with anyio.fail_after(60):
                    found = await _scenario(listener, gate, current, v2)
                proxy.cancel_scope.cancel()
        finally:
            seam.close()
        return found

    _check(anyio.run(main), ["touch"], ["steps", "touch"])


def test_a_listen_stream_on_the_pooled_post_path_is_told_when_its_view_changes() -> None:
    """Real parts: uvicorn serving a raw Streamable HTTP upstream; the pooled POST path."""
    import uvicorn

    from tests.guard.conftest import free_port

    v1, v2 = _policies("pooled", "echo", "slow")
    gate, current = _gate("pooled", v1)

    async def main() -> Any:
        upstream = ListeningUpstream()
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(upstream, host="127.0.0.1", port=port, log_level="warning")
        )
        seam = GuardSeam(GuardSettings("pooled"))
        target = HttpUpstream(f"http://127.0.0.1:{port}/mcp")
        listener = Listener(seam, target, host="127.0.0.1", port=PORT, gate=gate)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.serve)
                await _until(lambda: server.started)
                async with anyio.create_task_group() as proxy:
                    await proxy.start(listener.run)
                    with anyio.fail_after(60):
                        found = await _scenario(listener, gate, current, v2)
                    proxy.cancel_scope.cancel()
                server.should_exit = True
        finally:
            seam.close()
        return found

    _check(anyio.run(main), ["echo"], ["echo", "slow"])


def test_a_session_past_its_watched_requests_is_refused_never_answered_unfiltered(
    monkeypatch: Any,
) -> None:
    """Security (fail closed): a session's tools/list and tools/call answers are filtered by
    the ids the proxy watches; a client holding many requests open (slow calls) must not make
    its next listing pass unwatched, so past `MAX_WATCHED` in flight a request is refused; a
    cancelled one stops being watched; a listing's answer is filtered by the caller's policy."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    from conduit_mcp.policy import Caller
    from conduit_mcp.proxy.listen import _gated

    monkeypatch.setattr(_gated, "MAX_WATCHED", 2)
    v1, _ = _policies("files", "read", "write")
    gate, _ = _gate("files", v1)
    bob = Caller("bob", frozenset({"dev"}))

    class Sink:
        def __init__(self) -> None:
            self.sent: list[Any] = []

        async def send(self, item: Any) -> None:
            self.sent.append(item.message.model_dump(by_alias=True, exclude_none=True))

    def request(rid: int, method: str, name: str | None = None) -> JSONRPCRequest:
        params = {"name": name, "arguments": {}} if name else {}
        return JSONRPCRequest(jsonrpc="2.0", id=rid, method=method, params=params)

    async def main() -> Any:
        sink = Sink()
        gated = _gated.GatedSink(sink, gate, bob)
        slow = [await gated.refused(request(n, "tools/call", "read"), None) for n in (1, 2)]
        listing = await gated.refused(request(3, "tools/list"), None)  # a third: refused
        cancel = JSONRPCNotification(
            jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 1}
        )
        gated.cancelled(cancel)
        again = await gated.refused(request(4, "tools/list"), None)  # room again: watched
        tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("read", "write")]
        await gated.send(
            SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=4, result={"tools": tools}))
        )
        gated.close()
        return slow, listing, again, sink.sent

    slow, listing, again, sent = anyio.run(main)
    assert slow == [False, False] and listing is True and again is False
    assert sent[0]["id"] == 3 and "in flight" in sent[0]["error"]["message"]
    read = {"name": "read", "inputSchema": {"type": "object"}}
    assert sent[1] == {"jsonrpc": "2.0", "id": 4, "result": {"tools": [read]}}
