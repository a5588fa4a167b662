"""A hostile review of the call audit's "never written" verdict (`GatedSink._unwritten`,
`_seam.not_written`): a call the server received must never be audited `refused`, and each
call a caller sent has exactly one row (docs/identity.md, the call audit: `refused` says the
server never got the call; fail closed: when unsure, `unanswered`).

Real parts: `GuardSeam.wrap` over memory streams (the test plays the client and the server:
`test_forged_refusal._Wired`), the real `GatedSink` in front of it, `CallerGate`,
`CallAuditor`, a sqlite `PinStore` (rows read back as an auditor reads them). The session's
pump (`_server._pump_down_to_up`, `_pump.pump`) is played by the test, in the order the
listener runs it: `GatedSink.refused`, `before_call`, `GatedSink.writing`, the guarded write;
the read side's items handed to `GatedSink.send` when the test reads them (the server ->
client pump may lag: its client does not read its answers).

Oracle: what the server received (the messages the guard wrote, as the test reads them) and
who answered what, as each test arranges it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import jsonrpc_message_adapter

from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore
from conduit_mcp.proxy import GuardSettings
from conduit_mcp.proxy._seam import GuardSeam

from .test_forged_refusal import CHANGED, ECHO, PING, _Wired
from .test_gated_audit import FLOOD_POLICY, _Client

#: A tool whose argument check runs in a worker thread (`pattern`: not linear, `_checks`).
CHECKED: dict[str, Any] = {
    "name": "checked",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},
}
RESULT = {"content": [{"type": "text", "text": "ran"}]}


def _message(message: dict[str, Any]) -> Any:
    return jsonrpc_message_adapter.validate_python(message)


def _call(request_id: Any, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _cancel(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


class _Session:
    """One `--listen` session's client side as its pump hands it on: the real `GatedSink`
    over the guarded pair (`_Wired`), the test playing the client, the server and the pace
    of the server -> client pump."""

    def __init__(self, seam: GuardSeam, wired: _Wired, sink: Any) -> None:
        self.seam = seam
        self.wired = wired
        self.sink = sink

    async def client_sends(self, message: dict[str, Any]) -> bool:
        """`_gated_and_sent` for one client message: `True` when it was handed to the guard."""
        item = SessionMessage(_message(message))
        if "id" in message:
            if await self.sink.refused(item.message, None):
                return False
        else:
            self.sink.cancelled(item.message)
        await self.seam.before_call(item.message, self.wired.write)
        if "id" in message:
            self.sink.writing(item.message.id)
        await self.wired.write.send(item)
        return True

    async def pump_one(self) -> None:
        """`_pump.pump`: the next item of the guarded read side, to the client."""
        item = await self.wired.read.receive()
        await self.sink.send(self.seam.explain(item))


def _run(
    tmp_path: Path,
    script: Callable[[_Session], Awaitable[None]],
    monkeypatch: pytest.MonkeyPatch,
    **patches: int,
) -> tuple[list[Any], list[Any]]:
    """`script(session)` in a session of caller alice (group ops: every tool) over a guard
    that approved ping and checked, and blocks echo (listed changed); the session closed:
    what the client got, and the rows read back (tool, verdict, reason, request id)."""
    from conduit_mcp.policy import Caller, Policy
    from conduit_mcp.proxy._access import Access
    from conduit_mcp.proxy._callaudit import CallAuditor
    from conduit_mcp.proxy.listen import _gated
    from conduit_mcp.proxy.listen._callers import CallerGate

    for name, value in patches.items():
        monkeypatch.setattr(_gated, name, value)
    policy = Policy.parse(FLOOD_POLICY.replace("flood/*", "s/*"), "allow", version=1)
    store_path = tmp_path / "pins.db"
    with PinStore(str(store_path)) as pins:
        for raw in (PING, ECHO, CHECKED):
            pins.approve("s", Tool.from_wire("s", raw), approver="alice")
    with PinStore(str(store_path)) as store:
        auditor = CallAuditor(store, "s", interval=3600)  # written at close

        async def main() -> list[Any]:
            seam = GuardSeam(GuardSettings("s", pins=str(store_path), held_dir=tmp_path / "h"))
            try:
                wired = _Wired(seam)
                await wired.initialized()
                await wired.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
                await wired.written()
                tools = [PING, CHANGED, CHECKED]
                await wired.answer({"jsonrpc": "2.0", "id": "list", "result": {"tools": tools}})
                await wired.read.receive()
                assert seam.guard.tool_status("echo") == "blocked"
                gate = CallerGate(Access.fixed("s", policy), auditor=auditor)
                client = _Client()
                sink = _gated.GatedSink(
                    client, gate, Caller("alice", frozenset({"ops"})), wired.write
                )
                await script(_Session(seam, wired, sink))
                sink.close()
                wired.close()
                return client.sent
            finally:
                seam.close()

        sent = anyio.run(main)
        auditor.close()
        rows = [(r.tool, r.verdict, r.reason, r.request_id) for r in store.calls_since(0)]
    return sent, rows


def test_a_stale_guard_refusal_is_not_the_row_of_a_written_call_reusing_its_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile caller whose session's server -> client pump lags (it does not read its
    answers): call 1 (echo, blocked) is refused by the guard, its refusal waiting on the read
    side; the caller cancels it, and one more cancellation lets its id go (`CANCELLED_KEPT`,
    1 here for 256): its row is written then, `refused` (`cancelled`: never written). It
    reuses id 1 for a call of ping that the guard writes: the server got it and answers it.
    Then the pump reads on.

    Expected: one row per call, call 1 `refused` (its guard's refusal), the ping `passed`
    with the server's answer (the server ran it and the client got its result). The stale
    refusal of call 1 must not be taken for the ping's answer (or the reuse is refused, the
    ping never written: `refused`, `request_id_in_use`).

    Found before the fix: the ping's row was `withheld`, reason `tool_blocked` (call 1's
    refusal, taken as its answer: `GatedSink.send` pairs any answer with the id in flight),
    and the server's real answer reached the client after it, unaudited: two answers to id
    1. Now the reuse is refused at once (`_seam.not_written`: the guard has not answered
    call 1 yet)."""
    written: list[dict[str, Any]] = []
    reused: list[bool] = []

    async def script(session: _Session) -> None:
        wired = session.wired
        assert await session.client_sends(_call(1, "echo"))  # refused by the guard, unread
        for request_id in (2, 3):
            assert await session.client_sends(_call(request_id, "ping"))
            written.append(await wired.written())
        for request_id in (1, 2, 3):  # 1 and 2 let go past CANCELLED_KEPT
            assert await session.client_sends(_cancel(request_id))
            written.append(await wired.written())  # the guard passes each cancellation on
        reused.append(await session.client_sends(_call(1, "ping")))  # the id reused
        if reused[0]:
            written.append(await wired.written())
        await session.pump_one()  # the stale refusal of the first call 1
        if reused[0]:
            await wired.answer({"jsonrpc": "2.0", "id": 1, "result": RESULT})
            await session.pump_one()  # the server's answer to the ping 1

    sent, rows = _run(tmp_path, script, monkeypatch, CANCELLED_KEPT=1)
    pings = [(m["id"], m["params"]["name"]) for m in written if m.get("method") == "tools/call"]
    assert pings[:2] == [(2, "ping"), (3, "ping")]
    if reused[0]:  # written: the server ran it, the client got its result
        assert pings[2:] == [(1, "ping")]
        assert sent[-1] == {"jsonrpc": "2.0", "id": 1, "result": RESULT}
        ping = ("ping", "passed", None, "1")
    else:  # a fix may refuse the id while the guard's refusal of call 1 is unread
        assert pings[2:] == []
        ping = ("ping", "refused", "request_id_in_use", "1")
    assert sorted(rows) == [
        ("echo", "refused", "cancelled", "1"),
        ping,
        ("ping", "unanswered", "cancelled", "2"),
        ("ping", "unanswered", "cancelled", "3"),
    ]


