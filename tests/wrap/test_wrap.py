"""`conduit-mcp wrap` / `unwrap` on a realistic config of each client (tests/wrap/configs,
sources in its SOURCES.md, each at the path its client reads): every server entry runs through
the proxy, the rest of the file is untouched, wrapping twice changes nothing, unwrap gives the
original bytes back.

The expected entries are written out here from each product's documented meaning of its
fields (command/args = stdio; url, serverUrl, httpUrl = Streamable HTTP; Gemini's url = SSE),
not from what the code produced.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.conftest import CONDUIT

from .conftest import CLIENT_CONFIGS, CONFIGS, conduit, copy_config

PROXY = "/opt/conduit/bin/conduit-mcp"
CLAUDE_DESKTOP = CLIENT_CONFIGS["Claude Desktop"]
CURSOR = CLIENT_CONFIGS["Cursor"]

#: config file -> {server name: the original command line, or ("http", url), or None (skipped)}
EXPECTED: dict[str, dict[str, Any]] = {
    "claude-desktop/claude_desktop_config.json": {
        "filesystem": [
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/Users/username/Desktop",
            "/Users/username/Downloads",
        ],
        "github": [
            "docker",
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server",
        ],
    },
    "claude-code/.mcp.json": {
        "shared-server": ["/path/to/server"],
        "api-server": ("http", "${API_BASE_URL:-https://api.example.com}/mcp"),
        "airtable": ["npx", "-y", "airtable-mcp-server"],
    },
    "claude-code-user/.claude.json": {
        "sentry": ("http", "https://mcp.sentry.dev/mcp"),
        "my-server": ["npx", "-y", "some-mcp-server"],
    },
    "cursor/.cursor/mcp.json": {
        "server-name": ["npx", "-y", "mcp-server"],
        "remote-server": ("http", "http://localhost:3000/mcp"),
    },
    "vscode/.vscode/mcp.json": {
        "Perplexity": ["npx", "-y", "server-perplexity-ask"],
        "fetch": ["uvx", "mcp-server-fetch"],
        "github": ("http", "https://api.githubcopilot.com/mcp"),
    },
    "windsurf/.codeium/windsurf/mcp_config.json": {
        "github": ["npx", "-y", "@modelcontextprotocol/server-github"],
        "figma": ("http", "https://your-server-url/mcp"),
    },
    "gemini/.gemini/settings.json": {
        "pythonTools": ["python", "-m", "my_mcp_server", "--port", "8080"],
        "httpServerWithAuth": ("http", "http://localhost:3000/mcp"),
        "sseServer": None,  # SSE (Gemini's url): not proxied
    },
    "codex/.codex/config.toml": {
        "docs": ["docs-server", "--port", "4000"],
        "figma": None,  # bearer_token_env_var: the token lives in Codex's environment
        "context7": ("http", "https://mcp.context7.com/mcp"),
    },
}


def _jsonc(text: str) -> Any:
    """VS Code's JSONC read independently: whole-line // comments and trailing commas out."""
    text = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def _load(path: Path) -> Any:
    if path.suffix == ".toml":  # the standard library's reader (3.11+), as tests/test_cli.py
        tomllib = pytest.importorskip("tomllib")
        return tomllib.loads(path.read_text())
    return _jsonc(path.read_text())


