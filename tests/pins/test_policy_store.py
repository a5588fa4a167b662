"""The policy kept in the pin store (`pins/_policy.py`): versions, their record, the database
refusing to rewrite one, and a new version reaching a follower in another connection through
the change feed, on sqlite and on a real PostgreSQL server."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from conduit_mcp.pins import PinStore, StoredPolicy
from conduit_mcp.policy import Caller, PolicyFollower
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

FIRST = '[[rule]]\ngroups = ["ops"]\nallow = ["files/*"]\n'
SECOND = '[[rule]]\ngroups = ["ops"]\nallow = ["files/read_*"]\n'


def test_versions_are_numbered_and_recorded(location: str) -> None:
    """conduit-defined: version 1, 2, ... with who, when, the source and the text's SHA-256
    (computed here with hashlib, independently)."""
    with PinStore(location) as store:
        assert store.policy() is None
        first = store.set_policy(FIRST, approver="alice", source="policy.toml")
        second = store.set_policy(SECOND, approver="bob")
        assert (first.version, second.version) == (1, 2)
        latest = store.policy()
        assert latest == second
        assert latest.digest == "sha256:" + hashlib.sha256(SECOND.encode()).hexdigest()
        history = store.policy_history()
        assert [(p.version, p.approver, p.source) for p in history] == [
            (1, "alice", "policy.toml"),
            (2, "bob", None),
        ]
        assert history[0].text == FIRST
        assert store.policies_since(1) == (second,)


def test_an_approver_is_required_and_text_must_be_text(location: str) -> None:
    """conduit-defined: a store a team shares is never written without a person's name."""
    with PinStore(location) as store:
        with pytest.raises(ValueError, match="approver"):
            store.set_policy(FIRST, approver="")
        with pytest.raises(TypeError):
            store.set_policy(b"x", approver="a")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="U\\+0000"):
            store.set_policy("a\x00", approver="a")
        assert store.policy_history() == ()


def test_the_database_refuses_to_rewrite_or_delete_a_version(tmp_path: Path) -> None:
    """Attack: someone with the database (not the library) edits a past version to hide what
    was in force: the triggers of migration 6 refuse."""
    path = tmp_path / "pins.db"
    with PinStore(path) as store:
        store.set_policy(FIRST, approver="alice")
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE conduit_mcp_policy SET text = 'x'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM conduit_mcp_policy")
    conn.close()


def test_postgresql_refuses_to_rewrite_a_version(postgres_url: str) -> None:  # noqa: F811
    """Attack, on PostgreSQL: the trigger function refuses UPDATE and DELETE."""
    import psycopg

    with PinStore(postgres_url) as store:
        store.set_policy(FIRST, approver="alice")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for sql in ("UPDATE conduit_mcp_policy SET text = 'x'", "DELETE FROM conduit_mcp_policy"):
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(sql)


def test_a_new_version_reaches_a_follower_through_the_feed(location: str) -> None:
    """Real parts: two connections (as two hosts of a fleet); a version set through one is
    applied by the follower of the other, and its callback runs; a stored text this follower
    cannot parse is skipped and the running policy stays."""
    applied: list[int] = []
    arrived = threading.Event()

    def on_change(policy: object) -> None:
        applied.append(policy.version)  # type: ignore[attr-defined]
        arrived.set()

    with PinStore(location) as proxy_store, PinStore(location) as admin:
        admin.set_policy(FIRST, approver="alice")
        follower = PolicyFollower(proxy_store, on_change=on_change, interval=0.01)
        try:
            assert follower.version == 1
            ops = Caller("x", frozenset({"ops"}))
            assert follower.current is not None
            assert follower.current.decide(ops, "files", "delete").allowed
            admin.set_policy("this is not TOML", approver="mallory")  # skipped
            admin.set_policy(SECOND, approver="bob")
            assert arrived.wait(10)
            assert applied == [3]
            assert follower.version == 3
            assert not follower.current.decide(ops, "files", "delete").allowed
            assert follower.current.decide(ops, "files", "read_x").allowed
        finally:
            follower.close()


def test_watch_policy_delivers_every_version_in_order(tmp_path: Path) -> None:
    """conduit-defined: `watch_policy` hands each version after the cursor, oldest first."""
    seen: list[StoredPolicy] = []
    done = threading.Event()

    def callback(stored: StoredPolicy) -> None:
        seen.append(stored)
        if len(seen) == 3:
            done.set()

    location = tmp_path / "pins.db"
    with PinStore(location) as store, PinStore(location) as other:
        other.set_policy(FIRST, approver="before")  # before the watch: not delivered
        watcher = store.watch_policy(callback, interval=0.01)
        for who in ("a", "b", "c"):
            other.set_policy(SECOND, approver=who)
        assert done.wait(10)
        watcher.close()
    assert [(s.version, s.approver) for s in seen] == [(2, "a"), (3, "b"), (4, "c")]
    with PinStore() as memory, pytest.raises(ValueError, match="in-memory"):
        memory.watch_policy(lambda stored: None)