def test_a_stale_guard_refusal_never_makes_a_call_the_server_gets_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lagging pump, the id reused by a call of `checked`, whose argument check runs
    in a worker thread (held here until the stale refusal is read: a check that takes its
    time). The stale refusal of the first call 1 is read while the second is handed to the
    guard and not written yet (`_Link.asked` holds its id): `_Told` marks it `Unsent`, the
    gate audits the second call `refused`. Then the check ends and the guard writes the call:
    the server gets a call audited "the server never got this call".

    Expected: the call the server got and answered is `passed`; never `refused` (or the
    reuse is refused at once, never written: `refused`, `request_id_in_use`). Found before
    the fix: `refused`, `tool_blocked`, and the call written."""
    from conduit_mcp.guard import _checks

    written: list[dict[str, Any]] = []
    reused: list[bool] = []
    release: list[anyio.Event] = []

    async def held(fn: Callable[[], Any], seconds: float) -> Any:
        await release[0].wait()
        return fn()

    monkeypatch.setattr(_checks, "run_bounded", held)

    async def script(session: _Session) -> None:
        release.append(anyio.Event())
        wired = session.wired
        assert await session.client_sends(_call(1, "echo"))  # refused by the guard, unread
        for request_id in (2, 3):
            assert await session.client_sends(_call(request_id, "ping"))
            written.append(await wired.written())
        for request_id in (1, 2, 3):  # 1 and 2 let go past CANCELLED_KEPT
            assert await session.client_sends(_cancel(request_id))
            written.append(await wired.written())
        async with anyio.create_task_group() as tg:

            async def reuse() -> None:
                reused.append(await session.client_sends(_call(1, "checked", {"a": "xy"})))

            tg.start_soon(reuse)
            await anyio.wait_all_tasks_blocked()  # in its argument check
            await session.pump_one()  # the stale refusal of the first call 1
            release[0].set()
        if reused[0]:
            written.append(await wired.written())
            await wired.answer({"jsonrpc": "2.0", "id": 1, "result": RESULT})
            await session.pump_one()  # the server's answer to `checked`

    _sent, rows = _run(tmp_path, script, monkeypatch, CANCELLED_KEPT=1)
    calls = [(m["id"], m["params"]["name"]) for m in written if m.get("method") == "tools/call"]
    if reused[0]:  # written: the server got it
        assert calls[-1] == (1, "checked")
        checked = ("checked", "passed", None, "1")
    else:  # a fix may refuse the id while the guard's refusal of call 1 is unread
        assert (1, "checked") not in calls
        checked = ("checked", "refused", "request_id_in_use", "1")
    assert sorted(rows) == [
        checked,
        ("echo", "refused", "cancelled", "1"),
        ("ping", "unanswered", "cancelled", "2"),
        ("ping", "unanswered", "cancelled", "3"),
    ]


def test_look_alike_ids_of_a_written_call_never_make_it_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call 1 (ping) is written: the server got it and never answers. The caller then sends
    calls whose ids the SDK and the guard read as 1 (`"1"`, `" 1"`, `"+1"`, `"01"`, the
    Arabic-Indic digit one), each refused at once as an id in use (never handed to the guard,
    so none puts 1 back in `_Link.asked`), and a cancellation sent before its call (it names
    nothing). A huge integer id and a 5,000-digit string id (past `int()`'s limit: a string
    for the SDK and the guard) are written too. The session ends: the written calls are
    `unanswered` (the server got them), never `refused`."""
    huge = 10**40
    digits = "9" * 5000
    written: list[Any] = []

    async def script(session: _Session) -> None:
        wired = session.wired
        assert await session.client_sends(_cancel(1))  # before its call: names nothing
        written.append(await wired.written())
        for request_id in (1, huge, digits):
            assert await session.client_sends(_call(request_id, "ping"))
            written.append(await wired.written())
        for look_alike in ("1", " 1", "+1", "01", "\u0661"):
            assert not await session.client_sends(_call(look_alike, "ping"))

    sent, rows = _run(tmp_path, script, monkeypatch)
    assert [m["id"] for m in written if m.get("method") == "tools/call"] == [1, huge, digits]
    assert [(m["id"], m["error"]["code"]) for m in sent] == [
        ("1", -32600),
        (" 1", -32600),
        ("+1", -32600),
        ("01", -32600),
        ("\u0661", -32600),
    ]
    assert sorted((verdict, reason, request_id) for _, verdict, reason, request_id in rows) == [
        ("refused", "request_id_in_use", " 1"),
        ("refused", "request_id_in_use", "+1"),
        ("refused", "request_id_in_use", "01"),
        ("refused", "request_id_in_use", "1"),
        ("refused", "request_id_in_use", "\u0661"),
        ("unanswered", "session_closed", "1"),
        ("unanswered", "session_closed", str(huge)),
        ("unanswered", "session_closed", digits[:64]),  # the audit keeps 64 characters
    ]


