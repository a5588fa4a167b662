"""stdio downstream, Streamable HTTP upstream (`conduit-mcp proxy --upstream URL`): what a
desktop client needs for a remote server.

Expected headers per the spec (2025-11-25 basic/transports "Streamable HTTP": `Mcp-Session-Id`
from the server's initialize response on every later request, `MCP-Protocol-Version` on every
request after initialization; 2026-07-28: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-<name>` from an
`x-mcp-header` argument), seen by a Python SDK server that logs what it received.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.forkserver import launched, spawn
from tests.guard.conftest import HOSTILE, Hostile, free_port, start_http, stop

from .conftest import header_log, proxy_argv, run_ts_client

SECRET = "Bearer proxy-test-s3cret"


def _plan(argv: list[str], steps: list[dict[str, Any]]) -> dict[str, Any]:
    argv = launched(argv)  # the client's child forked (tests/forklaunch.py)
    return {"transport": "stdio", "command": argv[0], "args": argv[1:], "steps": steps}


def test_typescript_client_to_a_python_sdk_server_over_http(
    ts_sdk: tuple[str, Path], sdk_http_server: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = sdk_http_server
    proxy_log = tmp_path / "proxy.jsonl"
    argv = [
        *proxy_argv("remote", "--log", str(proxy_log)),
        "--upstream",
        url,
        "--header",
        "X-Team: blue",
    ]
    stderr: list[str] = []
    out = run_ts_client(
        ts_sdk,
        _plan(
            argv,
            [
                {"op": "list"},
                {"op": "call", "name": "add", "arguments": {"a": 20, "b": 22}},
                {"op": "call", "name": "forecast", "arguments": {"city": "Oslo"}},
                {"op": "call", "name": "add", "arguments": {"a": "x", "b": 1}},
            ],
        ),
        env={"CONDUIT_MCP_UPSTREAM_HEADERS": json.dumps({"Authorization": SECRET})},
        stderr=stderr,
    )
    assert out[1]["tools"] == ["add", "forecast", "region"]
    assert out[2]["result"]["content"] == [{"type": "text", "text": "42"}]
    assert out[3]["result"]["structuredContent"] == {
        "temperature": 21.5,
        "conditions": "clear over Oslo",
    }
    assert out[4]["error"]["data"]["reason"] == "invalid_arguments"
    requests = header_log(log)
    assert requests, "the server received nothing"
    assert all(r["headers"].get("authorization") == SECRET for r in requests)
    assert all(r["headers"].get("x-team") == "blue" for r in requests)
    session = requests[1]["headers"]["mcp-session-id"]
    assert all(r["headers"].get("mcp-session-id") == session for r in requests[1:])
    version = out[0]["protocolVersion"] or "2025-11-25"
    assert all(r["headers"].get("mcp-protocol-version") == version for r in requests[1:])
    # The refused call never reached the server: 4 POSTs after initialize + initialized ...
    posts = [r for r in requests if r["method"] == "POST"]
    assert len(posts) == 2 + 1 + 2  # initialize, initialized, tools/list, two calls
    # Credentials are forwarded, never logged.
    assert SECRET.split()[1] not in proxy_log.read_text()
    assert SECRET.split()[1] not in stderr[0]


@pytest.mark.anyio
async def test_python_client_at_2026_07_28_gets_routing_headers_upstream(
    sdk_http_server: tuple[str, Path],
) -> None:
    url, log = sdk_http_server
    argv = [*proxy_argv("remote", "--quiet"), "--upstream", url]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with mcp.Client(stdio_client(params), mode="2026-07-28") as client:
        listed = await client.list_tools()
        result = await client.call_tool("region", {"region": "eu-west"})
    assert [t.name for t in listed.tools] == ["add", "forecast", "region"]
    assert result.content[0].text == "region eu-west"  # type: ignore[union-attr]
    calls = [r for r in header_log(log) if r["headers"].get("mcp-method") == "tools/call"]
    assert [r["headers"] for r in calls] == [
        {
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "region",
            "mcp-param-region": "eu-west",
        }
    ]


@pytest.fixture
def hostile_http_mixed(tmp_path: Path) -> Any:
    server = Hostile("mixed", tmp_path / "mixed-http.jsonl")
    port = free_port()
    argv = [sys.executable, str(HOSTILE), "--scenario", "mixed", "--log", str(server.log)]
    process = start_http([*argv, "--http", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp", server
    stop(process)


def test_typescript_client_to_the_hostile_server_over_http(
    ts_sdk: tuple[str, Path], hostile_http_mixed: tuple[str, Hostile]
) -> None:
    url, server = hostile_http_mixed
    argv = [*proxy_argv("hostile-http"), "--upstream", url]
    steps = [
        {"op": "list"},
        {"op": "call", "name": "add", "arguments": {"a": "two", "b": 3}},
        {"op": "call", "name": "add", "arguments": {"a": 2, "b": 3}},
    ]
    out = run_ts_client(ts_sdk, _plan(argv, steps))
    assert out[1]["tools"] == ["echo", "add", "weather"]
    assert out[2]["error"]["data"]["reason"] == "invalid_arguments"
    assert out[3]["result"]["content"] == [{"type": "text", "text": "5"}]
    assert server.calls() == [("add", {"a": 2, "b": 3})]


def test_an_unreachable_upstream_answers_each_request_with_an_error() -> None:
    """Nothing listens at the URL: the client's initialize gets a JSON-RPC error response
    (-32603) naming the failure, instead of no answer at all."""
    import subprocess

    port = free_port()  # bound and released: nothing listens there
    argv = [*proxy_argv("down", "--quiet"), "--upstream", f"http://127.0.0.1:{port}/mcp"]
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
    with spawn(  # forked from a warm interpreter (tests/forkserver.py): not a test of the start
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32603
    assert "could not be reached" in reply["error"]["message"]
