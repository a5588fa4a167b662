"""`conduit-mcp pins pending` and `pins approve --instructions`: a server's instructions held by
a guard, reviewed and approved from a shell (issue 30, item 1). conduit-defined; fingerprints
checked against an independent oracle (rfc8785 + hashlib)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import rfc8785
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import PinStore

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def oracle(text: str) -> str:
    return "jcs-sha256:" + hashlib.sha256(rfc8785.dumps(text)).hexdigest()


def _store(tmp_path: Path, *texts: str) -> str:
    """A store where a guard saw the server `s` send each of `texts` in turn (the first one
    approved when there are two)."""
    location = str(tmp_path / "pins.db")
    with PinStore(location) as pins:
        for index, text in enumerate(texts):
            pins.check_instructions("s", text, approver="conduit-mcp guard")
            if index == 0 and len(texts) > 1:
                pins.approve_instructions("s", approver="alice")
    return location


def test_pending_lists_held_instructions_with_their_approve_line(tmp_path: Path) -> None:
    store = _store(tmp_path, "Be brief.", "Be brief.\u200b Obey.")
    code, out, _ = run("pins", "pending", "--store", store)
    assert code == 0
    assert "changed" in out and "instructions" in out
    assert "\\u200b" in out  # the hidden character shown, never silently invisible
    assert "approved now: Be brief." in out
    waiting = oracle("Be brief.\u200b Obey.")
    assert f"--instructions --fingerprint {waiting}" in out
    code, out, _ = run("pins", "pending", "--store", store, "--json")
    (row,) = json.loads(out)["pending"]
    assert (row["kind"], row["name"], row["status"]) == ("instructions", "instructions", "changed")
    assert (row["instructions"], row["approved"]) == ("Be brief.\u200b Obey.", "Be brief.")
    code, _, _ = run("pins", "pending", "--store", store, "--exit-code")
    assert code == 1


def test_approve_instructions_as_reviewed_only(tmp_path: Path) -> None:
    store = _store(tmp_path, "Be brief.")
    base = ("pins", "approve", "--store", store, "--server-id", "s", "--approver", "alice")
    code, _, err = run(*base, "--instructions", "--fingerprint", oracle("Other."), "--yes")
    assert code == 2 and "not the ones reviewed" in err
    code, out, _ = run(*base, "--instructions", "--fingerprint", oracle("Be brief."), "--yes")
    assert code == 0 and out.strip() == f"approved {oracle('Be brief.')}  instructions"
    code, _, err = run(*base, "--instructions", "--yes")
    assert code == 2 and "nothing pending for the instructions" in err
    code, out, _ = run("pins", "pending", "--store", store)
    assert out.strip() == "nothing pending"


def test_instructions_go_alone(tmp_path: Path) -> None:
    store = _store(tmp_path, "Be brief.")
    base = ("pins", "approve", "--store", store, "--server-id", "s", "--approver", "alice")
    code, _, err = run(*base, "--instructions", "--tool", "a")
    assert code == 2 and "--instructions" in err
    code, _, err = run(*base, "--instructions", "--all-pending")
    assert code == 2


def test_pins_audit_names_instructions_and_accounts_as_such(tmp_path: Path) -> None:
    """conduit-defined (newcomer trial): an approval of instructions left no audit entry, and
    `pins audit` printed a console account as `server   tool alice`. Now the approval is an
    entry naming who approved which text, and each entry names its subject: a tool, a server's
    instructions, or an account (no server). The text held for review is an entry too (a
    console's queue learned of held instructions only on a reload)."""
    store = _store(tmp_path, "Be brief.")
    with PinStore(store) as pins:
        pins.add_account("alice", role="approver", password="correct horse", by="root@vm")
    base = ("pins", "approve", "--store", store, "--server-id", "s", "--approver", "alice")
    code, _, _ = run(*base, "--instructions", "--fingerprint", oracle("Be brief."), "--yes")
    assert code == 0
    code, out, _ = run("pins", "audit", "--store", store)
    held, added, approved = out.splitlines()
    short = oracle("Be brief.").removeprefix("jcs-sha256:")[:16]
    assert held.endswith(f"  check instructions  {short}  server s  instructions")
    assert added.endswith("  account added   -                 account alice  by root@vm")
    assert approved.endswith(f"  approve instructions  {short}  server s  instructions  by alice")
    code, out, _ = run("pins", "audit", "--store", store, "--json")
    rows = json.loads(out)
    assert [(r["kind"], r["name"], r["action"], r["approver"]) for r in rows] == [
        ("instructions", "", "check", None),
        ("account", "alice", "account", "root@vm"),
        ("instructions", "", "approve", "alice"),
    ]
    assert rows[0]["fingerprint"] == rows[2]["fingerprint"] == oracle("Be brief.")
    code, out, _ = run("pins", "audit", "--store", store, "--tool", "alice")
    assert out.strip() == "no audit entries"  # an account is not a tool


def test_pins_audit_says_a_held_text_left_the_queue(tmp_path: Path) -> None:
    """conduit-defined (as a tool's pending entry leaving with outcome `approved`): a server
    that went back to its approved instructions took the held text out of the queue with no
    audit entry. The entry is an instructions entry of its own outcome, never read as a held
    text; its previous fingerprint is the one that waited."""
    store = _store(tmp_path, "Be brief.", "Obey.")
    with PinStore(store) as pins:
        pins.check_instructions("s", "Be brief.", approver="conduit-mcp guard")
    code, out, _ = run("pins", "audit", "--store", store)
    assert code == 0
    *_, settled = out.splitlines()
    brief = oracle("Be brief.").removeprefix("jcs-sha256:")[:16]
    obey = oracle("Obey.").removeprefix("jcs-sha256:")[:16]
    assert settled.endswith(
        f"  check instructions_approved  {brief}  server s  instructions  waited {obey}"
    )
    code, out, _ = run("pins", "audit", "--store", store, "--json")
    last = json.loads(out)[-1]
    assert (last["kind"], last["action"], last["outcome"], last["name"]) == (
        "instructions",
        "check",
        "instructions_approved",
        "",
    )
    assert (last["fingerprint"], last["previous_fingerprint"]) == (
        oracle("Be brief."),
        oracle("Obey."),
    )
