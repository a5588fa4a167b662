"""After a pin store outage the guard re-checks what it serves by itself (issue 30, item 8).

conduit-defined: a page the store cannot check withholds its tools (`pin_store_unavailable`,
tests/guard/test_fail_closed.py); once the store answers again the guard lists the server's
tools itself (its own `tools/list`, answered to nobody), so the withheld tools come back and
their calls go through without any client listing again, and each client that saw them
withheld is told with `notifications/tools/list_changed` (spec 2025-11-25 server/tools "List
Changed Notification"). On main the tools stayed refused until some client listed.

Real parts: a real PostgreSQL stopped and started (tests/pgserver.py), mcp's `ClientSession`
on the guard's wrapped streams (tests/guard/scripted.py).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import EVENT_KINDS, GUARD_REASONS, Guard, _recheck
from conduit_mcp.pins import PinStore
from tests.pgserver import controlled_postgres, postgres_bin

from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio

LIST_CHANGED = "notifications/tools/list_changed"


def _handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "tools/list":
        return {"tools": [tool("a"), tool("b")]}
    return text("ran " + str(params.get("name")))


class Told:
    """The session's message handler: set once the guard says the tools changed."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == LIST_CHANGED:
            self.event.set()


async def test_after_a_postgresql_outage_the_tools_come_back_without_a_client_listing() -> None:
    folder = postgres_bin()
    if folder is None:
        pytest.skip("PostgreSQL binaries not found (apt-get install -y postgresql)")
    told = Told()
    with controlled_postgres(folder) as server:
        with PinStore(server.url, timeout=1) as store:
            guard = Guard("s", pins=store, new="pin")
            async with scripted_session(guard, _handler, message_handler=told) as (
                session,
                script,
            ):
                first = await session.list_tools()
                server.stop()
                with anyio.fail_after(60):
                    down = await session.list_tools()
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("a", {})
                server.start()
                with anyio.fail_after(60):
                    await told.event.wait()  # the guard's own listing restored the tools
                after = await session.call_tool("a", {})  # no listing by the client
            guard.close()
    assert [t.name for t in first.tools] == ["a", "b"]
    assert down.tools == []
    assert refused.value.error.data["reason"] == "pin_store_unavailable"
    assert after.content[0].text == "ran a"  # type: ignore[union-attr]
    # The client's two listings, the guard's own, then the call (mcp's ClientSession lists
    # once more after a call, for the output schemas it forgot on list_changed).
    methods = [m for m, _ in script.received]
    assert methods[:5] == ["initialize", "tools/list", "tools/list", "tools/list", "tools/call"]
    assert script.calls() == [("a", {})]
    (rechecked,) = [e for e in guard.events if e.kind == "tools_rechecked"]
    assert rechecked.reason == "pin_store_available"
    assert rechecked.details["restored"] == ["a", "b"]
    assert guard.tool_status("a") == guard.tool_status("b") == "ok"
    assert "tools_rechecked" in EVENT_KINDS and "pin_store_available" in GUARD_REASONS


async def test_the_store_is_asked_again_with_a_growing_wait_and_the_probe_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """conduit-defined: while the store fails the probe waits twice as long each time, up to
    `LONGEST_WAIT`; once it answers, every connection that withheld a page is handed back
    once and the probe thread ends. Counted on a probe that fails three times (no clock)."""
    waits: list[float] = []
    answers = iter([OSError("down"), OSError("down"), OSError("down"), None])
    go = threading.Event()

    class Stop:  # `threading.Event.wait`, recorded and never slept
        def __init__(self) -> None:
            self.stopped = False

        def wait(self, seconds: float) -> bool:
            go.wait()  # not before both outages are told: one probe for both
            waits.append(seconds)
            return self.stopped

        def set(self) -> None:
            self.stopped = True

        def is_set(self) -> bool:
            return self.stopped

    def probe() -> None:
        answer = next(answers)
        if answer is not None:
            raise answer

    handed = anyio.Event()
    back: list[list[Any]] = []
    token = anyio.lowlevel.current_token()

    def on_back(connections: list[Any]) -> None:
        back.append(connections)
        anyio.from_thread.run_sync(handed.set, token=token)

    recheck = _recheck.Recheck(probe, on_back)
    recheck._stop = Stop()  # type: ignore[assignment]

    class Connection:
        pass

    connection = Connection()
    recheck.outage(connection)
    recheck.outage(connection)  # one probe, one hand-back, however many pages were withheld
    go.set()
    with anyio.fail_after(30):
        await handed.wait()
    assert back == [[connection]]
    first = _recheck.FIRST_WAIT
    assert waits == [first, first * 2, first * 4, first * 8]
    assert all(w <= _recheck.LONGEST_WAIT for w in waits)
    for _ in range(6000):  # the thread clears its slot right before handing back (no hang)
        if not recheck.probing:
            break
        await anyio.sleep(0.01)
    assert not recheck.probing
