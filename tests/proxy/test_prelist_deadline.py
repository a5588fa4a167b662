"""The proxy's own listing before a call naming a tool the guard never saw is bounded in all,
not only per page: a server that answers each tools/list page slowly, with a next cursor every
time, cannot hold the client's messages for its 64 pages; past `PRELIST_DEADLINE` the call
is refused unsent (fail closed) with the cause in the refusal, and the client's messages flow
again.

Spec: MCP 2025-11-25 server/tools "Listing Tools" (pagination by `nextCursor`); the refusal
and the deadline are conduit-defined (developers' guide "Fail closed").
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings, _seam

pytestmark = pytest.mark.anyio

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}}


async def test_a_slowly_paged_listing_before_a_call_ends_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_seam, "PRELIST_DEADLINE", 0.6)
    seam = GuardSeam(GuardSettings(server_id="slow"))
    send, receive = anyio.create_memory_object_stream[dict[str, Any]](100)
    pages: list[dict[str, Any]] = []
    decided: list[Any] = []
    all_answered = anyio.Event()

    async def write(message: dict[str, Any]) -> None:
        await send.send(message)

    link = seam.connect(write)

    async def server() -> None:
        async for request in receive:  # each page answered slowly, another always following
            pages.append(request)
            await anyio.sleep(0.25)
            page = {"tools": [], "nextCursor": f"page-{len(pages)}"}
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": page}
            decided.append(await link.from_server(answer))
            if refused.is_set() and len(decided) == len(pages):
                all_answered.set()

    refused = anyio.Event()
    result = {**HELLO, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}
    try:
        async with send, receive, anyio.create_task_group() as tg:
            tg.start_soon(server)
            await link.from_client(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
            )
            await link.from_server({"jsonrpc": "2.0", "id": 1, "result": result})
            with anyio.fail_after(5):  # 64 pages of 0.25 s would take 16 s
                action, answer = await link.from_client(call)
            refused.set()
            if len(decided) == len(pages):  # no page was in flight at the deadline
                all_answered.set()
            with anyio.fail_after(5):  # the page still in flight is answered late
                await all_answered.wait()
            # The client's direction flows again: its next message is decided at once.
            note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
            after = link.from_client_now(note)
            tg.cancel_scope.cancel()
    finally:
        seam.close()
    assert action == "answer"
    assert answer is not None
    error = answer["error"]
    assert error["data"]["reason"] == "unknown_tool"
    assert error["data"]["tool"] == "echo"
    assert "did not finish within 0.6 s" in error["message"]
    assert "the call was not sent" in error["message"]
    assert 2 <= len(pages) <= 4  # pages were followed, until the deadline
    assert all(p["method"] == "tools/list" for p in pages)
    assert isinstance(after, tuple) and after[0] == "pass"
    # Every answer to the proxy's own listing, the late one included, is the proxy's: none
    # reaches the client (a response to an id it never sent).
    assert decided and all(d == ("drop", None) for d in decided), decided
