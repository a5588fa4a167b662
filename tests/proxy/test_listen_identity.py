"""Callers on `--listen` (issue 32): `conduit-mcp proxy --listen --auth jwt` as a process, in
front of the hostile server's mixed page (echo, add, weather), a JWKS server the test starts on
loopback (tests/proxy/jwks.py: tokens signed with `cryptography`, not PyJWT), the tool policy
set with `conduit-mcp policy set` in a sqlite pin store, the official Python SDK client (mcp
2.x over Streamable HTTP) and raw HTTP where a header must be read.

Tokens expire in 2030 (`jwks.NOW`) and carry no `iat`, so the proxy's real clock accepts them
without the test reading a clock; the expired one expired in 2001.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import rfc8785

from conduit_mcp.pins import PinStore
from tests import forkserver
from tests.guard.conftest import Hostile
from tests.proxy.jwks import Issuer, Key, serve_issuer

from .conftest import CONDUIT, hostile_argv

KEY = Key("k1")
ROGUE = Key("k1")  # the same kid, another key pair: a forger's
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
#: What each group may see of the page, worked out from POLICY by hand.
OPS_TOOLS = ["add", "echo"]
DEV_TOOLS = ["echo"]


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with serve_issuer(KEY) as served:
        yield served


def token(issuer: Issuer, subject: str, group: str, **claims: Any) -> str:
    return KEY.sign(issuer.claims(sub=subject, groups=[group], iat=None, **claims))


def conduit(*args: str) -> subprocess.CompletedProcess[str]:
    return forkserver.run([str(CONDUIT), *args], text=True, timeout=120)


def auth_args(issuer: Issuer) -> list[str]:
    return [
        "--auth",
        "jwt",
        "--jwks-url",
        issuer.jwks_url,
        "--issuer",
        issuer.issuer,
        "--audience",
        "mcp-proxy",
    ]


class Proxy:
    def __init__(self, url: str, server: Hostile, store: Path) -> None:
        self.url = url
        self.server = server
        self.store = store


@pytest.fixture
def proxy(issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path) -> Proxy:
    store = tmp_path / "pins.db"
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    done = conduit("policy", "set", str(policy), "--store", str(store), "--approver", "alice")
    assert done.returncode == 0, done.stderr
    server = Hostile("mixed", tmp_path / "server.jsonl")
    url = listening_proxy(
        "mixed",
        "--pins",
        str(store),
        "--new",
        "pin",
        "--audit-calls",
        *auth_args(issuer),
        "--",
        *hostile_argv(server),
    )
    return Proxy(url, server, store)


def _client(url: str, bearer: str, mode: str = "2026-07-28") -> tuple[Any, Any]:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bearer}"})
    return http, mcp.Client(streamable_http_client(url, http_client=http), mode=mode)


async def _listed_and_refused(url: str, bearer: str, mode: str, refused_tool: str) -> Any:
    from mcp.shared.exceptions import MCPError

    http, client = _client(url, bearer, mode)
    async with http, client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        echoed = (await client.call_tool("echo", {"message": "hi"})).content[0].text
        try:
            await client.call_tool(refused_tool, {"a": 1, "b": 2})
            error = None
        except MCPError as exc:
            error = exc.error
    return names, echoed, error


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_each_caller_sees_and_calls_only_its_tools(proxy: Proxy, issuer: Issuer, mode: str) -> None:
    """conduit-defined (issue 32 item 2): the tools outside a caller's policy are not listed to
    it and its calls to them are refused, naming the rule, unsent; stateless and in a session.
    Expected values: POLICY read by hand (ops: mixed/* but weather; dev: echo only)."""
    alice = token(issuer, "alice", "ops")
    bob = token(issuer, "bob", "dev")
    ops = anyio.run(_listed_and_refused, proxy.url, alice, mode, "weather")
    dev = anyio.run(_listed_and_refused, proxy.url, bob, mode, "add")
    assert ops[0] == OPS_TOOLS and dev[0] == DEV_TOOLS
    assert ops[1] == dev[1] == "hi"
    for error, line in ((ops[2], "denied by rule 1 (line 2): mixed/weather"), (dev[2], None)):
        assert error is not None and error.data["reason"] == "policy_denied"
        if line is not None:
            assert line in error.message and "(policy version 1)" in error.message
    assert "no rule allows it (default deny)" in dev[2].message
    assert [name for name, _ in proxy.server.calls()] == ["echo", "echo"]  # nothing refused sent
    # the log names the subject of each refusal (and of each session), never a token
    log = "".join(p.read_text() for p in proxy.store.parent.glob("proxy-*.jsonl"))
    assert "call of 'weather' by 'alice' refused by the tool policy" in log
    assert "call of 'add' by 'bob' refused by the tool policy" in log
    if mode == "legacy":
        assert "opened by subject 'alice'" in log
    assert alice not in log and bob not in log and alice.split(".")[2] not in log


def test_the_call_audit_says_who_called_what_with_the_arguments_digest(
    proxy: Proxy, issuer: Issuer
) -> None:
    """conduit-defined (issue 32 item 3): `--audit-calls` records subject, groups, tool, verdict,
    reason and the SHA-256 of the RFC 8785 canonical arguments (computed here with the
    `rfc8785` package), never their values; refused calls too."""
    alice = token(issuer, "alice", "ops")
    anyio.run(_listed_and_refused, proxy.url, alice, "2026-07-28", "weather")

    def rows() -> list[Any]:
        with PinStore(str(proxy.store)) as store:
            return list(store.calls_since(0))

    async def until_two() -> list[Any]:  # the auditor writes from its thread
        with anyio.fail_after(30):
            while len(found := rows()) < 2:
                await anyio.sleep(0.05)
        return found

    echo, weather = anyio.run(until_two)
    digest = "sha256:" + hashlib.sha256(rfc8785.dumps({"message": "hi"})).hexdigest()
    assert (echo.subject, echo.groups, echo.tool, echo.verdict) == (
        "alice",
        ("ops",),
        "echo",
        "passed",
    )
    assert echo.arguments_digest == digest and echo.arguments is None
    assert (weather.tool, weather.verdict, weather.reason) == (
        "weather",
        "refused",
        "policy_denied",
    )
    assert weather.arguments_digest == (
        "sha256:" + hashlib.sha256(rfc8785.dumps({"a": 1, "b": 2})).hexdigest()
    )


def test_a_bad_token_is_refused_401_before_anything_is_forwarded(
    proxy: Proxy, issuer: Issuer
) -> None:
    """Spec-mandated (RFC 6750 section 3, RFC 9728 section 5.1, MCP 2025-11-25 basic/
    authorization): no token or a bad one is 401 with `WWW-Authenticate: Bearer
    resource_metadata=...` naming the metadata the proxy serves; RFC 8725 attacks (another
    key, expired, another audience, `alg: none`) each refused; the server receives nothing."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    claims = issuer.claims(sub="alice", iat=None)
    forged = {
        "none": None,
        "another key": ROGUE.sign(claims),
        "expired": KEY.sign({**claims, "exp": 1_000_000_000}),
        "another audience": KEY.sign({**claims, "aud": "another-service"}),
        "alg none": KEY.sign(claims, alg="none"),
    }
    origin = proxy.url.rsplit("/mcp", 1)[0]
    with httpx.Client(timeout=30) as http:
        for what, bad in forged.items():
            headers = {"accept": "application/json, text/event-stream"}
            if bad is not None:
                headers["authorization"] = f"Bearer {bad}"
            answer = http.post(proxy.url, json=initialize, headers=headers)
            assert answer.status_code == 401, what
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith(
                f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
            ), what
            if bad is not None:
                assert 'error="invalid_token"' in challenge, what
        metadata = http.get(f"{origin}/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["resource"] == proxy.url
    assert metadata["authorization_servers"] == [issuer.issuer]
    assert proxy.server.received() == []  # nothing forwarded, no server process asked


def test_a_session_belongs_to_its_subject(proxy: Proxy, issuer: Issuer) -> None:
    """conduit-defined: with `--auth jwt` a session belongs to the verified subject: another
    token of the same subject (a refreshed one) continues it; another subject's valid token is
    answered 404 as an unknown session (MCP 2025-11-25 "Session Management")."""
    first = token(issuer, "alice", "ops")
    refreshed = token(issuer, "alice", "ops", jti="second")
    other = token(issuer, "bob", "ops")
    accept = {"accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=60) as http:
        opened = http.post(
            proxy.url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            headers={**accept, "authorization": f"Bearer {first}"},
        )
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        same = {**accept, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        assert (
            http.post(
                proxy.url, json=ping, headers={**same, "authorization": f"Bearer {refreshed}"}
            ).status_code
            == 200
        )
        assert (
            http.post(proxy.url, json=ping, headers={**same, "authorization": f"Bearer {other}"})
        ).status_code == 404


def test_a_new_policy_reaches_the_running_proxy_and_tells_the_session(
    proxy: Proxy, issuer: Issuer, tmp_path: Path
) -> None:
    """conduit-defined (issue 32 item 2): `conduit-mcp policy set` from another process; the
    running proxy applies it (the store's change feed) and the session whose view changed gets
    `notifications/tools/list_changed` on its GET stream (MCP 2025-11-25 server/tools
    "List Changed Notification"); its next listing shows the new view."""
    bob = token(issuer, "bob", "dev")

    async def main() -> tuple[list[str], list[str]]:
        import httpx2
        import mcp
        from mcp.client.streamable_http import streamable_http_client

        changed = anyio.Event()

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", message)
            if getattr(root, "method", None) == "notifications/tools/list_changed":
                changed.set()

        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {bob}"})
        client = mcp.Client(
            streamable_http_client(proxy.url, http_client=http),
            mode="legacy",
            message_handler=on_message,
        )
        async with http, client:
            before = sorted(t.name for t in (await client.list_tools()).tools)
            newer = tmp_path / "newer.toml"
            newer.write_text(
                POLICY.replace('allow = ["mixed/echo"]', 'allow = ["mixed/echo", "mixed/add"]')
            )
            done = await anyio.to_thread.run_sync(
                lambda: conduit(
                    "policy", "set", str(newer), "--store", str(proxy.store), "--approver", "bob"
                )
            )
            assert done.returncode == 0, done.stderr
            with anyio.fail_after(30):  # a bound on a hang, not the latency (bench/policy.py)
                await changed.wait()
            after = sorted(t.name for t in (await client.list_tools()).tools)
        return before, after

    before, after = anyio.run(main)
    assert before == ["echo"]
    assert after == ["add", "echo"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--listen", "0.0.0.0:1"], "--auth none"),
        (["--listen", "127.0.0.1:1", "--auth", "jwt", "--issuer", "x"], "--audience AUD"),
        (["--listen", "127.0.0.1:1", "--audit-calls"], "need --auth jwt"),
        (["--auth", "none"], "authentication is for --listen"),
        (
            [
                "--listen",
                "127.0.0.1:1",
                "--auth",
                "jwt",
                "--jwks-url",
                "http://127.0.0.1:1/k",
                "--issuer",
                "x",
                "--audience",
                "y",
            ],
            "give --pins STORE",
        ),
        (
            [
                "--listen",
                "127.0.0.1:1",
                "--auth",
                "jwt",
                "--jwks-url",
                "http://127.0.0.1:1/k",
                "--issuer",
                "x",
                "--audience",
                "y",
                "--policy",
                "/nonexistent.toml",
                "--audit-calls",
            ],
            "/nonexistent.toml",
        ),
    ],
)
def test_options_that_cannot_work_are_refused_before_anything_starts(
    args: list[str], said: str
) -> None:
    """conduit-defined (issue 32 item 1): no authentication on an address other hosts reach
    unless `--auth none` says so; `--auth jwt` needs its issuer, keys and audience."""
    done = conduit("proxy", "--server-id", "x", *args, "--", sys.executable, "-c", "pass")
    assert done.returncode == 2
    assert said in " ".join(done.stderr.split()), done.stderr


def test_metrics_count_callers_by_group_never_by_subject(proxy: Proxy, issuer: Issuer) -> None:
    """conduit-defined (issue 32 item 3: bounded cardinality): `/metrics` (behind the token
    too) counts each caller's calls under its group and verdict; no subject appears. Read
    back with prometheus-client's own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    alice = token(issuer, "alice", "ops")
    anyio.run(_listed_and_refused, proxy.url, alice, "2026-07-28", "weather")
    anyio.run(_listed_and_refused, proxy.url, token(issuer, "bob", "dev"), "2026-07-28", "add")
    metrics_url = proxy.url.rsplit("/mcp", 1)[0] + "/metrics"
    with httpx.Client(timeout=30) as http:
        assert http.get(metrics_url).status_code == 401
        text = http.get(metrics_url, headers={"authorization": f"Bearer {alice}"}).text
    counted = {
        (s.labels["group"], s.labels["verdict"]): s.value
        for family in text_string_to_metric_families(text)
        if family.name == "conduit_mcp_proxy_caller_calls"
        for s in family.samples
        if s.name.endswith("_total")
    }
    assert counted == {
        ("ops", "allowed"): 1,
        ("ops", "refused"): 1,
        ("dev", "allowed"): 1,
        ("dev", "refused"): 1,
    }
    assert "alice" not in text and "bob" not in text


def test_oidc_discovery_finds_the_keys(
    issuer: Issuer, listening_proxy: Callable[..., str], tmp_path: Path
) -> None:
    """Spec-mandated (OpenID Connect Discovery 1.0 section 4): `--oidc-issuer URL` reads
    `URL/.well-known/openid-configuration` (served by the test's issuer) for its `jwks_uri`;
    a token of that issuer is accepted, with the policy given as `--policy FILE`."""
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    server = Hostile("mixed", tmp_path / "server.jsonl")
    url = listening_proxy(
        "mixed",
        "--new",
        "pin",
        "--oidc-issuer",
        issuer.issuer,
        "--audience",
        "mcp-proxy",
        "--policy",
        str(policy),
        "--",
        *hostile_argv(server),
    )
    names, echoed, error = anyio.run(
        _listed_and_refused, url, token(issuer, "carol", "dev"), "2026-07-28", "add"
    )
    assert (names, echoed) == (DEV_TOOLS, "hi")
    assert error is not None and error.data["reason"] == "policy_denied"
    assert "(policy version" not in error.message  # a file has no store version
    assert issuer.hits >= 1


def test_an_upstream_gets_the_proxys_credential_never_the_callers_token(
    issuer: Issuer,
    listening_proxy: Callable[..., str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spec-mandated (MCP 2025-11-25 security best practices, "Token Passthrough": a server
    MUST NOT pass through the token it received from its client). Real parts: the official
    SDK's server behind `--upstream`, requiring its own token (tests/proxy/http_server.py
    `--token`). Without the proxy's credential its 401 is the proxy's failure, a JSON-RPC
    error (never the upstream's challenge: the caller's token is the proxy's, no login the
    caller could run there); with it (`CONDUIT_MCP_UPSTREAM_HEADERS`), the call goes through
    and the upstream saw that credential alone."""
    from tests.guard.conftest import free_port, start_http, stop
    from tests.proxy.conftest import HERE, header_log

    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n', encoding="utf-8")
    port = free_port()
    log = tmp_path / "upstream.jsonl"
    server = start_http(
        [sys.executable, str(HERE / "http_server.py"), "--port", str(port), "--log", str(log),
         "--token", "upstream-secret"],
        port,
    )  # fmt: skip
    upstream_url = f"http://127.0.0.1:{port}/mcp"
    common = [*auth_args(issuer), "--policy", str(policy), "--upstream", upstream_url]
    bearer = token(issuer, "alice", "ops")
    try:
        without = listening_proxy("sdk", *common)
        monkeypatch.setenv(
            "CONDUIT_MCP_UPSTREAM_HEADERS", '{"Authorization": "Bearer upstream-secret"}'
        )
        with_credential = listening_proxy("sdk", *common)
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {
            "accept": "application/json, text/event-stream",
            "authorization": f"Bearer {bearer}",
        }
        with httpx.Client(timeout=60) as http:
            refused = http.post(without, json=initialize, headers=headers)
        http_client, client = _client(with_credential, bearer, "legacy")

        async def call() -> str:
            async with http_client, client:
                return str((await client.call_tool("add", {"a": 2, "b": 3})).content[0].text)

        added = anyio.run(call)
    finally:
        stop(server)
    assert refused.status_code != 401
    assert "www-authenticate" not in refused.headers
    assert "HTTP 401" in refused.text
    assert added == "5"
    sent = [r["headers"].get("authorization") for r in header_log(log) if r["method"] == "POST"]
    assert sent and set(sent) <= {None, "Bearer upstream-secret"}
    assert "Bearer upstream-secret" in sent
    assert bearer not in log.read_text()