def _servers(document: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in ("mcpServers", "servers", "mcp_servers"):
        found.update(document.get(key, {}))
    for project in document.get("projects", {}).values():
        found.update(project.get("mcpServers", {}))
    return found


def test_each_client_has_its_config() -> None:
    """conduit-defined: the 8 files (7 products, Claude Code's two scopes) are the ones the
    round trip below runs."""
    assert sorted(CLIENT_CONFIGS.values()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrap_then_unwrap_each_client_format(name: str, tmp_path: Path) -> None:
    path = copy_config(tmp_path, name)
    original = path.read_bytes()
    before = _load(path)
    conduit("wrap", str(path), "--proxy-command", PROXY, "--pins", "/var/pins.db")
    after = _load(path)
    servers_before, servers_after = _servers(before), _servers(after)
    assert set(servers_after) == set(EXPECTED[name])
    for server, expected in EXPECTED[name].items():
        entry = servers_after[server]
        if expected is None:
            assert entry == servers_before[server]
            continue
        head = ["proxy", "--server-id", server, "--pins", "/var/pins.db"]
        assert entry["command"] == PROXY
        if isinstance(expected, tuple):
            assert entry["args"] == [*head, "--upstream", expected[1]]
            assert not {"url", "serverUrl", "httpUrl", "headers", "http_headers"} & set(entry)
            old_headers = servers_before[server].get(
                "headers", servers_before[server].get("http_headers")
            )
            if old_headers:  # credentials move to the proxy's environment, not its argv
                assert json.loads(entry["env"]["CONDUIT_MCP_UPSTREAM_HEADERS"]) == old_headers
            if "type" in servers_before[server]:
                assert entry["type"] == "stdio"
        else:
            assert entry["args"] == [*head, "--", *expected]
            untouched = {
                k: v for k, v in servers_before[server].items() if k not in ("command", "args")
            }
            assert {k: v for k, v in entry.items() if k not in ("command", "args")} == untouched
    # Everything outside the server tables is as it was.
    strip = ("mcpServers", "servers", "mcp_servers", "projects")
    assert {k: v for k, v in after.items() if k not in strip} == {
        k: v for k, v in before.items() if k not in strip
    }
    backup = path.with_name(path.name + ".conduit-mcp.bak")
    assert backup.read_bytes() == original
    wrapped = path.read_bytes()
    again = conduit("wrap", str(path), "--proxy-command", PROXY, "--pins", "/var/pins.db")
    assert path.read_bytes() == wrapped  # idempotent
    assert not [line for line in again.stdout.splitlines() if line.startswith("wrapped")]
    conduit("unwrap", str(path))
    assert path.read_bytes() == original  # byte for byte
    assert not backup.exists()


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = copy_config(tmp_path, CLAUDE_DESKTOP)
    original = path.read_bytes()
    done = conduit("wrap", str(path), "--dry-run", "--proxy-command", PROXY)
    assert path.read_bytes() == original
    assert not path.with_name(path.name + ".conduit-mcp.bak").exists()
    assert f'+      "command": "{PROXY}",' in done.stdout
    assert '-      "command": "npx",' in done.stdout
    assert f"+++ {path} (wrapped)" in done.stdout


def test_wrapping_again_with_other_options_says_how_to_change_them(tmp_path: Path) -> None:
    """Newcomer trial: `wrap --pins other.db` on a wrapped config said only "already wrapped"
    and kept the old store, with no hint how to change it."""
    path = copy_config(tmp_path, CLAUDE_DESKTOP)
    conduit("wrap", str(path), "--proxy-command", PROXY, "--pins", "/var/a.db")
    wrapped = path.read_bytes()
    again = conduit("wrap", str(path), "--proxy-command", PROXY, "--pins", "/var/b.db")
    assert path.read_bytes() == wrapped
    assert "already wrapped (to change its options: unwrap, then wrap)" in again.stdout


def test_unwrap_dry_run_labels_its_diff_unwrapped(tmp_path: Path) -> None:
    """Newcomer trial: `unwrap --dry-run` labelled what it shows "(wrapped)"."""
    path = copy_config(tmp_path, CLAUDE_DESKTOP)
    conduit("wrap", str(path), "--proxy-command", PROXY)
    wrapped = path.read_bytes()
    done = conduit("unwrap", str(path), "--dry-run")
    assert path.read_bytes() == wrapped
    assert done.stdout.splitlines()[:2] == [f"--- {path}", f"+++ {path} (unwrapped)"]
    assert '+      "command": "npx",' in done.stdout


def test_unwrap_after_an_edit_restores_each_entry_and_keeps_the_edit(tmp_path: Path) -> None:
    """A server added by hand after wrap survives unwrap; the wrapped ones come back."""
    path = copy_config(tmp_path, CURSOR)
    conduit("wrap", str(path), "--proxy-command", PROXY)
    document = json.loads(path.read_text())
    document["mcpServers"]["added"] = {"command": "added-server"}
    path.write_text(json.dumps(document, indent=2))
    conduit("unwrap", str(path))
    servers = json.loads(path.read_text())["mcpServers"]
    original = json.loads((CONFIGS / CURSOR).read_text())["mcpServers"]
    assert servers == {**original, "added": {"command": "added-server"}}


def test_a_wrapped_entry_runs(tmp_path: Path, ts_sdk: tuple[str, Path]) -> None:
    """The wrapped Claude Desktop entry of a real server, launched as the client would
    (command + args + env), serves the TypeScript client through the proxy."""
    import sys

    from tests.guard.conftest import HOSTILE
    from tests.proxy.conftest import run_ts_client

    log = tmp_path / "hostile.jsonl"
    config = tmp_path / "claude_desktop_config.json"
    server = {
        "command": sys.executable,
        "args": [str(HOSTILE), "--scenario", "mixed", "--log", str(log)],
    }
    config.write_text(json.dumps({"mcpServers": {"hostile": server}}, indent=2))
    conduit("wrap", str(config), "--proxy-command", str(CONDUIT))
    entry = json.loads(config.read_text())["mcpServers"]["hostile"]
    plan = {
        "transport": "stdio",
        "command": entry["command"],
        "args": entry["args"],
        "steps": [{"op": "list"}],
    }
    out = run_ts_client(ts_sdk, plan)
    assert out[1] == {"op": "list", "tools": ["echo", "add", "weather"]}


def test_a_wrapped_remote_entry_runs_with_its_headers(
    tmp_path: Path, ts_sdk: tuple[str, Path], sdk_http_server: tuple[str, Path]
) -> None:
    """A Cursor `url` entry with an Authorization header, wrapped, launched as Cursor would
    (command + args + env): the TypeScript client reaches the remote server through
    `--upstream`, and the server receives the header."""
    from tests.proxy.conftest import header_log, run_ts_client

    url, log = sdk_http_server
    config = tmp_path / "mcp.json"
    entry = {"url": url, "headers": {"Authorization": "Bearer wrapped-s3cret"}}
    config.write_text(json.dumps({"mcpServers": {"remote": entry}}, indent=2))
    conduit("wrap", str(config), "--proxy-command", str(CONDUIT))
    wrapped = json.loads(config.read_text())["mcpServers"]["remote"]
    assert "wrapped-s3cret" not in " ".join(wrapped["args"])
    plan = {
        "transport": "stdio",
        "command": wrapped["command"],
        "args": wrapped["args"],
        "steps": [{"op": "list"}],
    }
    out = run_ts_client(ts_sdk, plan, env=wrapped["env"])
    assert out[1] == {"op": "list", "tools": ["add", "forecast", "region"]}
    assert {r["headers"].get("authorization") for r in header_log(log)} == {"Bearer wrapped-s3cret"}


BAD_CONFIGS = [
    b"",
    b"not json",
    b'{"mcpServers": ',
    b"[" * 100_000 + b"]" * 100_000,
    b"\xff\xfe",
    b"{}",
]


@pytest.mark.parametrize("content", BAD_CONFIGS)
def test_a_config_that_cannot_be_read_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes
) -> None:
    """Bad input never crashes the command: one line on stderr, exit code 2, nothing written.
    The command's own code, in this process (`conduit`); the installed program's entry point
    on the most hostile of them is the next test."""
    path = tmp_path / "mcp.json"
    path.write_bytes(content)
    for command in ("wrap", "unwrap"):
        done = conduit(command, str(path), code=2)
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert path.read_bytes() == content


@pytest.mark.parametrize("content", [BAD_CONFIGS[3], BAD_CONFIGS[4]], ids=["nesting", "not-utf8"])
def test_the_installed_program_reads_a_bad_config_as_one_line_and_exit_2(
    tmp_path: Path, content: bytes
) -> None:
    """As the test above, through the console script as a process (its entry point's own
    handling of errors included): 100,000 levels of nesting and bytes that are not UTF-8."""
    path = tmp_path / "mcp.json"
    path.write_bytes(content)
    for command in ("wrap", "unwrap"):
        done = subprocess.run(
            [str(CONDUIT), command, str(path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert path.read_bytes() == content