def test_a_call_in_its_argument_check_when_the_session_ends_is_refused_and_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session ends while the guard checks a call's arguments in a worker thread (handed
    to the guard, not written: `_Link.asked`). The listener closes the sink, then cancels the
    pump (`_server._session`: no await between): the row is `refused`, `session_closed`, and
    the call is never written, even once the check would have passed."""
    from conduit_mcp.guard import _checks

    release: list[anyio.Event] = []
    checking: list[bool] = []

    async def held(fn: Callable[[], Any], seconds: float) -> Any:
        checking.append(True)
        await release[0].wait()
        return fn()

    monkeypatch.setattr(_checks, "run_bounded", held)

    async def script(session: _Session) -> None:
        release.append(anyio.Event())
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.client_sends, _call(4, "checked", {"a": "xy"}))
            await anyio.wait_all_tasks_blocked()
            assert checking == [True]  # in its argument check
            session.sink.close()  # the session's end, as `_session` orders it
            tg.cancel_scope.cancel()
        release[0].set()
        with anyio.move_on_after(0.2):
            extra = await session.wired.written()
            raise AssertionError(f"written after the session ended: {extra}")

    _, rows = _run(tmp_path, script, monkeypatch)
    assert rows == [("checked", "refused", "session_closed", "4")]


def test_guard_refusals_unread_at_the_end_and_past_the_asked_bound_fail_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls the guard refused (echo, blocked) whose refusals the lagging pump has not read
    when the session ends: never written, so `refused` (`session_closed`); past the bound of
    `_Link.asked` (`_MAX_ASKED`, 2 here for 4,096) the oldest is forgotten and its record
    cannot say: `unanswered` (fail closed), never the other way round. A ping written
    meanwhile stays `unanswered`."""
    from conduit_mcp.proxy import _seam

    monkeypatch.setattr(_seam, "_MAX_ASKED", 2)
    written: list[Any] = []

    async def script(session: _Session) -> None:
        for request_id in (1, 2):
            assert await session.client_sends(_call(request_id, "echo"))
        assert await session.client_sends(_call(3, "ping"))
        written.append(await session.wired.written())
        assert await session.client_sends(_call(4, "echo"))  # 1 forgotten: past the bound

    _, rows = _run(tmp_path, script, monkeypatch)
    assert [m["id"] for m in written] == [3]
    assert sorted(rows, key=lambda row: row[3]) == [
        ("echo", "unanswered", "session_closed", "1"),
        ("echo", "refused", "session_closed", "2"),
        ("ping", "unanswered", "session_closed", "3"),
        ("echo", "refused", "session_closed", "4"),
    ]


