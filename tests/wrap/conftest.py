"""Fixtures for the config tests: the `conduit-mcp` under test, the client configs of
tests/wrap/configs copied where their client keeps them, and the proxy tests' servers and
TypeScript client (a wrapped entry is run as its client runs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from conduit_mcp.cli import app
from tests import forkserver
from tests.guard.conftest import server_everything_argv as server_everything_argv
from tests.proxy.conftest import CONDUIT
from tests.proxy.conftest import sdk_http_server as sdk_http_server
from tests.proxy.conftest import ts_sdk as ts_sdk

CONFIGS = Path(__file__).resolve().parent / "configs"
#: Each client's config in tests/wrap/configs (SOURCES.md), at the path its client reads it
#: from, under a folder of its own.
CLIENT_CONFIGS = {
    "Claude Desktop": "claude-desktop/claude_desktop_config.json",
    "Claude Code": "claude-code/.mcp.json",
    "Claude Code (user)": "claude-code-user/.claude.json",
    "Cursor": "cursor/.cursor/mcp.json",
    "VS Code": "vscode/.vscode/mcp.json",
    "Windsurf": "windsurf/.codeium/windsurf/mcp_config.json",
    "Gemini CLI": "gemini/.gemini/settings.json",
    "Codex": "codex/.codex/config.toml",
}


def copy_config(tmp_path: Path, name: str) -> Path:
    """The config `name` (a path under tests/wrap/configs) copied to the same path under
    `tmp_path`."""
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIGS / name, target)
    return target


def conduit(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    """Run a `conduit-mcp` command in this process (the command's own code, its exit code and
    output; no interpreter start per call); fails unless it exits with `code`. A command that
    starts the proxy, or writes the running program's path into a config (wrap without
    --proxy-command), runs as a process: `conduit_process`."""
    result = CliRunner().invoke(app, list(args))
    done = subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr, result.exception)
    return done


def conduit_process(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    """Run the `conduit-mcp` console script under test as a process; fails unless it exits
    with `code`."""
    done = forkserver.run([str(CONDUIT), *args], text=True, timeout=120)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    return done
