"""docs/identity.md runs: its blocks in order, in a scratch folder (the page's `policy.toml`
written from its first TOML block, `STORE` naming a sqlite pin store, a desktop client's config
to wrap, the venv's `conduit-mcp` on PATH): Python blocks executed, shell blocks run by bash
(`-e`, so any failing command fails the test), TOML blocks parsed (the policy by the policy
room, the shipper's config by tomllib). `text` blocks show command lines the tests named beside
them run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore
from conduit_mcp.policy import Policy

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "identity.md"
BIN = Path(sys.executable).parent


def _blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_every_block_of_the_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conduit-defined (issue 32: "every block of it runs as a test")."""
    blocks = _blocks()
    kinds = [kind for kind, _ in blocks]
    assert kinds.count("python") >= 3 and kinds.count("shell") >= 3 and kinds.count("toml") == 2
    store = tmp_path / "pins.db"
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(
        json.dumps({"mcpServers": {"files": {"command": "python", "args": ["server.py"]}}}),
        encoding="utf-8",
    )
    with PinStore(store) as pins:  # something in the audit log to ship
        tool = {"name": "read_file", "inputSchema": {"type": "object"}}
        pins.approve("files", Tool.from_wire("files", tool), approver="carol")
        pins.revoke("files", "read_file", approver="dave")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STORE", str(store))
    monkeypatch.delenv("CONDUIT_MCP_APPROVER", raising=False)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    tomls = 0
    for index, (kind, text) in enumerate(blocks):
        where = f"{PAGE.name} block {index} ({kind})"
        if kind == "toml":
            if tomls == 0:
                (tmp_path / "policy.toml").write_text(text, encoding="utf-8")
                assert len(Policy.parse(text, "policy.toml").rules) == 2, where
            else:
                assert "sources" in tomllib.loads(text), where
            tomls += 1
        elif kind == "python":
            exec(compile(text, where, "exec"), {"__name__": "__docs__"})
        elif kind == "shell":
            done = subprocess.run(
                ["bash", "-e", "-c", text],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"{where}: {done.stderr}"
    # the shipping block again, after one more entry: it resumes from its cursor
    (shipping,) = [text for kind, text in blocks if kind == "shell" and "CURSOR" in text]
    with PinStore(store) as pins:
        tool = {"name": "write_file", "inputSchema": {"type": "object"}}
        pins.approve("files", Tool.from_wire("files", tool), approver="erin")
    again = subprocess.run(["bash", "-e", "-c", shipping], cwd=tmp_path, env=env, timeout=120)
    assert again.returncode == 0
    # what the blocks did, read back independently of the commands' own output
    with PinStore(store) as pins:
        history = pins.policy_history()
        assert [p.approver for p in history] == ["alice", "bob"]
        audit = pins.audit_log()
    shipped = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(r["id"], r["action"], r["approver"]) for r in shipped] == [
        (e.id, e.action, e.approver) for e in audit
    ]
    assert len(shipped) == 3  # nothing repeated, nothing lost
    assert json.loads(config.read_text()) == {
        "mcpServers": {"files": {"command": "python", "args": ["server.py"]}}
    }  # --dry-run


def test_the_quoted_stop_line_is_the_one_the_proxy_writes() -> None:
    """conduit-defined: the stop line shown on the page has the shape of the logger's line
    (tests/proxy/test_tracing.py checks the real proxy's stderr holds it)."""
    text = PAGE.read_text(encoding="utf-8")
    assert (
        "conduit-mcp proxy: WARNING stopped (server 'files'): the client closed the connection;"
        " the server exited with code 0; exit code 0"
    ) in text


def test_the_shown_command_lines_name_real_commands_and_options() -> None:
    """conduit-defined: the `text` blocks' `conduit-mcp` command lines (the fleet's, run by
    tests/proxy/test_fleet_identity.py with a local issuer) name commands and options that
    exist: a renamed option fails here until the page says the new name."""
    import shlex

    import typer

    from conduit_mcp.cli import app

    shown = [text for kind, text in _blocks() if kind == "text"]
    lines = [
        line
        for text in shown
        for line in text.replace("\\\n", " ").splitlines()
        if line.startswith("conduit-mcp ")
    ]
    assert any("--auth jwt" in line for line in lines)
    for line in lines:
        words = shlex.split(line)[1:]
        command: object = typer.main.get_command(app)
        while words and hasattr(command, "commands") and words[0] in command.commands:
            command = command.commands[words.pop(0)]
        options = {
            opt
            for param in command.params  # type: ignore[attr-defined]
            for opt in (*param.opts, *param.secondary_opts)
        }
        used = []
        for word in words:
            if word == "--":
                break
            if word.startswith("--"):
                used.append(word)
        assert [opt for opt in used if opt not in options] == [], line