def test_a_server_answering_a_call_before_it_is_written_does_not_make_it_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile server answers call 7 (`ghost`, a tool the guard has not seen) while the
    call waits for the proxy's own listing, which the server holds back: a result, then an
    error, both with id 7, then a notice (so the test knows they were read). The guard drops
    both (no request 7 written); the session ends while the call still waits: `refused`,
    `session_closed`, and the server never got the call."""
    written: list[Any] = []

    async def script(session: _Session) -> None:
        wired = session.wired
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.client_sends, _call(7, "ghost"))
            listing = await wired.written()
            assert str(listing["id"]).startswith("conduit-mcp-list-")
            await wired.answer({"jsonrpc": "2.0", "id": 7, "result": RESULT})
            error = {"code": -32000, "message": "ran it", "data": {"reason": "x"}}
            await wired.answer({"jsonrpc": "2.0", "id": 7, "error": error})
            notice = {"jsonrpc": "2.0", "method": "notifications/message"}
            notice["params"] = {"level": "info", "data": "x"}
            await wired.answer(notice)
            await session.pump_one()  # the notice: the answers before it were dropped
            session.sink.close()
            tg.cancel_scope.cancel()
        with anyio.move_on_after(0.2):
            written.append(await wired.written())

    sent, rows = _run(tmp_path, script, monkeypatch)
    assert [m.get("method") for m in sent] == ["notifications/message"]
    assert written == []
    assert rows == [("ghost", "refused", "session_closed", "7")]


class _Stdio:
    """A hostile stdio server on the other ends of `_child`'s real pipe reader and writer:
    what the proxy wrote to its stdin (`reads`, `got`), lines it writes to its stdout
    (`writes`), its stdout closed (`end`)."""

    def __init__(self) -> None:
        import os

        self.to_proxy_r, self.to_proxy_w = os.pipe()  # the server's stdout
        self.from_proxy_r, self.from_proxy_w = os.pipe()  # the server's stdin
        os.set_blocking(self.from_proxy_r, False)
        self.received: list[dict[str, Any]] = []
        self._stdin = bytearray()
        self.ended = False

    def reads(self) -> list[dict[str, Any]]:
        """The lines the proxy wrote to the server's stdin since the last read."""
        import json
        import os

        try:
            while chunk := os.read(self.from_proxy_r, 65536):
                self._stdin.extend(chunk)
        except BlockingIOError:
            pass
        lines = self._stdin.split(b"\n")
        self._stdin[:] = lines.pop()
        new = [json.loads(line) for line in lines if line.strip()]
        self.received.extend(new)
        return new

    async def got(self, method: str) -> dict[str, Any]:
        with anyio.fail_after(5):
            while True:
                for message in self.reads():
                    if message.get("method") == method:
                        return message
                await anyio.sleep(0.01)

    def writes(self, message: dict[str, Any]) -> None:
        import json
        import os

        os.write(self.to_proxy_w, json.dumps(message).encode() + b"\n")

    def end(self) -> None:
        """The server closes its stdout (its stdin still read)."""
        import os

        os.close(self.to_proxy_w)
        self.ended = True

    def close(self) -> None:
        """The test's own ends (the proxy's reader and writer close theirs), what the proxy
        wrote read first."""
        import os

        self.reads()
        os.close(self.from_proxy_r)
        if not self.ended:
            os.close(self.to_proxy_w)

    def calls(self) -> list[tuple[Any, str]]:
        """The tools/calls the server read from its stdin (once closed): (id, tool)."""
        return [
            (m["id"], m["params"]["name"]) for m in self.received if m.get("method") == "tools/call"
        ]


