"""Automatic pins against people: a revocation is never undone and a person's approval never
replaced, whatever commits between the guard's check and its write; several processes racing
revoke, approve and the guard's automatic pins, on sqlite and a real PostgreSQL server."""

from __future__ import annotations

import copy
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp.client import Tool, fingerprint
from conduit_mcp.guard._checks import GUARD_APPROVER, pin_page
from conduit_mcp.pins import PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

RAW: dict[str, Any] = {
    "name": "t",
    "title": "T",
    "description": "A tool.",
    "inputSchema": {"type": "object"},
}


def tool(raw: dict[str, Any], server: str = "s") -> Tool:
    return Tool.from_wire(server, raw)


def retitled(raw: dict[str, Any], title: str) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out["title"] = title
    return out


@pytest.fixture(params=["file", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "pins.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(location: str) -> Iterator[PinStore]:
    with PinStore(location) as pins:
        yield pins


def between_check_and_write(store: PinStore, action: Any) -> None:
    """Run `action` once, right after the store's next page lookup returns (as another host
    would, committing between the guard's check and its write)."""
    original = store._lookup  # the page lookup without any lock
    done: list[bool] = []

    def lookup(*args: Any) -> Any:
        found = original(*args)
        if not done:
            done.append(True)
            action()
        return found

    store._lookup = lookup  # type: ignore[method-assign]


def test_a_revoke_between_the_check_and_a_cosmetic_re_pin_is_not_undone(
    store: PinStore, location: str
) -> None:
    store.approve("s", tool(RAW), approver="alice")
    with PinStore(location) as other:
        between_check_and_write(store, lambda: other.revoke("s", "t", approver="bob"))
        verdicts = pin_page(
            store, "s", [tool(retitled(RAW, "New"))], pin_new=True, pin_changed=False
        )
    assert store.pin("s", "t") is None
    assert [v.status for v in verdicts] == ["revoked"]
    assert [(e.action, e.approver) for e in store.audit_log("s") if e.action != "check"] == [
        ("approve", "alice"),
        ("revoke", "bob"),
    ]


def test_a_person_approving_between_the_check_and_a_tofu_pin_is_not_replaced(
    store: PinStore, location: str
) -> None:
    alices = tool({**RAW, "description": "Alice's."})
    with PinStore(location) as other:
        between_check_and_write(store, lambda: other.approve("s", alices, approver="alice"))
        verdicts = pin_page(store, "s", [tool(RAW)], pin_new=True, pin_changed=False)
    pin = store.pin("s", "t")
    assert pin is not None
    assert (pin.approver, pin.fingerprint) == ("alice", fingerprint(alices.raw))
    assert [v.status for v in verdicts] == ["changed"]  # held or blocked by `changed`, not pinned
    assert [v.pinned for v in verdicts] == [False]


def test_a_cosmetic_change_is_recorded_beside_a_persons_approval(store: PinStore) -> None:
    approved = tool(RAW)
    store.approve("s", approved, approver="alice")
    variant = tool(retitled(RAW, "Shiny"))
    verdicts = pin_page(store, "s", [variant], pin_new=False, pin_changed=False)
    assert [(v.status, v.pinned) for v in verdicts] == [("cosmetic", True)]
    pin = store.pin("s", "t")
    assert pin is not None
    assert (pin.fingerprint, pin.approver) == (fingerprint(approved.raw), "alice")
    assert pin.cosmetic_fingerprint == fingerprint(variant.raw)
    assert store.check("s", variant) == "approved"  # accepted: no new audit row next time
    rows = len(store.audit_log("s"))
    pin_page(store, "s", [variant], pin_new=False, pin_changed=False)
    assert len(store.audit_log("s")) == rows
    assert {e.approver for e in store.audit_log("s") if e.action == "approve"} == {"alice"}


def test_a_cosmetic_change_the_policy_does_not_accept_is_a_change(store: PinStore) -> None:
    store.approve("s", tool(RAW), approver="alice")
    variant = tool(retitled(RAW, "Shiny"))
    verdicts = pin_page(
        store, "s", [variant], pin_new=False, pin_changed=False, accept_cosmetic=False
    )
    assert [(v.status, v.pinned) for v in verdicts] == [("changed", False)]
    pin = store.pin("s", "t")
    assert pin is not None and pin.cosmetic_fingerprint is None
    assert [(p.name, p.status) for p in store.pending("s")] == [("t", "cosmetic")]


# -- several processes ------------------------------------------------------------------------

TOOLS = 12
ROUNDS = 30


def _raws(title: str) -> list[dict[str, Any]]:
    return [{**retitled(RAW, title), "name": f"t{i}"} for i in range(TOOLS)]


def _worker(role: str, location: str, start: Any) -> None:
    start.wait()
    with PinStore(location, timeout=60) as store:
        for round_ in range(ROUNDS):
            if role == "guard":
                title = "A" if round_ % 2 else "B"
                page = [tool(raw) for raw in _raws(title)]
                pin_page(store, "s", page, pin_new=True, pin_changed=False)
            elif role == "revoker":
                for i in range(round_ % 3, TOOLS, 3):
                    store.revoke("s", f"t{i}", approver="bob")
            else:
                page = [tool(raw) for raw in _raws("A")][round_ % 4 :: 4]
                store.approve_all("s", page, approver="alice")


def test_racing_processes_never_undo_a_revocation_or_replace_a_persons_approval(
    location: str,
) -> None:
    with PinStore(location) as seed:  # half pinned by the guard (TOFU), half by alice
        seed.approve_all("s", [tool(raw) for raw in _raws("A")][::2], approver="alice")
        pin_page(seed, "s", [tool(raw) for raw in _raws("A")], pin_new=True, pin_changed=False)
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    roles = ["guard", "guard", "revoker", "approver"]
    workers = [context.Process(target=_worker, args=(r, location, start)) for r in roles]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(300)
    assert [w.exitcode for w in workers] == [0] * len(workers)
    with PinStore(location) as store:
        log = store.audit_log("s")
        pins = {p.name: p for p in store.pins("s")}
    revoked: dict[str, bool] = {}
    approver: dict[str, str | None] = {}
    for entry in log:  # ascending id = commit order
        if entry.action == "revoke":
            revoked[entry.name] = True
            approver.pop(entry.name, None)
        elif entry.action == "approve":
            guard = entry.approver == GUARD_APPROVER
            assert not (guard and revoked.get(entry.name)), f"revocation undone: {entry}"
            assert not (guard and entry.previous_fingerprint), f"approval replaced: {entry}"
            revoked[entry.name] = False
            approver[entry.name] = entry.approver
    assert {name: pin.approver for name, pin in pins.items()} == approver
    assert any(e.action == "revoke" for e in log) and any(e.approver == GUARD_APPROVER for e in log)
