"""The guard's own `notifications/tools/list_changed` on both stateless paths of `--listen`
(pooled POSTs to an `--upstream`, `_direct`; one shared server process): a client's
`subscriptions/listen` stream open through the proxy while an approval changes what it sees.

Oracle: MCP 2026-07-28 schema `SubscriptionFilter` / `SubscriptionsListenRequest` (a
notification goes only on a stream that asked for it, stamped with that stream's id, and the
acknowledgment says what will be sent); the expected listing worked out from the policy
(`new="hold"`: nothing shown until approved).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._server import Listener

from .test_listen_budget import PEER, ListeningUpstream, _head, _listen_body, _post, _until
from .test_listen_direct import META
from .test_listen_fuzz import PORT, _frames, _Sent


def test_an_approval_reaches_a_listen_stream_on_the_pooled_post_path(tmp_path: Path) -> None:
    """2026-07-28 requests to an `--upstream` as pooled POSTs: a client that listed the tools
    and opened `subscriptions/listen` asking for `toolsListChanged` is promised it (the
    acknowledgment honours it, though the server's did not) and receives
    `notifications/tools/list_changed`, stamped with its own stream id, when `Guard.approve`
    shows a held tool; a stream that did not ask is neither promised nor sent it; the next
    listing shows the tool (spec 2026-07-28 schema `SubscriptionFilter`)."""
    import uvicorn

    from tests.guard.conftest import free_port

    async def main() -> Any:
        upstream = ListeningUpstream()
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(upstream, host="127.0.0.1", port=port, log_level="warning")
        )
        settings = GuardSettings("notify", policy={"new": "hold"}, held_dir=tmp_path)
        seam = GuardSeam(settings)
        target = HttpUpstream(f"http://127.0.0.1:{port}/mcp")
        listener = Listener(seam, target, host="127.0.0.1", port=PORT)
        list_body = json.dumps(
            {"jsonrpc": "2.0", "id": "l1", "method": "tools/list", "params": {"_meta": META}}
        ).encode()
        deaf = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "deaf",
                "method": "subscriptions/listen",
                "params": {"_meta": META, "notifications": {"resourcesListChanged": True}},
            }
        ).encode()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.serve)
                await _until(lambda: server.started)
                async with anyio.create_task_group() as proxy:
                    await proxy.start(listener.run)
                    with anyio.fail_after(30):
                        first = await _post(listener, _head("tools/list", None), list_body)
                        leave = anyio.Event()
                        stream, other = _Sent(), _Sent()
                        async with anyio.create_task_group() as clients:
                            head = _head("subscriptions/listen", None)
                            clients.start_soon(
                                _post, listener, head, _listen_body("mine"), leave, PEER, stream
                            )
                            clients.start_soon(_post, listener, head, deaf, leave, PEER, other)
                            await _until(lambda: len(_frames(stream.body)) == 1)
                            await _until(lambda: len(_frames(other.body)) == 1)
                            assert seam.guard.approve("echo", approver="carol")
                            await _until(lambda: len(_frames(stream.body)) == 2)
                            await anyio.sleep(0.3)  # time for a wrong notice to arrive
                            leave.set()
                        second = await _post(listener, _head("tools/list", None), list_body)
                    proxy.cancel_scope.cancel()
                    server.should_exit = True
        finally:
            seam.close()
        return first, _frames(stream.body), _frames(other.body), second

    first, mine, deafened, second = anyio.run(main)
    assert json.loads(first.body)["result"]["tools"] == []  # both held
    ack, notice = mine
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "mine"
    assert notice == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "mine"}},
    }
    assert len(deafened) == 1 and "toolsListChanged" not in deafened[0]["params"]["notifications"]
    assert [t["name"] for t in json.loads(second.body)["result"]["tools"]] == ["echo"]


def test_an_approval_reaches_a_listen_stream_on_the_shared_upstream(tmp_path: Path) -> None:
    """The same on the other stateless path, one shared server process (an SDK `MCPServer`,
    tests/proxy/progress_server.py): the notification reaches the client's stream with its
    own stream id, and the next listing shows the tool."""
    from .test_listen_stream import SERVER

    async def main() -> Any:
        settings = GuardSettings("notify", policy={"new": "hold"}, held_dir=tmp_path)
        seam = GuardSeam(settings)
        listener = Listener(seam, SERVER, host="127.0.0.1", port=PORT)
        list_body = json.dumps(
            {"jsonrpc": "2.0", "id": "l1", "method": "tools/list", "params": {"_meta": META}}
        ).encode()
        try:
            async with anyio.create_task_group() as proxy:
                await proxy.start(listener.run)
                with anyio.fail_after(30):
                    first = await _post(listener, _head("tools/list", None), list_body)
                    leave = anyio.Event()
                    stream = _Sent()
                    async with anyio.create_task_group() as clients:
                        head = _head("subscriptions/listen", None)
                        clients.start_soon(
                            _post, listener, head, _listen_body("mine"), leave, PEER, stream
                        )
                        await _until(lambda: len(_frames(stream.body)) == 1)
                        assert seam.guard.approve("touch", approver="carol")
                        await _until(lambda: len(_frames(stream.body)) == 2)
                        leave.set()
                    second = await _post(listener, _head("tools/list", None), list_body)
                proxy.cancel_scope.cancel()
        finally:
            seam.close()
        return first, _frames(stream.body), second

    first, (ack, notice), second = anyio.run(main)
    assert json.loads(first.body)["result"]["tools"] == []  # both held
    assert ack["params"]["notifications"].get("toolsListChanged") is True
    assert notice == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "mine"}},
    }
    assert [t["name"] for t in json.loads(second.body)["result"]["tools"]] == ["touch"]
