"""A fleet: two `conduit-mcp proxy --listen` processes on loopback, ONE PostgreSQL pin store,
each in front of its own copy of the hostile server's mixed page (echo, add, weather), driven by
the official Python SDK client (mcp 2.x `Client` over Streamable HTTP) with no session affinity.

- A tool listed through one proxy and approved with the command its refusal printed is callable
  through the other, which never listed it (2026-07-28 stateless requests, and a session).
- `conduit-mcp pins revoke` from the CLI is refused by both proxies on the next call, without
  a re-list and without a restart; `conduit-mcp pins approve` of a held tool lets its next call
  through on both.

Expected values: the hostile server's page (tests/guard/hostile_server.py docstring) and the
pins workflow (docs/pins-workflow.md: a caller's store holds new tools; approvals and
revocations reach every guard sharing the store through its change feed). "Within 1 s" is
checked as a bounded number of 10 ms pauses between calls; the latency itself is measured by
`python -m bench.fleet_feed_latency`, not by a timed test.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import forkserver
from tests.guard.conftest import Hostile
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

from .conftest import CONDUIT, hostile_argv

#: 10 ms pauses allowed while a change propagates: only a bound on a hang (100, one second,
#: was a verdict on the machine's load; the latency is measured by bench/fleet_feed_latency.py).
STEPS = 3000


class Fleet:
    """Two proxies on one store, each with its own server copy."""

    def __init__(self, store: str, urls: list[str], servers: list[Hostile]) -> None:
        self.store = store
        self.urls = urls
        self.servers = servers

    def pins(self, *args: str) -> str:
        """Run `conduit-mcp pins ARGS...` (as a person would, from another process)."""
        done = forkserver.run([str(CONDUIT), "pins", *args], text=True, timeout=60)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def lists(self) -> list[int]:
        """How many tools/list each server copy has received."""
        return [
            sum(1 for m in server.received() if m.get("method") == "tools/list")
            for server in self.servers
        ]


@pytest.fixture
def fleet(
    postgres_url: str,  # noqa: F811 (fixture)
    listening_proxy: Callable[..., str],
    tmp_path: Path,
) -> Fleet:
    servers = [Hostile("mixed", tmp_path / f"server-{i}.jsonl") for i in (1, 2)]
    urls = [
        listening_proxy(
            "mixed",
            "--pins",
            postgres_url,
            "--held-dir",
            str(tmp_path / "held"),
            "--",
            *hostile_argv(server),
        )
        for server in servers
    ]
    return Fleet(postgres_url, urls, servers)


def _client(url: str, mode: str = "2026-07-28") -> tuple[Any, Any]:
    """An httpx2 client and an mcp `Client` over Streamable HTTP (2026-07-28: stateless,
    every request stands alone; `"legacy"`: initialize and a session)."""
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient()
    return http, mcp.Client(streamable_http_client(url, http_client=http), mode=mode)


async def _call(client: Any, name: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """("ok", text) or ("refused", the guard's reason)."""
    from mcp.shared.exceptions import MCPError

    try:
        result = await client.call_tool(name, arguments)
    except MCPError as exc:
        data = exc.error.data if isinstance(exc.error.data, dict) else {}
        return "refused", data.get("reason")
    return "ok", result.content[0].text


async def _until(
    clients: list[Any], name: str, arguments: dict[str, Any], wanted: str
) -> list[tuple[int, tuple[str, Any]]]:
    """Call `name` through every client, in turn, until each call's outcome is `wanted`
    ("ok" / "refused"), with a 10 ms pause after each round, at most `STEPS` rounds.
    Returns, per client, (the number of calls that had the other outcome first, the
    last outcome)."""
    seen: list[tuple[int, tuple[str, Any]]] = [(0, ("", None)) for _ in clients]
    pending = set(range(len(clients)))
    for _ in range(STEPS + 1):
        for i in sorted(pending):
            outcome = await _call(clients[i], name, arguments)
            if outcome[0] == wanted:
                pending.discard(i)
                seen[i] = (seen[i][0], outcome)
            else:
                seen[i] = (seen[i][0] + 1, outcome)
        if not pending:
            break
        await anyio.sleep(0.01)
    return seen


@pytest.mark.parametrize("first", ["2026-07-28", "legacy"])
def test_a_tool_approved_through_one_proxy_is_callable_through_the_other(
    fleet: Fleet, first: str
) -> None:
    """Listed through proxy A (held: the store is a caller's), approved with the exact command
    A's refusal printed, then called through proxy B, which never listed it: first by a
    2026-07-28 stateless request or in a new session (`first`), then the other way. B gates
    the call from the store alone (its own listing, answered to nobody): no session affinity."""
    from mcp.shared.exceptions import MCPError

    a_url, b_url = fleet.urls
    second = "legacy" if first == "2026-07-28" else "2026-07-28"

    async def main() -> tuple[Any, ...]:
        http, a = _client(a_url)
        async with http, a:
            listed = [t.name for t in (await a.list_tools()).tools]
            try:
                await a.call_tool("add", {"a": 2, "b": 3})
                held = None
            except MCPError as exc:
                held = exc.error
        assert held is not None
        command = held.message.split("approve it with: ", 1)[1].split(" (then list", 1)[0]
        argv = shlex.split(command)
        assert argv[:3] == ["conduit-mcp", "pins", "approve"]
        assert argv[argv.index("--store") + 1] == fleet.store
        argv[argv.index("--approver") + 1] = "alice"
        fleet.pins(*argv[2:])
        b_lists = fleet.lists()[1]
        http, b = _client(b_url, mode=first)
        async with http, b:
            one = await _call(b, "add", {"a": 2, "b": 3})
        http, b = _client(b_url, mode=second)
        async with http, b:
            two = await _call(b, "add", {"a": 40, "b": 2})
            unapproved = await _call(b, "echo", {"message": "hi"})
        return listed, held.data["reason"], b_lists, one, two, unapproved

    listed, reason, b_lists, one, two, unapproved = anyio.run(main)
    assert listed == []  # every tool of the page is new: held, so not listed to the client
    assert reason == "tool_held"
    assert b_lists == 0  # B had never listed before the call
    assert one == ("ok", "5")
    assert two == ("ok", "42")
    assert unapproved == ("refused", "tool_held")
    a_server, b_server = fleet.servers
    assert a_server.calls() == []
    assert b_server.calls() == [("add", {"a": 2, "b": 3}), ("add", {"a": 40, "b": 2})]


def test_a_cli_revocation_and_approval_reach_both_proxies_without_a_re_list(
    fleet: Fleet,
) -> None:
    """Both proxies know `add` (approved, called through each: a session on A, 2026-07-28
    stateless requests to B) and hold `echo`. Then, from the CLI: `pins revoke --tool add` —
    the next call of `add` is refused by both proxies within STEPS pauses of 10 ms; `pins
    approve --tool echo` (from the pending queue) — the next call of `echo` goes through on
    both. Neither server is asked for its tools in between, and the proxies are the same
    processes throughout (no restart)."""
    store = fleet.store
    common = ["--store", store, "--server-id", "mixed"]

    async def main() -> tuple[Any, ...]:
        http_a, a = _client(fleet.urls[0], mode="legacy")  # a session on A
        http_b, b = _client(fleet.urls[1])  # stateless requests to B
        async with http_a, a, http_b, b:
            await a.list_tools()  # A lists: add, echo, weather held, in the pending queue
            pending = fleet.pins("pending", *common)
            fleet.pins("approve", *common, "--tool", "add", "--approver", "alice")
            # The approval reaches each guard through the change feed (within a second):
            # until it has, a call is refused and never reaches a server.
            before = [
                *await _until([a], "add", {"a": 1, "b": 1}, "ok"),
                *await _until([b], "add", {"a": 1, "b": 2}, "ok"),
            ]
            held = [
                await _call(a, "echo", {"message": "x"}),
                await _call(b, "echo", {"message": "x"}),
            ]
            lists = fleet.lists()
            fleet.pins("revoke", *common, "--tool", "add", "--approver", "bob")
            revoked = await _until([a, b], "add", {"a": 2, "b": 2}, "refused")
            fleet.pins("approve", *common, "--tool", "echo", "--approver", "carol")
            approved = await _until([a, b], "echo", {"message": "after"}, "ok")
            after_lists = fleet.lists()
        return pending, before, held, lists, revoked, approved, after_lists

    pending, before, held, lists, revoked, approved, after_lists = anyio.run(main)
    assert all(name in pending for name in ("add", "echo", "weather"))
    assert [outcome for _, outcome in before] == [("ok", "2"), ("ok", "3")]
    assert all(n <= STEPS for n, _ in before)
    assert held == [("refused", "tool_held"), ("refused", "tool_held")]
    # The revocation: both refuse, and no call of `add` reached a server after it.
    assert [outcome for _, outcome in revoked] == [("refused", "tool_blocked")] * 2
    a_server, b_server = fleet.servers
    slipped = [n for n, _ in revoked]
    assert [c for c in a_server.calls() if c[0] == "add"] == [("add", {"a": 1, "b": 1})] + [
        ("add", {"a": 2, "b": 2})
    ] * slipped[0]
    assert [c for c in b_server.calls() if c[0] == "add"] == [("add", {"a": 1, "b": 2})] + [
        ("add", {"a": 2, "b": 2})
    ] * slipped[1]
    assert all(n <= STEPS for n in slipped)
    # The approval: both let the held tool's next call through.
    assert [outcome for _, outcome in approved] == [("ok", "after")] * 2
    assert all(n <= STEPS for n, _ in approved)
    for server in fleet.servers:
        assert ("echo", {"message": "after"}) in server.calls()
    # No re-list decided anything: up to the first call of `echo` that went through, each
    # server had received exactly the listings it had before the revocation.
    for server, count in zip(fleet.servers, lists, strict=True):
        received = server.received()
        first = next(
            i
            for i, m in enumerate(received)
            if m.get("method") == "tools/call" and m["params"]["name"] == "echo"
        )
        assert sum(1 for m in received[:first] if m.get("method") == "tools/list") == count
    assert after_lists >= lists