class _SlowClient(_Client):
    """The session's client: takes its messages once `reading` is set (until then the
    session's server -> client pump waits on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = anyio.Event()

    async def send(self, item: Any) -> None:
        await self.reading.wait()
        await super().send(item)


GHOST: dict[str, Any] = {"name": "ghost", "inputSchema": {"type": "object"}}


def _stdio_session(
    tmp_path: Path, server: _Stdio, hostile: Callable[..., Awaitable[None]]
) -> list[Any]:
    """One `--listen` session of caller alice over a stdio server (`_child`'s real pipe reader
    and writer), run as `_server._session` runs its two pumps (`_pump_down_to_up` and
    `_pump.pump`; when the latter ends the task group is cancelled, and the sink closed once
    neither pump runs: before, the sink was closed first, then the group cancelled),
    while `hostile(server, inbox, client, reader)` plays the server and the client's inbox.
    The server listed ping (ghost is approved but not listed yet). The rows read back."""
    import asyncio

    from conduit_mcp.policy import Caller, Policy
    from conduit_mcp.proxy._access import Access
    from conduit_mcp.proxy._callaudit import CallAuditor
    from conduit_mcp.proxy._pump import pump
    from conduit_mcp.proxy.listen._callers import CallerGate
    from conduit_mcp.proxy.listen._gated import GatedSink
    from conduit_mcp.proxy.listen._lean import Inbox
    from conduit_mcp.proxy.listen._server import _pump_down_to_up, _Related
    from conduit_mcp.proxy.stdio._child import _ServerReader, _ServerWriter

    policy = Policy.parse(FLOOD_POLICY.replace("flood/*", "s/*"), "allow", version=1)
    store_path = tmp_path / "pins.db"
    with PinStore(str(store_path)) as pins:
        for raw in (PING, GHOST):
            pins.approve("s", Tool.from_wire("s", raw), approver="alice")
    with PinStore(str(store_path)) as store:
        auditor = CallAuditor(store, "s", interval=3600)

        async def main() -> None:
            loop = asyncio.get_running_loop()
            seam = GuardSeam(GuardSettings("s", pins=str(store_path), held_dir=tmp_path / "h"))
            reader = _ServerReader(loop, server.to_proxy_r)
            writer = _ServerWriter(loop, server.from_proxy_w)
            try:
                guarded_read, guarded_write = seam.wrap(reader, writer, transport="stdio")
                init = {"protocolVersion": "2025-06-18", "capabilities": {}}
                init["clientInfo"] = {"name": "t", "version": "1"}
                message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
                await guarded_write.send(SessionMessage(_message(message)))
                await server.got("initialize")
                result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}
                result["serverInfo"] = {"name": "hostile", "version": "1"}
                server.writes({"jsonrpc": "2.0", "id": 0, "result": result})
                await guarded_read.receive()
                listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
                await guarded_write.send(SessionMessage(_message(listing)))
                await server.got("tools/list")
                server.writes({"jsonrpc": "2.0", "id": 1, "result": {"tools": [PING]}})
                await guarded_read.receive()
                assert seam.guard.tool_status("ghost") is None

                gate = CallerGate(Access.fixed("s", policy), auditor=auditor)
                client = _SlowClient()
                gated = GatedSink(client, gate, Caller("alice", frozenset({"ops"})), guarded_write)
                inbox = Inbox(16)
                async with anyio.create_task_group() as outer:
                    outer.start_soon(hostile, server, inbox, client, reader)
                    # `_server._session`, as it runs a session's two pumps (the sink
                    # closed once neither runs):
                    try:
                        async with anyio.create_task_group() as tg:

                            async def upward() -> None:
                                await _pump_down_to_up(
                                    inbox,
                                    guarded_write,
                                    _Related(),
                                    "stdio",
                                    None,
                                    seam,
                                    None,
                                    gated,
                                )
                                tg.cancel_scope.cancel()

                            tg.start_soon(upward)
                            await pump(guarded_read, gated, seam)  # type: ignore[arg-type]
                            tg.cancel_scope.cancel()
                    finally:
                        gated.close()
                await anyio.sleep(0.05)  # what was written reaches the pipe
            finally:
                writer.close()
                reader.release()
                seam.close()

        try:
            anyio.run(main)
        finally:
            server.close()
        auditor.close()
        return [(r.tool, r.verdict, r.reason, r.request_id) for r in store.calls_since(0)]


NOTICE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "method": "notifications/message",
    "params": {"level": "info", "data": "x"},
}


async def _stdout_ended(reader: Any) -> None:
    """Until the proxy's pipe reader has read the end of the server's stdout."""
    with anyio.fail_after(5):
        while not reader._ended:
            await anyio.sleep(0.01)


def test_a_call_written_after_its_session_closed_the_sink_is_never_refused(
    tmp_path: Path,
) -> None:
    """A hostile stdio server: the client calls `ghost`, a tool the guard has not seen; the
    proxy lists the tools itself. The server answers that listing (ghost in it) and closes
    its stdout at once, keeping its stdin open; the session's server -> client pump is busy
    meanwhile (its client reads slowly), so when it reads on, the listing's answer and the
    end of stdout are both there (`_ServerReader.receive` returns them without waiting). The
    pump ends and the task group is cancelled; but the client pump, woken by the listing's
    answer in the same step, is not cancelled before it runs on (anyio leaves a task whose
    wait has completed to run), and writes the call to the server's stdin.

    Expected: a call the server received is never `refused`. Found before the fix (the sink
    was closed as the pump ended, before the client pump ran on): `refused`,
    `session_closed`, and the server read the call from its stdin."""

    async def hostile(server: _Stdio, inbox: Any, client: _SlowClient, reader: Any) -> None:
        server.writes(NOTICE)  # the pump hands it to the slow client: busy
        await inbox.send(SessionMessage(_message(_call(9, "ghost"))))
        own = await server.got("tools/list")  # the proxy's own listing
        server.writes({"jsonrpc": "2.0", "id": own["id"], "result": {"tools": [PING, GHOST]}})
        server.end()
        await _stdout_ended(reader)
        client.reading.set()  # the pump reads on

    server = _Stdio()
    rows = _stdio_session(tmp_path, server, hostile)
    assert server.calls() == [(9, "ghost")]  # the server got the call
    assert rows == [("ghost", "unanswered", "session_closed", "9")]


def test_a_call_sent_as_the_session_ends_has_its_row(tmp_path: Path) -> None:
    """The same race without the listing: the server's stdout has ended while the session's
    server -> client pump waits on its slow client; in one step the client reads on and a
    call of ping (a tool the guard knows) reaches the session's inbox. The pump ends first;
    the client pump, whose wait had completed, runs on before its cancellation and writes the
    call to the server's stdin.

    Expected: every tools/call a caller sent leaves exactly one row. Found before the fix
    (the sink was closed as the pump ended, the call then noted in the closed sink): none."""

    async def hostile(server: _Stdio, inbox: Any, client: _SlowClient, reader: Any) -> None:
        server.writes(NOTICE)  # the pump hands it to the slow client: busy
        server.end()
        await _stdout_ended(reader)
        client.reading.set()  # the pump reads on, then ends (stdout ended) ...
        await inbox.send(SessionMessage(_message(_call(5, "ping"))))  # ... same step

    server = _Stdio()
    rows = _stdio_session(tmp_path, server, hostile)
    assert server.calls() == [(5, "ping")]  # the server got the call
    assert rows == [("ping", "unanswered", "session_closed", "5")]
