"""`conduit-mcp pins audit --format jsonl [--follow] [--since CURSOR]`: the audit log streamed
in commit order for a log shipper, resumable from the last id, on sqlite and PostgreSQL; the
follower is the real command in a subprocess, stopped with SIGTERM."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

runner = CliRunner()


def _tool(name: str) -> Tool:
    return Tool.from_wire("files", {"name": name, "inputSchema": {"type": "object"}})


def test_jsonl_is_the_audit_log_in_commit_order_and_since_resumes(tmp_path: Path) -> None:
    """conduit-defined: each line one entry with the fields of `--json`; `--since ID` gives
    exactly the entries after ID (read back from the store's own audit_log)."""
    store = str(tmp_path / "pins.db")
    with PinStore(store) as pins:
        pins.approve("files", _tool("read"), approver="alice")
        pins.approve("files", _tool("write"), approver="alice")
        pins.revoke("files", "write", approver="bob", reason="it mails anyone")
        expected = pins.audit_log()
    result = runner.invoke(app, ["pins", "audit", "--store", store, "--format", "jsonl"])
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["id"], r["action"], r["name"], r["approver"], r["reason"]) for r in lines] == [
        (e.id, e.action, e.name, e.approver, e.reason) for e in expected
    ]
    assert lines[-1]["reason"] == "it mails anyone"  # the revocation's reason is shipped
    whole = runner.invoke(app, ["pins", "audit", "--store", store, "--json"])
    assert json.loads(whole.stdout) == lines  # one shape for --json and jsonl
    cursor = str(lines[0]["id"])
    again = runner.invoke(
        app, ["pins", "audit", "--store", store, "--format", "jsonl", "--since", cursor]
    )
    assert [json.loads(line)["id"] for line in again.stdout.splitlines()] == [
        e.id for e in expected[1:]
    ]


class _Follower:
    """The real command (`pins audit`, or `pins calls`), its stdout read line by line on a
    thread."""

    def __init__(self, store: str, *extra: str, command: str = "audit") -> None:
        args = ["pins", command, "--store", store, "--format", "jsonl", "--follow", *extra]
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from conduit_mcp.cli import main; main()", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def next(self) -> dict[str, Any]:
        return dict(json.loads(self.lines.get(timeout=30)))

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self._reader.join(30)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.stdout.close()
        self.stderr = self.process.stderr.read()
        self.process.stderr.close()
        return code


def test_follow_streams_new_entries_and_resumes_without_loss_or_repeat(location: str) -> None:
    """Real parts: the command follows while another connection commits; after SIGTERM (exit
    0) a new follower from the last id forwarded writes what was committed meanwhile, once."""
    with PinStore(location) as pins:
        pins.approve("files", _tool("read"), approver="alice")
        follower = _Follower(location)
        try:
            first = follower.next()
            assert (first["action"], first["name"]) == ("approve", "read")
            pins.revoke("files", "read", approver="bob")
            second = follower.next()
            assert (second["action"], second["approver"]) == ("revoke", "bob")
        finally:
            assert follower.stop() == 0
        pins.approve("files", _tool("later"), approver="carol")  # while nobody follows
        resumed = _Follower(location, "--since", str(second["id"]))
        try:
            third = resumed.next()
            assert (third["name"], third["approver"]) == ("later", "carol")
            pins.approve("files", _tool("last"), approver="dave")
            assert resumed.next()["name"] == "last"
        finally:
            assert resumed.stop() == 0
        assert resumed.lines.empty()  # nothing repeated


def test_jsonl_carries_every_field_of_json_the_reason_included(tmp_path: Path) -> None:
    """conduit-defined (the help: "--format jsonl writes the same fields"; a hostile review):
    a revocation's and a rejection's reason, kept with the entry, reaches the shipper too;
    each line has exactly the keys of `--json`'s rows."""
    store = str(tmp_path / "pins.db")
    with PinStore(store) as pins:
        pins.approve("files", _tool("write"), approver="alice")
        pins.revoke("files", "write", approver="bob", reason="it wrote outside the sandbox")
    as_json = runner.invoke(app, ["pins", "audit", "--store", store, "--json"])
    jsonl = runner.invoke(app, ["pins", "audit", "--store", store, "--format", "jsonl"])
    rows = json.loads(as_json.stdout)
    lines = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [set(line) for line in lines] == [set(row) for row in rows]
    assert lines[-1]["reason"] == "it wrote outside the sandbox"


def test_a_cursor_past_the_end_is_said_on_stderr(tmp_path: Path) -> None:
    """conduit-defined: `--since` past the log's last entry (a cursor from another store, a
    typo) wrote nothing and said nothing; now one line on stderr names the last id, and the
    entries are still those after the cursor (none)."""
    store = str(tmp_path / "pins.db")
    with PinStore(store) as pins:
        pins.approve("files", _tool("read"), approver="alice")
        (last,) = pins.audit_log()
    for extra in (["--format", "jsonl"], []):
        past = runner.invoke(
            app, ["pins", "audit", "--store", store, "--since", str(last.id + 5), *extra]
        )
        assert past.exit_code == 0
        assert f"--since {last.id + 5} is past the end" in past.stderr
        assert f"its last entry is {last.id}" in past.stderr
        assert "read" not in past.stdout
        within = runner.invoke(
            app, ["pins", "audit", "--store", store, "--since", str(last.id), *extra]
        )
        assert within.exit_code == 0 and within.stderr == ""
