"""The change feed in a running guard: an approval or a revocation made elsewhere (another
`PinStore` connection, as the CLI or another host would) reaches the guard within a second,
without a re-list: the revoked tool's next call is refused, the approved held tool's next call
goes through. sqlite file and a real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.client import Tool
from conduit_mcp.guard import Guard
from conduit_mcp.pins import PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

from .scripted import scripted_session, tool

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["file", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "pins.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def listing(*tools: dict[str, object]):  # type: ignore[no-untyped-def]
    def handler(method: str, params: dict[str, object]) -> dict[str, object]:
        if method == "tools/list":
            return {"tools": list(tools)}
        return {"content": [{"type": "text", "text": "ok"}]}

    return handler


async def until(condition, steps: int = 6000) -> bool:  # type: ignore[no-untyped-def]
    """Whether `condition()` holds within `steps` event-loop pauses of 10 ms (the latency
    itself is measured by `python -m bench.pins_feed_latency`, not by a timed test)."""
    for _ in range(steps):
        if condition():
            return True
        await anyio.sleep(0.01)
    return bool(condition())


async def test_a_revocation_and_an_approval_made_elsewhere_apply_without_a_re_list(
    location: str,
) -> None:
    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)  # new="hold": b is held
        try:
            async with scripted_session(guard, listing(tool("a"), tool("b"))) as (session, script):
                await session.list_tools()
                assert (guard.tool_status("a"), guard.tool_status("b")) == ("ok", "held")
                elsewhere.revoke("s", "a", approver="bob")
                elsewhere.approve("s", Tool.from_wire("s", tool("b")), approver="carol")
                assert await until(
                    lambda: (guard.tool_status("a"), guard.tool_status("b")) == ("blocked", "ok")
                )
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("a", {})
                await session.call_tool("b", {})
        finally:
            guard.close()
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert script.calls() == [("b", {})]
    # The guard re-listed nothing: the state changed through the feed before the calls. (The
    # SDK lists once more by itself before calling `b`: a held tool is not listed to it, so
    # it has no outputSchema cached for `b`.)
    assert len([r for m, r in script.received if m == "tools/list"]) == 2


def test_with_a_callers_store_a_cosmetic_change_waits_for_a_person(tmp_path: Path) -> None:
    """Policy contract: with `pins=` nothing is written in the guard's name by default, a
    cosmetic variant included; with the private store it is accepted beside the pin."""
    with PinStore(tmp_path / "pins.db") as store:
        guard = Guard("s", pins=store)
        assert (guard.policy.new, guard.policy.cosmetic) == ("hold", "changed")
        guard.close()
    assert Guard("s").policy.cosmetic == "accept"


async def test_a_revocation_delivered_during_a_listings_check_is_not_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conduit-defined (a hostile review: the listing's pre-revocation "approved" verdict put
    the tool back to ok): the feed delivers a revocation after the store was read and before
    the verdicts apply; the tool stays blocked and its call is refused, unsent."""
    import types

    from conduit_mcp.guard import _checks

    with PinStore(tmp_path / "pins.db") as store:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)
        original = _checks.pin_page
        deliver = {"now": False}

        def pin_page_then_revocation(*args: object, **kwargs: object) -> object:
            answers = original(*args, **kwargs)  # type: ignore[arg-type]
            if deliver["now"]:
                entry = types.SimpleNamespace(server_id="s", name="a", action="revoke")
                _checks.apply_pin_change(guard, entry)  # as the watcher thread would
            return answers

        monkeypatch.setattr(_checks, "pin_page", pin_page_then_revocation)
        try:
            async with scripted_session(guard, listing(tool("a"))) as (session, script):
                await session.list_tools()
                assert guard.tool_status("a") == "ok"
                deliver["now"] = True
                await session.list_tools()
                assert guard.tool_status("a") == "blocked"
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("a", {})
        finally:
            guard.close()
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert script.calls() == []


async def test_a_change_delivered_while_a_listing_is_checked_is_not_lost(location: str) -> None:
    """A fleet's race: a listing reads the store (a approved, b new), a revocation of a and an
    approval of b commit elsewhere and reach the guard's feed before the listing has recorded
    its verdicts. The stale verdicts must not overwrite them: a is refused, b goes through.
    (The guard's own watcher is closed; the feed's deliveries are made by hand inside the
    store call, where the watcher thread could make them.)"""
    from conduit_mcp.guard._checks import apply_pin_change

    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)
        assert guard._watcher is not None
        guard._watcher.close()
        _, cursor = elsewhere.changes_since(0)
        check = store.check_and_pin

        def check_while_others_decide(*args: Any, **kwargs: Any) -> Any:
            outcome = check(*args, **kwargs)  # a approved, b new: read before the changes
            elsewhere.revoke("s", "a", approver="bob")
            elsewhere.approve("s", Tool.from_wire("s", tool("b")), approver="carol")
            changes, _ = elsewhere.changes_since(cursor)
            for entry in changes:  # the feed delivers them before the verdicts are recorded
                apply_pin_change(guard, entry)
            return outcome

        store.check_and_pin = check_while_others_decide  # type: ignore[method-assign]
        try:
            async with scripted_session(guard, listing(tool("a"), tool("b"))) as (session, script):
                await session.list_tools()
                statuses = (guard.tool_status("a"), guard.tool_status("b"))
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("a", {})
                store.check_and_pin = check  # type: ignore[method-assign]
                await session.call_tool("b", {})
        finally:
            guard.close()
    assert statuses == ("blocked", "ok")
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert script.calls() == [("b", {})]


async def test_when_the_changes_met_during_a_check_were_dropped_the_guard_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed remembers the last change of at most FEED_NAMES names (here 1). When more
    names changed while a listing was checked, what changed for the listed tools is unknown:
    a tool the stale verdict allows is blocked until the next listing."""
    from conduit_mcp.guard import _checks

    monkeypatch.setattr(_checks, "FEED_NAMES", 1)
    location = str(tmp_path / "pins.db")
    with PinStore(location) as store, PinStore(location) as elsewhere:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        guard = Guard("s", pins=store)
        assert guard._watcher is not None
        guard._watcher.close()
        _, cursor = elsewhere.changes_since(0)
        check = store.check_and_pin

        def check_while_others_decide(*args: Any, **kwargs: Any) -> Any:
            outcome = check(*args, **kwargs)
            elsewhere.revoke("s", "a", approver="bob")
            for name in ("x", "y"):  # a's revocation is pushed out by x's and y's approvals
                elsewhere.approve("s", Tool.from_wire("s", tool(name)), approver="bob")
            changes, _ = elsewhere.changes_since(cursor)
            assert [(e.action, e.name) for e in changes] == [
                ("revoke", "a"),
                ("approve", "x"),
                ("approve", "y"),
            ]
            for entry in changes:
                _checks.apply_pin_change(guard, entry)
            return outcome

        store.check_and_pin = check_while_others_decide  # type: ignore[method-assign]
        try:
            async with scripted_session(guard, listing(tool("a"))) as (session, _script):
                await session.list_tools()
                status = guard.tool_status("a")
                floor = guard._shared.book.feed_floor
        finally:
            guard.close()
    assert floor == 2  # x's approval dropped (a's before it): changes were lost
    assert status == "blocked"
