"""The call audit (`pins/_calls.py`): records in commit order with a cursor, the arguments'
digest (checked against the `rfc8785` package and hashlib, independently), values only when
asked, rows the database refuses to rewrite, retention; sqlite and PostgreSQL."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
import rfc8785

from conduit_mcp.pins import CallRecord, PinStore, arguments_digest
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)


def test_the_digest_is_sha256_of_the_rfc8785_form() -> None:
    """Oracle: the `rfc8785` package's canonical bytes, hashed with hashlib; member order and
    number spelling do not change it."""
    arguments = {"path": "/etc/passwd", "limit": 10, "flags": [True, None, 1.5]}
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(arguments)).hexdigest()
    assert arguments_digest(arguments) == expected
    assert arguments_digest({"limit": 10.0, **arguments}) == expected
    assert arguments_digest(None) == arguments_digest({})


def test_records_come_back_in_order_from_a_cursor(location: str) -> None:
    """conduit-defined: who, which tool, when, verdict, reason, digest; values only when
    kept; the cursor resumes."""
    digest = arguments_digest({"text": "secret"})
    records = [
        CallRecord(0, 1.0, "files", "read_file", "alice", ("ops",), "allowed", None, digest),
        CallRecord(
            0, 2.0, "files", "delete", "bob", (), "refused", "policy_denied", digest, request_id="7"
        ),
        CallRecord(
            0,
            3.0,
            "files",
            "a\\b\x00",
            None,
            ("x", "y"),
            "allowed",
            None,
            digest,
            arguments='{"text":"secret"}',
        ),
    ]
    with PinStore(location) as store:
        store.record_calls(records)
        stored = store.calls_since(0)
        assert [(r.tool, r.subject, r.groups, r.verdict, r.reason) for r in stored] == [
            ("read_file", "alice", ("ops",), "allowed", None),
            ("delete", "bob", (), "refused", "policy_denied"),
            ("a\\b\x00", None, ("x", "y"), "allowed", None),
        ]
        assert [r.arguments for r in stored] == [None, None, '{"text":"secret"}']
        assert stored[1].request_id == "7"
        assert all(r.arguments_digest == digest for r in stored)
        ids = [r.id for r in stored]
        assert ids == sorted(ids)
        assert store.calls_since(ids[0]) == stored[1:]
        assert store.prune_calls(0) == 3
        assert store.calls_since(0) == ()


def test_a_record_cannot_be_rewritten(tmp_path: Path) -> None:
    """Attack: someone with the database rewrites a verdict: the trigger refuses."""
    path = tmp_path / "pins.db"
    with PinStore(path) as store:
        store.record_calls(
            [CallRecord(0, 1.0, "s", "t", "u", (), "refused", "x", arguments_digest({}))]
        )
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE conduit_mcp_calls SET verdict = 'allowed'")
    conn.close()


def test_postgresql_refuses_a_rewrite(postgres_url: str) -> None:  # noqa: F811
    import psycopg

    with PinStore(postgres_url) as store:
        store.record_calls(
            [CallRecord(0, 1.0, "s", "t", "u", (), "refused", "x", arguments_digest({}))]
        )
    with (
        psycopg.connect(postgres_url, autocommit=True) as conn,
        pytest.raises(psycopg.Error, match="append-only"),
    ):
        conn.execute("UPDATE conduit_mcp_calls SET verdict = 'allowed'")
