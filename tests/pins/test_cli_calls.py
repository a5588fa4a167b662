"""`conduit-mcp pins calls`: the call audit (`proxy --audit-calls`) read back for a person, a
program (`--json`) and a log shipper (`--format jsonl [--follow] [--since]`); `pins prune
--calls-older-than`.

conduit-defined (the spec has no call audit). Records are written with
`PinStore.record_calls`, as the proxy's auditor writes them (tests/proxy/test_listen_identity.py
drives the proxy itself); digests are checked against the rfc8785 package + hashlib. The
follower is the real command in a subprocess, on sqlite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import CallRecord, PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.pins.test_cli_audit_follow import _Follower

runner = CliRunner()
#: Pinned clocks (tests read no clock): a call of 2096, and one of 2001 (older than any age
#: `pins prune` is given below, whenever the test runs).
RECENT = 4_000_000_000.0
OLD = 1_000_000_000.0


def digest(arguments: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(arguments)).hexdigest()


def call(
    tool: str,
    verdict: str = "passed",
    *,
    subject: str | None = "alice",
    groups: tuple[str, ...] = ("ops",),
    reason: str | None = None,
    server_id: str = "files",
    at: float | None = None,
    arguments: Any = None,
) -> CallRecord:
    args = {"path": "/tmp/x"} if arguments is None else arguments
    return CallRecord(
        0,
        RECENT if at is None else at,
        server_id,
        tool,
        subject,
        groups,
        verdict,
        reason,
        digest(args),
        request_id="7",
    )


@pytest.fixture
def store(tmp_path: Path) -> str:
    location = str(tmp_path / "pins.db")
    with PinStore(location) as pins:
        pins.record_calls(
            [
                call("read"),
                call("delete", "refused", subject="bob", groups=(), reason="policy_denied"),
                call("read", "error", server_id="mail"),
            ]
        )
    return location


def test_each_call_is_one_line_with_its_caller_verdict_and_digest(store: str) -> None:
    result = runner.invoke(app, ["pins", "calls", "--store", store])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    short = digest({"path": "/tmp/x"}).removeprefix("sha256:")[:16]
    assert lines[0].endswith(
        f"server files  tool read  subject alice (ops)  arguments {short}  id 1"
    )
    assert "refused policy_denied" in lines[1] and "subject bob  arguments" in lines[1]
    assert "error" in lines[2] and "server mail" in lines[2]


def test_filters_select_by_server_caller_tool_and_verdict(store: str) -> None:
    base = ["pins", "calls", "--store", store, "--json"]
    cases = {
        ("--server-id", "mail"): [3],
        ("--subject", "bob"): [2],
        ("--tool", "read"): [1, 3],
        ("--verdict", "refused"): [2],
        ("--since", "1"): [2, 3],
    }
    for extra, ids in cases.items():
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        assert [r["id"] for r in json.loads(result.stdout)] == ids, extra
    wrong = runner.invoke(app, [*base, "--verdict", "allowed"])
    assert wrong.exit_code == 2
    none = runner.invoke(app, ["pins", "calls", "--store", store, "--subject", "carol"])
    assert none.stdout.strip() == "no calls recorded"


def test_json_and_jsonl_carry_every_field(store: str) -> None:
    rows = json.loads(runner.invoke(app, ["pins", "calls", "--store", store, "--json"]).stdout)
    jsonl = runner.invoke(app, ["pins", "calls", "--store", store, "--format", "jsonl"]).stdout
    assert [json.loads(line) for line in jsonl.splitlines()] == rows
    assert rows[1] == {
        "id": 2,
        "at": rows[1]["at"],
        "server_id": "files",
        "tool": "delete",
        "subject": "bob",
        "groups": [],
        "verdict": "refused",
        "reason": "policy_denied",
        "arguments_digest": digest({"path": "/tmp/x"}),
        "arguments": None,
        "request_id": "7",
    }


def test_a_callers_hidden_characters_are_shown_not_obeyed(tmp_path: Path) -> None:
    """A subject and a tool name come from a token and a server: a bidi override or an escape
    sequence in them is shown as an escape, never written raw to a terminal."""
    location = str(tmp_path / "pins.db")
    with PinStore(location) as pins:
        pins.record_calls([call("rm\u202e", subject="eve\x1b[2J", groups=("a\u200bb",))])
    line = runner.invoke(app, ["pins", "calls", "--store", location]).stdout
    assert "\u202e" not in line and "\x1b" not in line and "\u200b" not in line
    assert "rm\\u202e" in line and "eve\\u001b[2J" in line and "a\\u200bb" in line


def test_a_cursor_past_the_end_is_said(store: str) -> None:
    result = runner.invoke(app, ["pins", "calls", "--store", store, "--since", "9"])
    assert result.exit_code == 0
    assert "--since 9 is past the end of the call audit" in result.stderr
    within = runner.invoke(app, ["pins", "calls", "--store", store, "--since", "3"])
    assert within.stderr == "" and within.stdout.strip() == "no calls recorded"


def test_prune_deletes_old_calls_only(tmp_path: Path) -> None:
    location = str(tmp_path / "pins.db")
    old = OLD
    with PinStore(location) as pins:
        pins.record_calls([call("read", at=old), call("read", at=old), call("write")])
    result = runner.invoke(app, ["pins", "prune", "--store", location, "--calls-older-than", "30"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "deleted 2 call records"
    with PinStore(location) as pins:
        assert [c.tool for c in pins.calls_since(0)] == ["write"]
    neither = runner.invoke(app, ["pins", "prune", "--store", location])
    assert neither.exit_code == 2 and "--calls-older-than" in neither.stderr


def test_follow_writes_new_calls_and_resumes_without_loss_or_repeat(location: str) -> None:
    """Real parts: the command follows while another connection records calls; after SIGTERM
    (exit 0) a follower from the last id forwarded writes what came meanwhile, once."""
    with PinStore(location) as pins:
        pins.record_calls([call("read")])
        follower = _Follower(location, command="calls")
        try:
            first = follower.next()
            pins.record_calls([call("write", "refused", reason="policy_denied")])
            second = follower.next()
            assert (first["tool"], second["tool"], second["reason"]) == (
                "read",
                "write",
                "policy_denied",
            )
        finally:
            assert follower.stop() == 0
        pins.record_calls([call("later")])
        resumed = _Follower(location, "--since", str(second["id"]), command="calls")
        try:
            assert resumed.next()["tool"] == "later"
        finally:
            assert resumed.stop() == 0
        assert resumed.lines.empty()


def test_the_verdicts_of_calls_the_server_got_select_too(tmp_path: Path) -> None:
    """docs/identity.md, the call audit: `withheld` (the server answered, the guard kept the
    answer from the client) and `unanswered` (sent on, no answer reached the client) are
    verdicts `--verdict` selects, each line showing its reason."""
    location = str(tmp_path / "pins.db")
    with PinStore(location) as pins:
        pins.record_calls(
            [
                call("read", "withheld", reason="invalid_tool_result"),
                call("slow", "unanswered", reason="caller_gone"),
                call("slow", "unanswered", reason="timeout"),
            ]
        )
    base = ["pins", "calls", "--store", location]
    for verdict, ids in (("withheld", [1]), ("unanswered", [2, 3])):
        result = runner.invoke(app, [*base, "--json", "--verdict", verdict])
        assert result.exit_code == 0, result.output
        assert [r["id"] for r in json.loads(result.stdout)] == ids, verdict
    lines = runner.invoke(app, [*base, "--verdict", "unanswered"]).stdout.splitlines()
    assert "unanswered caller_gone" in lines[0] and "unanswered timeout" in lines[1]
