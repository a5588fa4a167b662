"""`PinStore.watch`, the change feed: approvals and revocations committed by another process
reach the callback within a second (PostgreSQL LISTEN/NOTIFY, sqlite `PRAGMA data_version`),
in commit order; the watcher survives a failing callback and stops on close."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bench.pins_feed_latency import latencies
from conduit_mcp.client import Tool
from conduit_mcp.pins import AuditEntry, PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)


def test_every_change_from_another_process_arrives(location: str) -> None:
    """Every change arrives (how fast: `python -m bench.pins_feed_latency`, not a timed test;
    the latencies are the bench's own measurements)."""
    values = latencies(location, 10, pause=0.05)
    assert len(values) == 10


def test_changes_arrive_in_commit_order_and_a_failing_callback_is_survived(
    location: str,
) -> None:
    seen: list[tuple[str, str]] = []
    done = threading.Event()

    def callback(entry: AuditEntry) -> None:
        seen.append((entry.action, entry.name))
        if len(seen) == 1:
            raise RuntimeError("a bug in the callback")
        if len(seen) == 3:
            done.set()

    raw = {"name": "t", "inputSchema": {"type": "object"}}
    with PinStore(location) as store, PinStore(location) as other:
        store.approve("s", Tool.from_wire("s", raw), approver="before")  # before: not delivered
        watcher = store.watch(callback)
        other.approve("s", Tool.from_wire("s", raw), approver="a")
        other.check_page("s", [Tool.from_wire("s", {**raw, "name": "u"})])  # not a change
        other.revoke("s", "t", approver="b")
        other.approve("s", Tool.from_wire("s", raw), approver="c")
        assert done.wait(5)
        watcher.close()
        assert not watcher.running
    assert seen == [("approve", "t"), ("revoke", "t"), ("approve", "t")]


def test_a_private_memory_store_has_nothing_to_watch() -> None:
    with PinStore() as store, pytest.raises(ValueError, match="in-memory"):
        store.watch(lambda entry: None)


def test_closing_the_store_ends_the_watcher(tmp_path: Path) -> None:
    store = PinStore(tmp_path / "pins.db")
    watcher = store.watch(lambda entry: None, interval=0.01)
    store.close()
    pause = threading.Event()
    # The safety poll (once a second) finds the store closed; the bound only stops a hang
    # (300 pauses, 3 s, were a verdict on load: a poll thread waits its turn under a load of 8).
    for _ in range(6000):
        if not watcher.running:
            break
        pause.wait(0.01)
    assert not watcher.running
