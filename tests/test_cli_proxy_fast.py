"""`conduit-mcp proxy` as `wrap` writes it is read without typer (`cli/_proxy_fast.py`): the
same `conduit_mcp.proxy.run` call as typer's `proxy_command` makes, and every other command
line left to typer (conduit-defined, issue 33 item 4: the proxy's start)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from conduit_mcp.cli import _proxy, _proxy_fast
from conduit_mcp.cli._app import app

SERVER = ["python3", "-c", "pass", "--quiet", "--", "-x"]

#: Command lines of the wrapped shape, with the options typer would give for them.
TAKEN = [
    (["proxy", "--server-id", "s", "--", *SERVER], {"server_id": "s"}),
    (["proxy", "--server-id", "s", "--quiet", "--", *SERVER], {"server_id": "s", "quiet": True}),
    (
        ["proxy", "--pins", "/tmp/p.db", "--server-id", "a b", "--quiet", "--", *SERVER],
        {"server_id": "a b", "pins": "/tmp/p.db", "quiet": True},
    ),
]

#: Command lines typer reads: other options, other forms, help, errors.
LEFT = [
    ["proxy", "--server-id", "s", "--new", "hold", "--", *SERVER],
    ["proxy", "--server-id=s", "--", *SERVER],
    ["proxy", "--server-id", "s", "--server-id", "t", "--", *SERVER],
    ["proxy", "--server-id", "s", "--quiet", "--quiet", "--", *SERVER],
    ["proxy", "--server-id", "", "--", *SERVER],
    ["proxy", "--server-id", "-s", "--", *SERVER],
    ["proxy", "--server-id", "--", *SERVER],
    ["proxy", "--server-id", "s", "--"],
    ["proxy", "--server-id", "s", *SERVER],
    ["proxy", "--", *SERVER],
    ["proxy", "--help"],
    ["proxy", "-h", "--", *SERVER],
    ["proxy", "--server-id", "s", "--upstream", "http://h/mcp"],
    ["pins", "list", "--", "x"],
    [],
]


def _run_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def run(*args: Any, **kwargs: Any) -> int:
        calls.append((args, kwargs))
        return 0

    monkeypatch.setattr(_proxy, "run", run)  # typer's path
    monkeypatch.setattr("conduit_mcp.proxy.run", run)  # the fast path imports it when it runs
    return calls


@pytest.mark.parametrize(("argv", "options"), TAKEN)
def test_the_wrapped_shape_makes_typers_call(
    argv: list[str], options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """conduit-defined: for each command line of the wrapped shape the fast path reads the
    options and the server's command line (its own `--quiet` and `--` included) and calls
    `conduit_mcp.proxy.run` with exactly the arguments typer's `proxy_command` passes."""
    parsed = _proxy_fast.parse(argv)
    assert parsed == {"pins": None, "quiet": False, **options, "command": SERVER}
    calls = _run_calls(monkeypatch)
    assert _proxy_fast.run(parsed) == 0
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert len(calls) == 2
    assert calls[0] == calls[1]


@pytest.mark.parametrize("argv", LEFT)
def test_every_other_command_line_is_left_to_typer(argv: list[str]) -> None:
    """conduit-defined: another option, `--name=value`, a repeated option, an empty or
    dash-led value, no `--` or no command, help, another command: typer reads it."""
    assert _proxy_fast.parse(argv) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    """conduit-defined: a shell-completion request (typer's `_CONDUIT_MCP_COMPLETE`) is
    typer's even in the wrapped shape."""
    monkeypatch.setenv("_CONDUIT_MCP_COMPLETE", "complete_bash")
    assert _proxy_fast.parse(TAKEN[0][0]) is None
