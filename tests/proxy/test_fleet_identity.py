"""The fleet of issue 32 (item 7): two `conduit-mcp proxy --listen --auth jwt` processes on ONE
PostgreSQL pin store, each in front of its own copy of the hostile server's mixed page (echo,
add, weather), a JWKS server the test starts on loopback (tests/proxy/jwks.py: tokens signed
with `cryptography`), two callers in different groups, the official Python SDK client (mcp 2.x
over Streamable HTTP).

- Each caller sees only its tools, and may call only those, through either proxy.
- `conduit-mcp policy set` through the CLI reaches both proxies: checked as a bounded number
  of 10 ms pauses between listings, as tests/proxy/test_fleet.py does (the latency itself is
  measured by `python -m bench.policy`, row I2, never by a timed test).
- A token signed by another key, an expired one, one for another audience, `alg: none`: each
  refused 401 by both proxies, and neither server process receives anything.

Expected values: the policy below read by hand; RFC 6750 / RFC 9728 for the 401.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests import forkserver
from tests.guard.conftest import Hostile
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.proxy.jwks import Issuer, Key, serve_issuer

from .conftest import CONDUIT, hostile_argv

KEY = Key("fleet-1")
ROGUE = Key("fleet-1")  # the same kid, another key pair
POLICY = """\
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["mixed/*"]
deny = ["mixed/weather"]
[[rule]]
groups = ["dev"]
allow = ["mixed/echo"]
"""
#: 10 ms pauses allowed while a policy version propagates: only a bound on a hang (100, one second,
#: was a verdict on the machine's load; the latency is measured by bench/fleet_policy_latency.py).
STEPS = 3000


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with serve_issuer(KEY) as served:
        yield served


def _token(issuer: Issuer, subject: str, group: str) -> str:
    return KEY.sign(issuer.claims(sub=subject, groups=[group], iat=None))


def _policy_set(store: str, path: Path, approver: str) -> None:
    done = forkserver.run(
        [str(CONDUIT), "policy", "set", str(path), "--store", store, "--approver", approver],
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


class Fleet:
    def __init__(self, store: str, urls: list[str], servers: list[Hostile]) -> None:
        self.store = store
        self.urls = urls
        self.servers = servers


@pytest.fixture
def fleet(
    postgres_url: str,  # noqa: F811 (fixture)
    issuer: Issuer,
    listening_proxy: Callable[..., str],
    tmp_path: Path,
) -> Fleet:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    _policy_set(postgres_url, policy, "alice")
    servers = [Hostile("mixed", tmp_path / f"server-{i}.jsonl") for i in (1, 2)]
    urls = [
        listening_proxy(
            "mixed",
            "--pins",
            postgres_url,
            "--new",
            "pin",
            "--auth",
            "jwt",
            "--jwks-url",
            issuer.jwks_url,
            "--issuer",
            issuer.issuer,
            "--audience",
            "mcp-proxy",
            "--",
            *hostile_argv(server),
        )
        for server in servers
    ]
    return Fleet(postgres_url, urls, servers)


def _client(url: str, bearer: str, mode: str = "2026-07-28") -> tuple[Any, Any]:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bearer}"})
    return http, mcp.Client(streamable_http_client(url, http_client=http), mode=mode)


async def _view(url: str, bearer: str, mode: str = "2026-07-28") -> tuple[list[str], str | None]:
    """What a caller is listed through `url`, and the reason its call of `add` was refused
    (`None`: it went through)."""
    from mcp.shared.exceptions import MCPError

    http, client = _client(url, bearer, mode)
    async with http, client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        try:
            await client.call_tool("add", {"a": 2, "b": 3})
            refused = None
        except MCPError as exc:
            refused = exc.error.data.get("reason") if isinstance(exc.error.data, dict) else "?"
    return names, refused


def test_each_caller_sees_only_its_tools_through_either_proxy_and_a_policy_set_reaches_both(
    fleet: Fleet, issuer: Issuer, tmp_path: Path
) -> None:
    """Real parts: two proxy processes, PostgreSQL `LISTEN`/`NOTIFY` through the store's change
    feed, the CLI in another process. Alice (ops) is listed add and echo, Bob (dev) echo only,
    through A (stateless) and B (a session); then `policy set` lets dev call add too, and both
    proxies list it to Bob within STEPS pauses of 10 ms, with no restart."""
    alice = _token(issuer, "alice", "ops")
    bob = _token(issuer, "bob", "dev")

    async def main() -> tuple[Any, ...]:
        views = [
            await _view(url, bearer, mode)
            for url in fleet.urls
            for bearer in (alice, bob)
            for mode in ("2026-07-28", "legacy")
        ]
        newer = tmp_path / "newer.toml"
        newer.write_text(POLICY.replace('["mixed/echo"]', '["mixed/echo", "mixed/add"]'))
        await anyio.to_thread.run_sync(_policy_set, fleet.store, newer, "carol")
        pauses = []
        for url in fleet.urls:
            waited = 0
            while (await _view(url, bob))[0] != ["add", "echo"] and waited <= STEPS:
                waited += 1
                await anyio.sleep(0.01)
            pauses.append(waited)
        after = [await _view(url, bob, "legacy") for url in fleet.urls]
        return views, pauses, after

    views, pauses, after = anyio.run(main)
    ops = (["add", "echo"], None)
    dev = (["echo"], "policy_denied")
    assert views == [ops, ops, dev, dev] * 2
    assert all(waited <= STEPS for waited in pauses), pauses
    assert after == [(["add", "echo"], None)] * 2
    for server in fleet.servers:
        # alice's two calls, bob's once his listing showed add (the last poll, the session
        # after), and any call of his a poll made while the new version was arriving: only
        # `add`, and never fewer than those four
        calls = server.calls()
        assert set(map(str, calls)) == {str(("add", {"a": 2, "b": 3}))}
        assert len(calls) >= 4


def test_forged_tokens_are_refused_by_both_proxies_and_nothing_is_forwarded(
    fleet: Fleet, issuer: Issuer
) -> None:
    """RFC 8725 attacks, each answered 401 with `WWW-Authenticate` naming the proxy's own
    protected-resource metadata (RFC 9728 section 5.1): a token signed by another key (same
    `kid`), an expired one (2001), one for another audience, `alg: none`. Neither server
    process receives a message (nothing forwarded)."""
    claims = issuer.claims(sub="mallory", groups=["ops"], iat=None)
    forged = {
        "another key": ROGUE.sign(claims),
        "expired": KEY.sign({**claims, "exp": 1_000_000_000}),
        "another audience": KEY.sign({**claims, "aud": "another-service"}),
        "alg none": KEY.sign(claims, alg="none"),
    }
    stateless_call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "add",
            "arguments": {"a": 1, "b": 1},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    statuses = {}
    with httpx.Client(timeout=30) as http:
        for url in fleet.urls:
            origin = url.rsplit("/mcp", 1)[0]
            for what, bad in forged.items():
                answer = http.post(
                    url,
                    json=stateless_call,
                    headers={
                        "authorization": f"Bearer {bad}",
                        "accept": "application/json, text/event-stream",
                        "mcp-protocol-version": "2026-07-28",
                        "mcp-method": "tools/call",
                        "mcp-name": "add",
                    },
                )
                statuses[(url, what)] = answer.status_code
                assert answer.headers["www-authenticate"].startswith(
                    f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
                    ', error="invalid_token"'
                ), what
    assert set(statuses.values()) == {401}, statuses
    for server in fleet.servers:
        assert server.received() == []
