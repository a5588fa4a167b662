"""`conduit-mcp policy check|set|show`: a bad file is one line naming FILE:LINE and nothing is
stored; a good one becomes the next version, with who set it; `show` prints what is in force."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import PinStore

runner = CliRunner()

GOOD = """default = "deny"
[[rule]]
groups = ["ops"]
allow = ["files/*", "everything/echo"]
deny = ["*/delete_*"]
"""
BAD = """default = "deny"
[[rule]]
groups = ["ops"]
allow = ["files"]
"""


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _no_env_approver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONDUIT_MCP_APPROVER", raising=False)


def test_set_show_and_history(tmp_path: Path) -> None:
    """conduit-defined: two versions set, the latest shown with its text, the history listed;
    the digest is the file's SHA-256 (hashlib, independently)."""
    store = str(tmp_path / "pins.db")
    policy = tmp_path / "policy.toml"
    policy.write_text(GOOD, encoding="utf-8")
    code, out, _ = run("policy", "set", str(policy), "--store", store, "--approver", "alice")
    digest = "sha256:" + hashlib.sha256(GOOD.encode()).hexdigest()
    assert code == 0
    assert out == f"policy version 1 set (default deny, 1 rule, {digest}) by alice\n"
    code, out, _ = run("policy", "set", str(policy), "--store", store, "--approver", "bob")
    assert "policy version 2 set" in out
    code, out, _ = run("policy", "show", "--store", store)
    assert code == 0
    assert out.splitlines()[0].startswith("version 2  ")
    assert "by bob" in out.splitlines()[0]
    assert out.endswith(GOOD)
    code, out, _ = run("policy", "show", "--store", store, "--history", "--json")
    rows = json.loads(out)
    assert [(r["version"], r["approver"], r["digest"]) for r in rows] == [
        (1, "alice", digest),
        (2, "bob", digest),
    ]
    assert "text" not in rows[0]


def test_a_bad_file_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    """conduit-defined (issue 32): FILE:LINE: the problem, exit 2, the running policy stays."""
    store = str(tmp_path / "pins.db")
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text(BAD, encoding="utf-8")
    assert run("policy", "set", str(good), "--store", store, "--approver", "alice")[0] == 0
    code, out, err = run("policy", "set", str(bad), "--store", store, "--approver", "bob")
    assert code == 2
    assert out == ""
    assert err.strip().splitlines() == [
        f"conduit-mcp: {bad}:4: rule 1: allow: 'files' is not SERVER_ID/TOOL (no '/')"
    ]
    with PinStore(store) as pins:
        assert [p.approver for p in pins.policy_history()] == ["alice"]
    code, out, err = run("policy", "check", str(bad))
    assert code == 2 and f"{bad}:4:" in err
    code, out, _ = run("policy", "check", str(good))
    assert code == 0 and out.startswith(f"{good}: a policy (default deny, 1 rule, sha256:")


def test_an_approver_is_required_and_the_placeholder_refused(tmp_path: Path) -> None:
    """conduit-defined: as `pins approve`, a store is never written without a person's name."""
    policy = tmp_path / "policy.toml"
    policy.write_text(GOOD, encoding="utf-8")
    store = str(tmp_path / "pins.db")
    assert run("policy", "set", str(policy), "--store", store)[0] == 2
    code, _, err = run("policy", "set", str(policy), "--store", store, "--approver", "WHO")
    assert code == 2 and "WHO stands for the person" in err
    assert not Path(store).exists()


def test_show_on_a_store_without_policy_or_without_store(tmp_path: Path) -> None:
    """conduit-defined: exit 1 "no policy set"; a missing store is exit 2 and not created."""
    store = tmp_path / "pins.db"
    PinStore(store).close()
    code, out, _ = run("policy", "show", "--store", str(store))
    assert (code, out) == (1, "no policy set\n")
    missing = tmp_path / "missing.db"
    code, _, err = run("policy", "show", "--store", str(missing))
    assert code == 2 and "no such pin store" in err
    assert not missing.exists()
