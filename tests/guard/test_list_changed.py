"""`notifications/tools/list_changed` from the guard: an approval or a revocation that changes
what a client sees, without a re-list (the pin store's change feed, `Guard.approve`), reaches
the client as the notification, and its next listing shows the change.

Spec 2025-11-25 server/tools "List Changed Notification" (a server that declared
`capabilities.tools.listChanged` SHOULD send it when its list changes); the guard declares the
capability itself when it can change the list on its own (docs/guard.md "Live approvals").
Real mcp 2.x `ClientSession`: its message handler is the oracle for what arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from conduit_mcp.client import Tool
from conduit_mcp.guard import Guard
from conduit_mcp.pins import PinStore

from .conftest import Hostile
from .scripted import scripted_session, tool

pytestmark = pytest.mark.anyio

LIST_CHANGED = "notifications/tools/list_changed"


class Inbox:
    """The session's message handler: the methods of the server notifications it received."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.methods.append(method)

    def count(self) -> int:
        return self.methods.count(LIST_CHANGED)


def listing(*tools: dict[str, object]):  # type: ignore[no-untyped-def]
    def handler(method: str, params: dict[str, object]) -> dict[str, object]:
        if method == "tools/list":
            return {"tools": list(tools)}
        return {"content": [{"type": "text", "text": "ok"}]}

    return handler


async def until(condition, steps: int = 6000) -> bool:  # type: ignore[no-untyped-def]
    """Whether `condition()` holds within `steps` pauses of 10 ms (no latency is asserted: the
    bound only stops a hang; 300 pauses were a verdict on the machine's load)."""
    for _ in range(steps):
        if condition():
            return True
        await anyio.sleep(0.01)
    return bool(condition())


async def names(session: Any) -> list[str]:
    return sorted(t.name for t in (await session.list_tools()).tools)


async def test_an_approval_through_the_feed_is_announced_and_the_re_list_shows_it(
    tmp_path: Path,
) -> None:
    location = tmp_path / "pins.db"
    inbox = Inbox()
    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)  # a caller's store: new="hold", b waits
        try:
            async with scripted_session(
                guard, listing(tool("a"), tool("b")), message_handler=inbox
            ) as (session, _):
                # The scripted server declares `tools: {}`; the client is told to expect it.
                capabilities = session.server_capabilities
                assert capabilities.tools.list_changed is True
                assert await names(session) == ["a"]
                assert inbox.count() == 0
                elsewhere.approve("s", Tool.from_wire("s", tool("b")), approver="carol")
                assert await until(lambda: inbox.count() == 1)
                assert await names(session) == ["a", "b"]
                elsewhere.revoke("s", "a", approver="bob")
                assert await until(lambda: inbox.count() == 2)
                assert await names(session) == ["b"]
        finally:
            guard.close()


async def test_a_burst_of_changes_is_one_notification_until_the_client_lists_again(
    tmp_path: Path,
) -> None:
    location = tmp_path / "pins.db"
    inbox = Inbox()
    page = [tool(n) for n in ("a", "b", "c", "d")]
    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)
        try:
            async with scripted_session(guard, listing(*page), message_handler=inbox) as (
                session,
                _,
            ):
                assert await names(session) == ["a"]
                for name in ("b", "c", "d"):
                    elsewhere.approve("s", Tool.from_wire("s", tool(name)), approver="carol")
                elsewhere.revoke("s", "a", approver="bob")
                assert await until(lambda: guard.tool_status("a") == "blocked")
                assert await until(lambda: inbox.count() >= 1)
                await anyio.sleep(0.3)  # later changes of the burst had their chance
                assert inbox.count() == 1
                assert await names(session) == ["b", "c", "d"]
                # Listed again: the next change is announced again.
                elsewhere.revoke("s", "b", approver="bob")
                assert await until(lambda: inbox.count() == 2)
        finally:
            guard.close()


async def test_no_notification_for_a_tool_this_session_never_listed(tmp_path: Path) -> None:
    location = tmp_path / "pins.db"
    inbox = Inbox()
    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)
        try:
            async with scripted_session(guard, listing(tool("a")), message_handler=inbox) as (
                session,
                _,
            ):
                assert await names(session) == ["a"]
                elsewhere.approve("s", Tool.from_wire("s", tool("z")), approver="carol")
                elsewhere.approve("other", Tool.from_wire("other", tool("a")), approver="c")
                elsewhere.revoke("other", "a", approver="bob")
                # A change this session did list, after those: it is the only one announced.
                elsewhere.revoke("s", "a", approver="bob")
                assert await until(lambda: guard.tool_status("a") == "blocked")
                assert await until(lambda: inbox.count() == 1)
                await anyio.sleep(0.2)
                assert inbox.count() == 1
        finally:
            guard.close()


async def test_guard_approve_in_process_is_announced(tmp_path: Path) -> None:
    """The private store under `new="hold"`: the guard changes the list itself."""
    inbox = Inbox()
    guard = Guard("s", new="hold")
    async with scripted_session(guard, listing(tool("a"), tool("b")), message_handler=inbox) as (
        session,
        _,
    ):
        assert await names(session) == []
        assert guard.approve("b", approver="alice")
        assert await until(lambda: inbox.count() == 1)
        assert await names(session) == ["b"]


async def test_announced_without_sniffio(monkeypatch: pytest.MonkeyPatch) -> None:
    """anyio 4.16 no longer installs `sniffio`: in an install without it (`pip install
    conduit-mcp-client[proxy]` had none) the notification is still sent: the guard asks the
    running loop itself."""
    monkeypatch.setitem(__import__("sys").modules, "sniffio", None)  # `import sniffio` fails
    inbox = Inbox()
    guard = Guard("s", new="hold")
    async with scripted_session(guard, listing(tool("a")), message_handler=inbox) as (
        session,
        _,
    ):
        assert await names(session) == []
        assert guard.approve("a", approver="alice")
        assert await until(lambda: inbox.count() == 1)


