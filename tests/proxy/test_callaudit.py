"""`--audit-calls`' writer (`proxy/_callaudit.py`): records reach the store in order with the
caller, verdict, reason and the arguments' digest (sha256 of the `rfc8785` package's form,
computed here), never the values unless asked; a full queue drops and says so."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest
import rfc8785

from conduit_mcp.pins import PinStore
from conduit_mcp.proxy import _callaudit
from conduit_mcp.proxy._callaudit import CallAuditor


def _call(n: int, arguments: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": arguments},
    }


def test_records_reach_the_store_with_a_digest_and_no_values(tmp_path: Path) -> None:
    """Oracle: the `rfc8785` package and hashlib for the digest."""
    location = tmp_path / "pins.db"
    arguments = {"path": "/home/alice/secret.txt"}
    with PinStore(location) as store:
        auditor = CallAuditor(store, "files", interval=0.01)
        auditor.record(
            _call(1, arguments), subject="alice", groups=frozenset({"ops"}), verdict="allowed"
        )
        auditor.record(
            _call(2, {}), subject="bob", groups=(), verdict="refused", reason="policy_denied"
        )
        auditor.record(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            subject="x",
            groups=(),
            verdict="allowed",
        )  # not a call: not recorded
        auditor.close()
        records = store.calls_since(0)
    digest = "sha256:" + hashlib.sha256(rfc8785.dumps(arguments)).hexdigest()
    assert [(r.subject, r.groups, r.verdict, r.reason, r.request_id) for r in records] == [
        ("alice", ("ops",), "allowed", None, "1"),
        ("bob", (), "refused", "policy_denied", "2"),
    ]
    assert records[0].arguments_digest == digest
    assert all(r.arguments is None for r in records)
    assert "secret" not in repr(records)


def test_arguments_are_kept_only_when_asked(tmp_path: Path) -> None:
    """conduit-defined: `keep_arguments` stores the canonical text (RFC 8785, the package's)."""
    with PinStore(tmp_path / "pins.db") as store:
        auditor = CallAuditor(store, "files", keep_arguments=True, interval=0.01)
        auditor.record(_call(1, {"b": 1.0, "a": "x"}), subject=None, groups=(), verdict="allowed")
        auditor.close()
        (record,) = store.calls_since(0)
    assert record.arguments == rfc8785.dumps({"b": 1.0, "a": "x"}).decode()


def test_a_full_queue_drops_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """conduit-defined: memory bounded; what was dropped is logged."""
    monkeypatch.setattr(_callaudit, "MAX_QUEUED", 3)
    with PinStore(tmp_path / "pins.db") as store:
        auditor = CallAuditor(store, "files", interval=3600)  # no write until close
        for n in range(5):
            auditor.record(_call(n, {}), subject="a", groups=(), verdict="allowed")
        with caplog.at_level(logging.ERROR, logger="conduit_mcp.proxy"):
            auditor.close()
        assert len(store.calls_since(0)) == 3
    assert "2 records dropped" in caplog.text


def test_a_string_that_is_not_unicode_costs_no_record(tmp_path: Path) -> None:
    """A hostile review: one record whose subject, group or tool held a lone surrogate made the
    store refuse the whole batch (up to 500 calls, every caller's). Such a string is now
    stored as its escape, and the records beside it are written."""
    with PinStore(tmp_path / "pins.db") as store:
        auditor = CallAuditor(store, "files", interval=0.01)
        auditor.record(_call(1, {}), subject="alice", groups=(), verdict="passed")
        bad = _call(2, {})
        bad["params"] = {"name": "rm\udc80", "arguments": {}}
        auditor.record(bad, subject="eve\ud800", groups=("g\udfff",), verdict="passed")
        auditor.record(_call(3, {}), subject="bob", groups=(), verdict="passed")
        auditor.close()
        records = store.calls_since(0)
    assert [(r.request_id, r.subject, r.groups, r.tool) for r in records] == [
        ("1", "alice", (), "read_file"),
        ("2", "eve\\ud800", ("g\\udfff",), "rm\\udc80"),
        ("3", "bob", (), "read_file"),
    ]


def test_a_servers_own_reason_is_no_refusal_of_the_proxy() -> None:
    """A hostile review: a server's error that gave a `data.reason` (here `policy_denied`)
    was recorded as the proxy refusing, so a call the server received and ran was missing
    from `pins calls --verdict passed`. Only an error naming the guard as its source (the
    guard's refusals: guard/_jsonrpc.py) is `refused`; a server's own is `error`, and so is
    one that forges the guard's source too, once the seam says the server wrote it
    (`by_server`: tests/proxy/test_forged_refusal.py, test_listen_forged_audit.py)."""
    from conduit_mcp.guard._jsonrpc import SOURCE
    from conduit_mcp.proxy.listen._callers import GUARD_SOURCE, _verdict

    assert GUARD_SOURCE == SOURCE

    def error(data: object) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no", "data": data}}

    held = error({"source": SOURCE, "reason": "tool_held"})
    assert _verdict(error({"reason": "policy_denied"})) == ("error", None)
    # The guard's error to a request it never wrote (`unsent`) is its refusal; to one it
    # wrote, it withheld the server's answer (and says less was stopped when nobody knows).
    assert _verdict(held, unsent=True) == ("refused", "tool_held")
    assert _verdict(held) == ("withheld", "tool_held")
    assert _verdict(held, True) == ("error", None)
    assert _verdict(held, True, True) == ("error", None)  # the server wrote it: never refused
    assert _verdict(error(None)) == ("error", None)
    assert _verdict({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}) == ("passed", None)
