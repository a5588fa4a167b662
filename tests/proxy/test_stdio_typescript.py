"""The official TypeScript SDK client through the stdio proxy, against the hostile raw JSON-RPC
server (tests/guard/hostile_server.py): what the guard promises holds for a client that is not
a Python program.

Expected values come from the hostile server's scenarios (its docstring) and the MCP spec
(2025-11-25 server/tools), never from the proxy's own output: the good tools of the mixed page
are echo, add and weather; the rug-pulled echo differs from its first listing; add's
inputSchema requires integers; weather's outputSchema requires a number temperature.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.forkserver import launched
from tests.guard.conftest import Hostile

from .conftest import hostile_argv, proxy_argv, run_ts_client


def _plan(argv: list[str], steps: list[dict[str, Any]]) -> dict[str, Any]:
    argv = launched(argv)  # the client's child forked (tests/forklaunch.py)
    return {"transport": "stdio", "command": argv[0], "args": argv[1:], "steps": steps}


def _through_proxy(server: Hostile, *options: str) -> list[str]:
    return [*proxy_argv(server.scenario, *options), "--", *hostile_argv(server)]


def test_mixed_page_keeps_its_good_tools(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile]
) -> None:
    """Without the proxy the TypeScript client's zod check refuses the whole page (a name that
    is 42); through it the client lists the three good tools and calls one."""
    server = hostile("mixed")
    direct = run_ts_client(ts_sdk, _plan(hostile_argv(server), [{"op": "list"}]))
    assert "error" in direct[1], direct  # the control: the page sinks without the guard
    out = run_ts_client(
        ts_sdk,
        _plan(
            _through_proxy(server),
            [{"op": "list"}, {"op": "call", "name": "add", "arguments": {"a": 2, "b": 3}}],
        ),
    )
    assert out[1] == {"op": "list", "tools": ["echo", "add", "weather"]}
    assert out[2]["result"]["content"] == [{"type": "text", "text": "5"}]


def test_rug_pull_is_blocked(ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile]) -> None:
    """The second listing changes echo: it disappears from the client's page and a call to it
    is refused without reaching the server."""
    server = hostile("rugpull")
    out = run_ts_client(
        ts_sdk,
        _plan(
            _through_proxy(server),
            [
                {"op": "list"},
                {"op": "call", "name": "echo", "arguments": {"message": "before"}},
                {"op": "list"},
                {"op": "call", "name": "echo", "arguments": {"message": "after"}},
            ],
        ),
    )
    assert out[1]["tools"] == ["echo", "add"]
    assert out[2]["result"]["content"] == [{"type": "text", "text": "before"}]
    assert out[3]["tools"] == ["add"]
    assert out[4]["error"]["code"] == -32602  # JSON-RPC invalid params (spec: unknown tool)
    assert out[4]["error"]["data"]["reason"] == "tool_blocked"
    assert server.calls() == [("echo", {"message": "before"})]


def test_invalid_arguments_are_refused_unsent(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile]
) -> None:
    server = hostile("mixed")
    out = run_ts_client(
        ts_sdk,
        _plan(
            _through_proxy(server),
            [{"op": "list"}, {"op": "call", "name": "add", "arguments": {"a": "two", "b": 3}}],
        ),
    )
    error = out[2]["error"]
    assert error["code"] == -32602
    assert error["data"]["reason"] == "invalid_arguments"
    assert error["data"]["path"] == "$.arguments.a"
    assert server.calls() == []


def test_invalid_output_is_withheld(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile]
) -> None:
    """weather answers {"temperature": "hot"}: the client gets an isError result saying why,
    without the value."""
    server = hostile("output")
    out = run_ts_client(
        ts_sdk,
        _plan(
            _through_proxy(server),
            [{"op": "list"}, {"op": "call", "name": "weather", "arguments": {"city": "Oslo"}}],
        ),
    )
    result = out[2]["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert "hot" not in result["content"][0]["text"]
    assert server.calls() == [("weather", {"city": "Oslo"})]


def test_held_tool_refusal_names_the_approve_command(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile], tmp_path: Path
) -> None:
    """With a pin store, new tools are held: the refusal carries the exact `conduit-mcp pins
    approve` command; running it, then listing again, makes the call go through."""
    import shlex
    import subprocess

    from .conftest import CONDUIT

    server = hostile("mixed")
    store = tmp_path / "pins.db"
    options = ("--pins", str(store), "--held-dir", str(tmp_path / "held"))
    steps = [{"op": "list"}, {"op": "call", "name": "add", "arguments": {"a": 1, "b": 2}}]
    out = run_ts_client(ts_sdk, _plan(_through_proxy(server, *options), steps))
    error = out[2]["error"]
    assert error["data"]["reason"] == "tool_held"
    command = error["message"].split("approve it with: ", 1)[1].split(" (then", 1)[0]
    argv = shlex.split(command)
    assert argv[:3] == ["conduit-mcp", "pins", "approve"]
    assert argv[argv.index("--store") + 1] == str(store)
    assert argv[argv.index("--tool") + 1] == "add"
    assert argv[-2:] == ["--approver", "WHO"]  # the person who reviews fills it in
    argv[-1] = "alice"
    done = subprocess.run([str(CONDUIT), *argv[1:]], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    out = run_ts_client(ts_sdk, _plan(_through_proxy(server, *options), steps))
    assert out[2]["result"]["content"] == [{"type": "text", "text": "3"}]
    assert server.calls() == [("add", {"a": 1, "b": 2})]


def test_a_large_result_passes_whole(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile]
) -> None:
    """hostile "huge": big answers a 4,000,000-character text block and 50,000 structured items
    (valid against its outputSchema): one JSON-RPC line of several MB, relayed whole."""
    server = hostile("huge")
    out = run_ts_client(
        ts_sdk,
        _plan(_through_proxy(server), [{"op": "list"}, {"op": "call", "name": "big"}]),
        timeout=120,
    )
    result = out[2]["result"]
    assert len(result["content"][0]["text"]) == 4_000_000
    assert result["structuredContent"]["items"] == list(range(50_000))


def test_a_call_without_a_listing_is_gated_against_the_servers_listing(
    ts_sdk: tuple[str, Path], server_everything_argv: list[str]
) -> None:
    """A client may call a tool it did not list in this connection (it cached a listing): the
    proxy lists the tools itself first, answered to nobody, so the call is checked against the
    server's own listing (server-everything's echo, spec 2025-11-25 server/tools) rather than
    refused as unknown; a name the server does not list is still refused (-32602)."""
    argv = [*proxy_argv("everything", "--quiet"), "--", *server_everything_argv]
    out = run_ts_client(
        ts_sdk,
        _plan(
            argv,
            [
                {"op": "call", "name": "echo", "arguments": {"message": "cached"}},
                {"op": "call", "name": "echo", "arguments": {"message": 7}},
                {"op": "call", "name": "no-such-tool"},
            ],
        ),
    )
    assert out[1]["result"]["content"] == [{"type": "text", "text": "Echo: cached"}]
    assert out[2]["error"]["data"]["reason"] == "invalid_arguments"
    assert out[3]["error"]["data"]["reason"] == "unknown_tool"


def test_a_blocked_change_names_the_review_commands(
    ts_sdk: tuple[str, Path], hostile: Callable[..., Hostile], tmp_path: Path
) -> None:
    """With a pin store, a rug pull is blocked and the refusal says how to review and approve
    it from the store's pending queue (a newcomer found no next step there)."""
    server = hostile("rugpull")
    store = tmp_path / "pins.db"
    options = ("--pins", str(store), "--new", "pin")
    out = run_ts_client(
        ts_sdk,
        _plan(
            _through_proxy(server, *options),
            [
                {"op": "list"},
                {"op": "list"},
                {"op": "call", "name": "echo", "arguments": {"message": "after"}},
            ],
        ),
    )
    error = out[3]["error"]
    assert error["data"]["reason"] == "tool_blocked"
    assert f"conduit-mcp pins pending --store {store} --server-id" in error["message"]
    assert "conduit-mcp pins approve" in error["message"] and "--tool echo" in error["message"]
    assert server.calls() == []