async def test_every_connection_that_listed_the_tool_is_told(tmp_path: Path) -> None:
    inboxes = [Inbox(), Inbox(), Inbox()]
    guard = Guard("s", new="hold")
    handler = listing(tool("a"), tool("b"))
    async with (
        scripted_session(guard, handler, message_handler=inboxes[0]) as (one, _),
        scripted_session(guard, handler, message_handler=inboxes[1]) as (two, _),
        scripted_session(guard, handler, message_handler=inboxes[2]),
    ):
        await names(one)
        await names(two)  # the third connection never lists
        assert guard.approve("a", approver="alice")
        assert await until(lambda: inboxes[0].count() == 1 and inboxes[1].count() == 1)
        await anyio.sleep(0.2)
        assert [inbox.count() for inbox in inboxes] == [1, 1, 0]


async def test_without_a_way_to_change_the_list_nothing_is_declared_or_sent() -> None:
    """The private store, no policy that holds: the initialize result passes as the server
    sent it (no `listChanged`), and approving a blocked change is not announced (the client
    was not told to expect it; its next listing shows the tool)."""
    inbox = Inbox()
    guard = Guard("s")
    pages = [[tool("a")], [tool("a", description="now different")]]

    def handler(method: str, params: dict[str, object]) -> dict[str, object]:
        if method == "tools/list":
            return {"tools": pages[0]}
        return {"content": [{"type": "text", "text": "ok"}]}

    async with scripted_session(guard, handler, message_handler=inbox) as (session, _):
        capabilities = session.server_capabilities
        assert capabilities.tools.list_changed is None
        assert await names(session) == ["a"]
        pages.pop(0)
        assert await names(session) == []  # the change is blocked
        assert guard.approve("a", approver="alice")
        await anyio.sleep(0.2)
        assert inbox.count() == 0
        assert await names(session) == ["a"]


async def test_fastmcp_client_is_told(hostile: Callable[[str], Hostile]) -> None:
    """The FastMCP seam (`Guard.fastmcp_transport`) over stdio, a 2025-11-25 server: an
    in-process approval reaches FastMCP's message handler, and its next listing shows it."""
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    server = hostile("mixed")
    params = server.stdio()
    inbox = Inbox()
    guard = Guard("hostile", new="hold")
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    async with fastmcp.Client(transport, message_handler=inbox) as client:
        assert await client.list_tools() == []
        assert guard.approve("echo", approver="alice")
        assert await until(lambda: inbox.count() == 1)
        assert [t.name for t in await client.list_tools()] == ["echo"]


@asynccontextmanager
async def modern_session(guard: Guard, tools: list[dict[str, Any]]) -> AsyncIterator[Any]:
    """A 2026-07-28 session (`server/discover`) with `guard` on its streams, against a server
    that opens `subscriptions/listen` streams but honours none of their notification types
    (its acknowledgment's filter is empty) and keeps each open until the session ends."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCRequest, jsonrpc_message_adapter

    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](16)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](16)

    async def send(raw: dict[str, Any]) -> None:
        await to_client_send.send(SessionMessage(jsonrpc_message_adapter.validate_python(raw)))

    async def serve() -> None:
        async with to_server_recv, to_client_send:
            async for item in to_server_recv:
                message = item.message
                if not isinstance(message, JSONRPCRequest):
                    continue
                if message.method == "subscriptions/listen":
                    params = {
                        "_meta": {"io.modelcontextprotocol/subscriptionId": message.id},
                        "notifications": {},
                    }
                    await send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/subscriptions/acknowledged",
                            "params": params,
                        }
                    )
                    continue  # the stream stays open: no response
                if message.method == "server/discover":
                    result: dict[str, Any] = {
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                        "resultType": "complete",
                        "ttlMs": 0,
                        "cacheScope": "private",
                    }
                else:
                    result = {"tools": tools, "resultType": "complete", "ttlMs": 0}
                    result["cacheScope"] = "private"
                await send({"jsonrpc": "2.0", "id": message.id, "result": result})

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        read, write = guard.wrap_streams(to_client_recv, to_server_send)
        async with ClientSession(read, write) as session:
            await session.discover()
            yield session
        to_server_send.close()
        to_client_recv.close()
        tg.cancel_scope.cancel()


async def test_a_2026_listen_stream_that_asked_for_it_is_told() -> None:
    """2026-07-28: list_changed only on a `subscriptions/listen` stream that asked for
    `toolsListChanged`, stamped with its id (spec 2026-07-28 `ToolListChangedNotification`).
    The server honours nothing; the guard, which changes the list itself, honours it."""
    from mcp.client.subscriptions import ToolsListChanged, listen

    guard = Guard("s", new="hold")
    async with modern_session(guard, [tool("a"), tool("b")]) as session:
        assert await names(session) == []
        async with listen(session, tools_list_changed=True) as stream:
            assert stream.honored.tools_list_changed is True
            assert guard.approve("a", approver="alice")
            with anyio.fail_after(10):
                event = await stream.__anext__()
            assert isinstance(event, ToolsListChanged)
        assert await names(session) == ["a"]
        # A stream that did not ask for it is acknowledged as the server said, and told nothing.
        async with listen(session, prompts_list_changed=True) as other:
            assert other.honored.tools_list_changed is None
            assert guard.approve("b", approver="alice")
            with anyio.move_on_after(0.3) as idle:
                await other.__anext__()
            assert idle.cancelled_caught
