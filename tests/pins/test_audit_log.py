"""The audit log small and ordered: one row per change of state (a held tool seen again moves
its pending row, not the log), a cursor a reader tails from another process without missing a
row while 4 writers run (sqlite and a real PostgreSQL server), and a retention for checks that
keeps every approval and revocation."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from typing import Any

import pytest

from conduit_mcp.client import Tool
from conduit_mcp.guard._checks import pin_page
from conduit_mcp.pins import PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)


def tool(name: str, description: str = "d", server: str = "s") -> Tool:
    return Tool.from_wire(
        server, {"name": name, "description": description, "inputSchema": {"type": "object"}}
    )


@pytest.fixture
def store(location: str) -> Iterator[PinStore]:
    with PinStore(location) as pins:
        yield pins


def test_re_listing_held_tools_writes_one_audit_row_per_change_of_state(store: PinStore) -> None:
    page = [tool(f"t{i}") for i in range(50)]
    for _ in range(20):
        pin_page(store, "s", page, pin_new=False, pin_changed=False)
    assert len(store.audit_log("s")) == 50
    assert {p.seen for p in store.pending("s")} == {20}
    page[0] = tool("t0", "changed")  # a new definition: a new state, one more row
    pin_page(store, "s", page, pin_new=False, pin_changed=False)
    assert len(store.audit_log("s")) == 51
    assert store.pending("s", "t0")[0].seen == 1


def test_the_cursor_reads_every_entry_once_in_id_order(store: PinStore) -> None:
    for i in range(25):
        store.approve("s", tool(f"t{i}"), approver="alice")
    seen: list[int] = []
    cursor = 0
    while batch := store.audit_since(cursor, limit=7):
        seen += [e.id for e in batch]
        cursor = batch[-1].id
    assert seen == [e.id for e in store.audit_log()] and len(seen) == 25
    changes, after = store.changes_since(0)
    assert [e.action for e in changes] == ["approve"] * 25 and after == seen[-1]


def test_retention_prunes_checks_and_keeps_approvals_and_revocations(store: PinStore) -> None:
    store.approve("s", tool("a"), approver="alice")
    store.check_page("s", [tool("b")])
    store.revoke("s", "a", approver="bob")
    assert store.prune_checks(3600) == 0  # younger than an hour: kept
    assert store.prune_checks(0) == 1
    assert [e.action for e in store.audit_log()] == ["approve", "revoke"]


WRITERS = 4
ROUNDS = 40


def _writer(location: str, index: int, start: Any) -> None:
    start.wait()
    server = f"s{index % 2}"  # two writers per server: both locks are exercised
    with PinStore(location, timeout=60) as store:
        for round_ in range(ROUNDS):
            name = f"w{index}-{round_ % 5}"
            store.check_page(server, [tool(name, f"r{round_}", server)])  # a new state each time
            store.approve(server, tool(name, f"r{round_}", server), approver=f"p{index}")
            if round_ % 3 == 0:
                store.revoke(server, name, approver=f"p{index}")


def _tailer(location: str, start: Any, stop: Any, out: Any) -> None:
    start.wait()
    seen: list[int] = []
    cursor = 0
    with PinStore(location, timeout=60) as store:
        while True:
            stopping = stop.is_set()
            batch = store.audit_since(cursor)
            seen += [entry.id for entry in batch]
            if batch:
                cursor = batch[-1].id
            elif stopping:
                break
    out.put(seen)


def test_a_tail_by_the_cursor_in_another_process_misses_no_row_while_4_writers_run(
    location: str,
) -> None:
    PinStore(location).close()
    context = multiprocessing.get_context("spawn")
    start, stop, out = context.Event(), context.Event(), context.Queue()
    tailer = context.Process(target=_tailer, args=(location, start, stop, out))
    writers = [context.Process(target=_writer, args=(location, i, start)) for i in range(WRITERS)]
    for process in [tailer, *writers]:
        process.start()
    start.set()
    for writer in writers:
        writer.join(120)
    stop.set()
    seen = out.get(timeout=120)
    tailer.join(60)
    assert [p.exitcode for p in [tailer, *writers]] == [0] * (WRITERS + 1)
    with PinStore(location) as store:
        stored = [e.id for e in store.audit_log()]
    assert len(stored) > 100  # the writers did write
    assert sorted(set(stored) - set(seen)) == []  # no row missed
    assert seen == sorted(seen) and len(seen) == len(set(seen))  # each once, in order


def test_pins_prune_keeps_approvals_and_revocations(location: str) -> None:
    from typer.testing import CliRunner

    from conduit_mcp.cli import app

    with PinStore(location) as store:
        store.approve("s", tool("a"), approver="alice")
        store.check_page("s", [tool("b")])
        store.revoke("s", "a", approver="bob")
    runner = CliRunner()
    kept = runner.invoke(app, ["pins", "prune", "--store", location, "--checks-older-than", "1"])
    assert (kept.exit_code, kept.stdout) == (0, "deleted 0 check entries\n")
    gone = runner.invoke(app, ["pins", "prune", "--store", location, "--checks-older-than", "0"])
    assert (gone.exit_code, gone.stdout) == (0, "deleted 1 check entry\n")
    with PinStore(location) as store:
        assert [e.action for e in store.audit_log()] == ["approve", "revoke"]
        assert [p.name for p in store.pending()] == ["b"]
