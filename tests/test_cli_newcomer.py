"""The CLI as a newcomer met it: what the help says a command does is what it does.

conduit-defined behaviour (found by a newcomer trial): `inspect`'s exit code against the
top-level help's "1 findings" when warnings are shown; `capture` without `-o` on a terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import conduit_mcp.cli._capture as cli
from conduit_mcp.cli import app

runner = CliRunner()

WARNED = {"tools": [{"name": "a", "description": "x\u200by", "inputSchema": {"type": "object"}}]}
REJECTED = {"tools": [{"name": "a"}]}  # no inputSchema: intake rejects it


def _page(tmp_path: Path, name: str, page: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(page), encoding="utf-8")
    return str(path)


def test_the_top_level_help_says_what_makes_inspect_exit_1() -> None:
    out = runner.invoke(app, ["-h"]).stdout
    said = " ".join(out.split())
    assert "inspect: a rejected tool, and any warning only under --fail-on warning" in said


def test_inspect_exit_codes_follow_the_help(tmp_path: Path) -> None:
    warned = _page(tmp_path, "warned.json", WARNED)
    shown = runner.invoke(app, ["inspect", warned])
    assert shown.exit_code == 0
    assert "invisible_unicode" in shown.stdout  # shown, and not failing by default
    assert runner.invoke(app, ["inspect", warned, "--fail-on", "warning"]).exit_code == 1
    help_text = " ".join(runner.invoke(app, ["inspect", "-h"]).stdout.split())
    assert "Exit code 1 when intake rejected a tool (with --fail-on warning" in help_text
    assert runner.invoke(app, ["inspect", _page(tmp_path, "r.json", REJECTED)]).exit_code == 1


def test_capture_on_a_terminal_without_o_is_a_usage_error_before_any_server_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cli, "_stdout_is_terminal", lambda: True)
    marker = tmp_path / "ran"
    command = ["--", "sh", "-c", f"touch {marker}"]
    done = runner.invoke(app, ["capture", *command])
    assert done.exit_code == 2
    said = " ".join(done.stderr.split())
    assert "stdout is a terminal: give -o FILE" in said
    assert "Invalid value for '-o'" not in said  # -o was never given
    assert not marker.exists()
    # `-o -` asks for the terminal explicitly: past the check, the capture itself is tried
    # (in this test runner the SDK cannot start a process: stderr has no file descriptor).
    done = runner.invoke(app, ["capture", "--timeout", "5", "-o", "-", *command])
    assert done.exit_code == 2 and "conduit-mcp: capture:" in done.stderr
    assert "terminal" not in done.stderr


def test_the_help_says_what_the_proxy_and_its_output_options_do() -> None:
    """A newcomer read "Inspect MCP tools/list pages" atop a command that also runs the proxy,
    "proxy ... (stdio)" for a proxy that also serves and reaches HTTP, and option values
    (withhold|flag|pass, hide_unsafe|keep) the help never explained."""
    top = " ".join(runner.invoke(app, ["-h"]).stdout.split())
    assert "run a server behind the guard (proxy)" in top
    assert "behind the guard (stdio or HTTP)" in top
    proxy = " ".join(runner.invoke(app, ["proxy", "-h"]).stdout.split())
    assert "a Streamable HTTP server (--upstream URL); with --listen, clients" in proxy
    assert "withhold (the client gets an isError result saying why), flag" in proxy
    assert "past it the call is refused, or the output counts as invalid" in proxy
    assert "hide_unsafe: list a tool without its outputSchema when it has pattern" in proxy


@pytest.mark.parametrize("url", ["ftp://host/mcp", "host:8080/mcp", "http:/host", "notaurl"])
def test_an_upstream_that_is_no_http_url_is_a_usage_error(url: str) -> None:
    """A newcomer's `--upstream ftp://x` was taken: the proxy started and each request failed
    with `UnsupportedProtocol`."""
    done = runner.invoke(app, ["proxy", "--server-id", "s", "--upstream", url])
    said = " ".join(done.stderr.split())
    assert done.exit_code == 2
    assert "expected a Streamable HTTP server's http:// or https:// URL" in said
    assert repr(url) in said
