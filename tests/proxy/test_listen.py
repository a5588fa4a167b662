"""HTTP downstream (`conduit-mcp proxy --listen 127.0.0.1:PORT`): the official TypeScript client
over Streamable HTTP through the proxy, against the hostile server (a child process per session)
and against a Python SDK server over Streamable HTTP (`--upstream`).

Expected values: the hostile scenarios' docstring; the spec's Streamable HTTP rules (2025-11-25
basic/transports: `Mcp-Session-Id` assigned at initialize and required after, 404 for an
unknown session; `MCP-Protocol-Version`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.guard.conftest import Hostile

from .conftest import header_log, hostile_argv, run_ts_client

SECRET = "Bearer listen-test-s3cret"


def _plan(url: str, steps: list[dict[str, Any]], headers: dict[str, str] | None = None) -> Any:
    return {"transport": "http", "url": url, "headers": headers or {}, "steps": steps}


def test_guard_promises_hold_over_http(
    ts_sdk: tuple[str, Path],
    hostile: Callable[..., Hostile],
    listening_proxy: Callable[..., str],
) -> None:
    mixed, rugpull, output = hostile("mixed"), hostile("rugpull"), hostile("output")
    url = listening_proxy("mixed", "--", *hostile_argv(mixed))
    out = run_ts_client(
        ts_sdk,
        _plan(
            url,
            [
                {"op": "list"},
                {"op": "call", "name": "add", "arguments": {"a": "two", "b": 3}},
                {"op": "call", "name": "add", "arguments": {"a": 2, "b": 3}},
            ],
        ),
    )
    assert out[1]["tools"] == ["echo", "add", "weather"]
    assert out[2]["error"]["data"]["reason"] == "invalid_arguments"
    assert out[3]["result"]["content"] == [{"type": "text", "text": "5"}]
    assert mixed.calls() == [("add", {"a": 2, "b": 3})]

    url = listening_proxy("rugpull", "--", *hostile_argv(rugpull))
    out = run_ts_client(
        ts_sdk,
        _plan(
            url,
            [
                {"op": "list"},
                {"op": "list"},
                {"op": "call", "name": "echo", "arguments": {"message": "after"}},
            ],
        ),
    )
    assert out[1]["tools"] == ["echo", "add"]
    assert out[2]["tools"] == ["add"]
    assert out[3]["error"]["data"]["reason"] == "tool_blocked"
    assert rugpull.calls() == []

    url = listening_proxy("output", "--", *hostile_argv(output))
    out = run_ts_client(
        ts_sdk,
        _plan(url, [{"op": "list"}, {"op": "call", "name": "weather", "arguments": {"city": "x"}}]),
    )
    assert out[2]["result"]["isError"] is True
    assert "hot" not in json.dumps(out[2]["result"])


def test_http_to_http_forwards_authorization_and_never_logs_it(
    ts_sdk: tuple[str, Path],
    sdk_http_server: tuple[str, Path],
    listening_proxy: Callable[..., str],
    tmp_path: Path,
) -> None:
    upstream, log = sdk_http_server
    url = listening_proxy("remote", "--upstream", upstream)
    out = run_ts_client(
        ts_sdk,
        _plan(
            url,
            [{"op": "list"}, {"op": "call", "name": "add", "arguments": {"a": 40, "b": 2}}],
            headers={"Authorization": SECRET},
        ),
    )
    assert out[1]["tools"] == ["add", "forecast", "region"]
    assert out[2]["result"]["content"] == [{"type": "text", "text": "42"}]
    requests = header_log(log)
    assert requests and all(r["headers"].get("authorization") == SECRET for r in requests)
    logs = "".join(p.read_text() for p in tmp_path.glob("proxy-*.jsonl"))
    assert "s3cret" not in logs
    entries = [json.loads(line) for line in logs.splitlines()]  # --log: one JSON object a line
    assert entries and all({"time", "level", "logger", "message"} <= set(e) for e in entries)
    kinds = {e["event"]["kind"] for e in entries if "event" in e}
    assert "tool_new" in kinds  # guard decisions carry their event fields


def _post(url: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        data = exc.read()
        try:
            return exc.code, json.loads(data)
        except ValueError:
            return exc.code, data.decode()


def test_http_errors_health_unknown_session_and_stateless_versions(
    hostile: Callable[..., Hostile], listening_proxy: Callable[..., str]
) -> None:
    url = listening_proxy("mixed", "--", *hostile_argv(hostile("mixed")))
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, body = _post(url, ping, {"mcp-session-id": "no-such-session"})
    assert status == 404  # spec: an unknown session id is answered 404
    assert body["error"]["code"] == -32600
    status, body = _post(url, ping, {"mcp-protocol-version": "1999-01-01"})
    assert status == 400
    assert body["error"]["code"] == -32022  # UNSUPPORTED_PROTOCOL_VERSION (2026-07-28)
    assert {"2025-11-25", "2026-07-28"} <= set(body["error"]["data"]["supported"])
    status, body = _post(url, ping, {"host": "evil.example:80"})
    assert status == 421  # DNS rebinding: a Host that is not ours (RFC 9110 Misdirected Request)
    status, body = _post(url, ping, {"origin": "http://evil.example"})
    assert status == 403  # an Origin that is not ours (spec: servers MUST validate Origin)
    status, body = _post(url, ping, {})
    assert status == 400  # no session and not an initialize request: nothing is started
    health = url.replace("/mcp", "/healthz")
    with urllib.request.urlopen(health, timeout=10) as response:
        assert json.loads(response.read())["status"] == "ok"


def test_metrics_count_calls_refusals_rejections_and_upstream_time(
    ts_sdk: tuple[str, Path],
    hostile: Callable[..., Hostile],
    listening_proxy: Callable[..., str],
) -> None:
    """/metrics (Prometheus text format, read back with prometheus-client's own parser): two
    calls received, one refused for its arguments, the four bad tools of the mixed page
    rejected (hostile_server.py: stringly, 42, the second echo, noschema), one tools/call
    timed upstream (the refused one never left), one session open."""
    from prometheus_client.parser import text_string_to_metric_families

    url = listening_proxy("mixed", "--", *hostile_argv(hostile("mixed")))
    steps = [
        {"op": "list"},
        {"op": "call", "name": "add", "arguments": {"a": "two", "b": 3}},
        {"op": "call", "name": "add", "arguments": {"a": 2, "b": 3}},
    ]
    run_ts_client(ts_sdk, _plan(url, steps))
    with urllib.request.urlopen(url.replace("/mcp", "/metrics"), timeout=10) as response:
        text = response.read().decode()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }

    def value(name: str, **labels: str) -> float:
        return samples.get((name, tuple(sorted({"server_id": "mixed", **labels}.items()))), 0.0)

    assert value("conduit_mcp_proxy_calls_total") == 2
    refused = {"kind": "call_refused", "reason": "invalid_arguments", "decision": "refused"}
    assert value("conduit_mcp_proxy_guard_events_total", **refused) == 1
    rejected = sum(
        v
        for (name, labels), v in samples.items()
        if name == "conduit_mcp_proxy_guard_events_total" and ("kind", "tool_rejected") in labels
    )
    assert rejected == 4
    assert value("conduit_mcp_proxy_upstream_seconds_count", method="tools/call") == 1
    assert value("conduit_mcp_proxy_sessions") == 1


def test_the_python_sdk_client_in_its_default_mode_gets_a_session(
    listening_proxy: Callable[..., str],
) -> None:
    """mcp 2.x `Client` (default `mode`, which may probe 2026-07-28 first) over Streamable HTTP
    through `--listen`, in front of the Python SDK server over stdio (tests/guard/sdk_server.py):
    it ends up in a session and the exchange works."""
    import sys

    import anyio
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    from tests.guard.conftest import SDK_SERVER

    url = listening_proxy("sdk", "--", sys.executable, str(SDK_SERVER))

    async def main() -> tuple[list[str], Any]:
        async with mcp.Client(streamable_http_client(url)) as client:
            listed = await client.list_tools()
            result = await client.call_tool("forecast", {"city": "Oslo"})
        return [t.name for t in listed.tools], result.structured_content

    names, structured = anyio.run(main)
    assert names == ["add", "forecast"]
    assert structured == {"temperature": 21.5, "conditions": "clear over Oslo"}


def _modern_client(url: str, headers: dict[str, str] | None = None) -> Any:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=headers or {})
    return http, mcp.Client(streamable_http_client(url, http_client=http), mode="2026-07-28")


def test_stateless_2026_07_28_requests_through_the_listener(
    hostile: Callable[..., Hostile], listening_proxy: Callable[..., str]
) -> None:
    """mcp 2.x `Client` in 2026-07-28 mode (no initialize, no session: each request carries
    its version in `_meta`) through `--listen` to the hostile server over stdio (one shared
    process): the mixed page keeps its good tools, invalid arguments are refused unsent."""
    import anyio
    from mcp.shared.exceptions import MCPError

    server = hostile("mixed")
    url = listening_proxy("mixed", "--", *hostile_argv(server))

    async def main() -> tuple[list[str], Any, Any]:
        http, client = _modern_client(url)
        async with http, client:
            listed = await client.list_tools()
            try:
                await client.call_tool("add", {"a": "two", "b": 3})
                refused = None
            except MCPError as exc:
                refused = exc.error
            result = await client.call_tool("add", {"a": 2, "b": 3})
        return [t.name for t in listed.tools], refused, result

    names, refused, result = anyio.run(main)
    assert names == ["echo", "add", "weather"]
    assert refused is not None and refused.data["reason"] == "invalid_arguments"
    assert result.content[0].text == "5"
    assert server.calls() == [("add", {"a": 2, "b": 3})]


def test_stateless_requests_to_an_http_upstream_carry_routing_headers_and_authorization(
    sdk_http_server: tuple[str, Path], listening_proxy: Callable[..., str]
) -> None:
    import anyio

    upstream, log = sdk_http_server
    url = listening_proxy("remote", "--upstream", upstream)

    async def main() -> Any:
        http, client = _modern_client(url, {"Authorization": SECRET})
        async with http, client:
            await client.list_tools()
            return await client.call_tool("region", {"region": "eu-west"})

    result = anyio.run(main)
    assert result.content[0].text == "region eu-west"
    calls = [r for r in header_log(log) if r["headers"].get("mcp-method") == "tools/call"]
    assert [r["headers"] for r in calls] == [
        {
            "authorization": SECRET,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "region",
            "mcp-param-region": "eu-west",
        }
    ]


def test_a_header_that_disagrees_with_the_body_is_refused_before_the_guard(
    hostile: Callable[..., Hostile], listening_proxy: Callable[..., str]
) -> None:
    """Spec 2026-07-28: `Mcp-Name` must match the body (HEADER_MISMATCH -32020): a gateway
    routing on the header would otherwise act on another tool than the one called."""
    server = hostile("mixed")
    url = listening_proxy("mixed", "--", *hostile_argv(server))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "x"}, "_meta": meta},
    }
    headers = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    status, body = _post(url, call, headers)
    assert status == 400
    assert body["id"] == 7 and body["error"]["code"] == -32020
    assert server.calls() == []
