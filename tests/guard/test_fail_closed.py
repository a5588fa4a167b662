"""Fail closed: when the guard cannot check a tools/list page, the page's tools are withheld.

conduit-defined contract (developers' guide "Fail closed": when the guard cannot decide, the
tool is withheld and the call refused, with the cause in the event). A pin store that fails
(a real PostgreSQL stopped mid-session, a real sqlite lock) or does not answer in time: the
SDK receives the page without its tools, calls to them are refused unsent with reason
`pin_store_unavailable`, the event carries the exception's type and first line with the
URL's password redacted; the next listing the store can check restores them, with no action.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import Guard, GuardEvent, _checks
from conduit_mcp.pins import PinStore
from tests.pgserver import controlled_postgres, postgres_bin

from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio

LISTING = {"tools": [tool("a"), tool("b")]}
#: A listing that replaces LISTING while set (index 0).
LISTING_SWAP: list[Any] = [None]


def _handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "tools/list":
        return LISTING_SWAP[0] if LISTING_SWAP[0] is not None else LISTING
    return text("ran")


def _withheld(guard: Guard) -> list[GuardEvent]:
    return [e for e in guard.events if e.kind == "unchecked" and e.decision == "withheld"]


async def test_a_postgresql_store_stopped_mid_session_withholds_then_recovers() -> None:
    folder = postgres_bin()
    if folder is None:
        pytest.skip("PostgreSQL binaries not found (apt-get install -y postgresql)")
    with controlled_postgres(folder) as server:
        # trust authentication ignores the password: it is there to prove it never leaks.
        url = server.url.replace("postgres@", "postgres:s3cret-pw@")
        with PinStore(url, timeout=1) as store:
            guard = Guard("s", pins=store, new="pin")
            async with scripted_session(guard, _handler) as (session, script):
                first = await session.list_tools()
                await session.call_tool("a", {})
                server.stop()
                with anyio.fail_after(60):
                    down = await session.list_tools()
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("a", {})
                server.start()
                back = await session.list_tools()
                after = await session.call_tool("b", {})
    assert [t.name for t in first.tools] == ["a", "b"]
    assert down.tools == []
    assert refused.value.error.data["reason"] == "pin_store_unavailable"
    assert [t.name for t in back.tools] == ["a", "b"]
    assert after.content[0].text == "ran"  # type: ignore[union-attr]
    assert script.calls() == [("a", {}), ("b", {})]
    (event,) = _withheld(guard)
    assert event.reason == "pin_store_unavailable"
    import psycopg

    # "fast" shutdown: the server says AdminShutdown, or the socket just closes.
    kind = getattr(psycopg.errors, event.details["error"], None) or getattr(
        psycopg, event.details["error"]
    )
    assert issubclass(kind, psycopg.OperationalError)
    assert event.details["cause"]
    assert event.details["tools"] == 2
    assert "***" in event.details["store"]
    assert all("s3cret-pw" not in repr(e) for e in guard.events)


async def test_a_locked_sqlite_store_withholds_then_recovers(tmp_path: Path) -> None:
    """A real sqlite error: another connection holds an exclusive lock past the store's
    timeout ("database is locked", sqlite3.OperationalError)."""
    db = tmp_path / "pins.db"
    with PinStore(db, timeout=0.2) as store:
        guard = Guard("s", pins=store, new="pin")
        async with scripted_session(guard, _handler) as (session, _):
            first = await session.list_tools()
            locker = sqlite3.connect(db, isolation_level=None)
            locker.execute("BEGIN EXCLUSIVE")
            try:
                changed = {"tools": [tool("a", description="new text"), tool("b")]}
                LISTING_SWAP[0] = changed
                down = await session.list_tools()
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("b", {})
            finally:
                locker.execute("ROLLBACK")
                locker.close()
                LISTING_SWAP[0] = None
            back = await session.list_tools()
    assert [t.name for t in first.tools] == ["a", "b"]
    assert down.tools == []
    assert refused.value.error.data["reason"] == "pin_store_unavailable"
    assert [t.name for t in back.tools] == ["a", "b"]
    (event,) = _withheld(guard)
    assert (event.details["error"], event.details["cause"]) == (
        "OperationalError",
        "database is locked",
    )


async def test_a_store_that_does_not_answer_in_time_withholds_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    real = _checks.pin_page
    stuck = [True]

    def pin_page(*args: Any, **kwargs: Any) -> Any:
        if stuck[0]:
            release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(_checks, "pin_page", pin_page)
    monkeypatch.setattr(_checks, "PAGE_TIMEOUT", 0.3)
    guard = Guard("s")
    try:
        async with scripted_session(guard, _handler) as (session, _):
            with anyio.fail_after(5):
                down = await session.list_tools()
            stuck[0] = False
            back = await session.list_tools()
    finally:
        release.set()
    assert down.tools == []
    assert [t.name for t in back.tools] == ["a", "b"]
    (event,) = _withheld(guard)
    assert event.reason == "pin_store_unavailable"
    assert event.details["error"] == "Timeout"
    assert event.details["cause"] == "the pin store did not answer within 0.3 s"


@pytest.mark.parametrize("where", ["surely_accepted", "parse_call_result"])
async def test_a_bug_on_a_call_result_answers_an_error_not_the_result(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """conduit-defined (fail closed): a failure inside the guard while checking a tools/call
    result gives the SDK JSON-RPC error -32603 (guard_internal_error), never the unchecked
    result: in the plain result's fast path, and in the full checks."""
    from conduit_mcp.guard import _calls

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("simulated bug")

    if where == "parse_call_result":  # the full checks: no fast path
        monkeypatch.setattr(_calls, "surely_accepted", lambda result, version: False)
    monkeypatch.setattr(_calls, where, broken)
    guard = Guard("s")
    async with scripted_session(guard, _handler) as (session, script):
        await session.list_tools()
        with pytest.raises(MCPError) as failed:
            await session.call_tool("a", {})
    assert failed.value.error.code == -32603
    assert failed.value.error.data["reason"] == "guard_internal_error"
    assert script.calls() == [("a", {})]
    (event,) = _withheld(guard)
    assert (event.tool, event.details["error"]) == ("a", "RuntimeError")


async def test_a_store_whose_pin_read_hangs_withholds_the_page_in_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A store the guard was given (as the proxy gives its own) is read for its pinned names
    before a page's first look-alike screen: when that read does not answer (a PostgreSQL
    server that stopped answering, a hung file system), the page is withheld once
    `PAGE_TIMEOUT` passes, as when the page's pin check hangs, instead of the listing (and
    every server message after it) waiting for ever."""
    release = threading.Event()
    with PinStore(tmp_path / "pins.db") as store:
        real = store.pinned
        stuck = [True]

        def pinned(*args: Any, **kwargs: Any) -> Any:
            if stuck[0]:
                release.wait(10)
            return real(*args, **kwargs)

        monkeypatch.setattr(store, "pinned", pinned)
        monkeypatch.setattr(_checks, "PAGE_TIMEOUT", 0.3)
        guard = Guard("s", pins=store, new="pin")
        try:
            async with scripted_session(guard, _handler) as (session, _):
                with anyio.fail_after(5):
                    down = await session.list_tools()
                stuck[0] = False
                back = await session.list_tools()
        finally:
            release.set()
    assert down.tools == []
    assert [t.name for t in back.tools] == ["a", "b"]
    (event,) = _withheld(guard)
    assert event.reason == "pin_store_unavailable"
    assert event.details["cause"] == "the pin store did not answer within 0.3 s"


async def test_a_store_whose_lookalike_pinning_hangs_withholds_the_page_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under `changed="allow"` a new name that looks like a listed one is pinned as a change
    of it: when that write does not answer (a PostgreSQL server that stopped answering, a
    hung file system), the page is withheld once `PAGE_TIMEOUT` passes, with the cause in the
    event, instead of the listing (and every server message after it) waiting for ever; the
    next listing the store answers pins and shows it."""
    release = threading.Event()
    guard = Guard("s", changed="allow")
    real = guard.pins.approve_all
    stuck = [False]

    def approve_all(*args: Any, **kwargs: Any) -> Any:
        if stuck[0]:
            release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(guard.pins, "approve_all", approve_all)
    monkeypatch.setattr(_checks, "PAGE_TIMEOUT", 0.3)
    lookalike = "\u0435cho"  # CYRILLIC SMALL LETTER IE, then "cho": looks like "echo"
    try:
        async with scripted_session(guard, _handler) as (session, _):
            LISTING_SWAP[0] = {"tools": [tool("echo")]}
            first = await session.list_tools()
            LISTING_SWAP[0] = {"tools": [tool("echo"), tool(lookalike)]}
            stuck[0] = True
            with anyio.fail_after(5):
                down = await session.list_tools()
            stuck[0] = False
            back = await session.list_tools()
    finally:
        LISTING_SWAP[0] = None
        release.set()
    assert [t.name for t in first.tools] == ["echo"]
    assert down.tools == []
    assert [t.name for t in back.tools] == ["echo", lookalike]
    (event,) = _withheld(guard)
    assert event.reason == "pin_store_unavailable"
    assert event.details["error"] == "Timeout"
    assert event.details["cause"] == "the pin store did not answer within 0.3 s"
    assert guard.pins.pin("s", lookalike) is not None
