"""2026-07-28 requests through `--listen` answered as an event stream: the messages related to a
request (its progress, the log messages it opted in to) come on the response's
`text/event-stream` before the response; a request nothing precedes is answered with one JSON
object.

Oracle: the same session with the official mcp 2.x `Client` (mode "2026-07-28") run directly
against the server (tests/proxy/progress_server.py: the SDK's `MCPServer`, over stdio or over
Streamable HTTP) — progress and log messages compared whole. The wire shapes are the spec's
(2026-07-28 basic/transports "Streamable HTTP": the server responds with `application/json` or
`text/event-stream`; an SSE event's data is one JSON-RPC message; the last is the response).
"""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "progress_server.py")]
#: The server the tests' own SDK clients start directly (`stdio_client`) is forked from the
#: worker's warm interpreter, as the proxy's is (tests/conftest.py `forked_children`).
pytestmark = pytest.mark.usefixtures("forked_children")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def _steps(transport: Any, count: int) -> tuple[str, list[Any], list[Any]]:
    """`steps(count)` with a progress callback and logging at info: (text, progress, logs)."""
    import mcp

    progress: list[Any] = []
    logs: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data))

    async with mcp.Client(transport, mode="2026-07-28", logging_callback=on_log) as client:
        result = await client.call_tool(
            "steps",
            {"count": count},
            progress_callback=on_progress,
            meta={"io.modelcontextprotocol/logLevel": "info"},  # type: ignore[typeddict-unknown-key]
        )
    return result.content[0].text, progress, logs  # type: ignore[union-attr]


def _stdio() -> Any:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    return stdio_client(StdioServerParameters(command=SERVER[0], args=SERVER[1:]))


def _http(url: str) -> Any:
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(url)


@pytest.fixture
def progress_http_server() -> Iterator[str]:
    """progress_server.py over Streamable HTTP on a free loopback port: its URL."""
    from tests.guard.conftest import free_port, start_http, stop

    port = free_port()
    process = start_http([*SERVER, "--http", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(process)


def test_progress_and_logs_reach_the_client_as_directly_over_a_child_upstream(
    listening_proxy: Callable[..., str],
) -> None:
    direct = anyio.run(_steps, _stdio(), 3)
    url = listening_proxy("progress", "--", *SERVER)
    proxied = anyio.run(_steps, _http(url), 3)
    assert direct[0] == "done 3"
    assert [p[0] for p in direct[1]] == [1, 2, 3] and len(direct[2]) == 3  # the oracle is live
    assert proxied == direct


def test_progress_and_logs_reach_the_client_as_directly_over_an_http_upstream(
    listening_proxy: Callable[..., str], progress_http_server: str
) -> None:
    direct = anyio.run(_steps, _http(progress_http_server), 2)
    url = listening_proxy("progress", "--upstream", progress_http_server)
    proxied = anyio.run(_steps, _http(url), 2)
    assert [p[0] for p in direct[1]] == [1, 2] and len(direct[2]) == 2
    assert proxied == direct


def _post(url: str, body: Any, accept: str, method: str) -> tuple[str, bytes]:
    headers = {
        "content-type": "application/json",
        "accept": accept,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = body["params"]["name"]
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers["content-type"], response.read()


def _events(data: bytes) -> list[Any]:
    """The `data:` of each SSE event (WHATWG "Server-sent events" framing)."""
    events = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if lines:
            events.append(json.loads(b"\n".join(lines)))
    return events


def _call(rid: Any, count: int, token: Any) -> dict[str, Any]:
    meta = {**META, "progressToken": token} if token is not None else META
    params = {"name": "steps", "arguments": {"count": count}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_event_stream_only_when_something_precedes_the_response(
    listening_proxy: Callable[..., str],
) -> None:
    url = listening_proxy("progress", "--", *SERVER)
    both = "application/json, text/event-stream"
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    kind, data = _post(url, listing, both, "tools/list")
    assert kind == "application/json" and json.loads(data)["id"] == 1

    kind, data = _post(url, _call("c1", 2, "tok"), both, "tools/call")
    assert kind == "text/event-stream"
    events = _events(data)
    assert [e["params"] for e in events[:2]] == [
        {"progressToken": "tok", "progress": 1, "total": 2, "message": "step 1"},
        {"progressToken": "tok", "progress": 2, "total": 2, "message": "step 2"},
    ]
    assert events[2]["id"] == "c1" and events[2]["result"]["content"][0]["text"] == "done 2"
    assert len(events) == 3

    # No progress asked for: nothing related, one JSON object.
    kind, data = _post(url, _call(5, 2, None), both, "tools/call")
    assert (
        kind == "application/json" and json.loads(data)["result"]["content"][0]["text"] == "done 2"
    )

    # A client that takes JSON only gets the response alone.
    kind, data = _post(url, _call(6, 2, "tok"), "application/json", "tools/call")
    assert kind == "application/json" and json.loads(data)["id"] == 6


def test_concurrent_clients_with_the_same_progress_token_get_only_their_own(
    listening_proxy: Callable[..., str],
) -> None:
    """The stateless requests of every client share one server process: progress tokens are
    made unique on the way up, so each client's stream carries its own request's progress."""
    url = listening_proxy("progress", "--", *SERVER)
    both = "application/json, text/event-stream"
    results: dict[int, list[Any]] = {}

    async def one(n: int) -> None:
        _, data = await anyio.to_thread.run_sync(_post, url, _call(1, n, 1), both, "tools/call")
        results[n] = _events(data)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for n in (2, 3, 4, 5):
                tg.start_soon(one, n)

    anyio.run(main)
    for n, events in results.items():
        progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
        assert [p["total"] for p in progress] == [n] * n
        assert [p["progress"] for p in progress] == list(range(1, n + 1))
        assert all(p["progressToken"] == 1 for p in progress)
        assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"] == f"done {n}"


def test_a_client_that_closes_the_stream_cancels_the_request_upstream(tmp_path: Path) -> None:
    """2026-07-28: closing a request's response stream is its cancellation. The listener (in
    process, ASGI) sends the server `notifications/cancelled` naming the request as the
    server received it; the hostile server's `slow` tool never answers, so only the client's
    leaving ends it. A first call lists the tools (the proxy's own listing): a call whose
    client leaves during that listing is never sent at all (`test_listen_prelist_audit.py`)."""
    from conduit_mcp.proxy import GuardSeam, GuardSettings
    from conduit_mcp.proxy.listen._server import Listener
    from tests.guard.conftest import Hostile

    from .conftest import hostile_argv
    from .test_listen_fuzz import PORT, _stateless

    server = Hostile("flood", tmp_path / "flood.jsonl")
    seam = GuardSeam(GuardSettings("cancel"))
    listener = Listener(seam, hostile_argv(server), host="127.0.0.1", port=PORT)
    head = [
        ("host", f"127.0.0.1:{PORT}"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
    ]

    def call(rid: int, name: str, arguments: dict[str, Any]) -> bytes:
        params = {"name": name, "arguments": arguments, "_meta": META}
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        return json.dumps(body).encode()

    async def main() -> tuple[Any, Any]:
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            echo = [*head, ("mcp-name", "echo")]
            await _stateless(listener, echo, call(3, "echo", {"message": "first"}), [], False)
            slow = [*head, ("mcp-name", "slow")]
            left = await _stateless(listener, slow, call(1, "slow", {}), [], True)
            # One shared upstream, read in order: once this answer is back, the server has
            # read everything sent before it.
            after = await _stateless(listener, echo, call(2, "echo", {"message": "m"}), [], False)
            tg.cancel_scope.cancel()
        return left, after

    try:
        left, after = anyio.run(main)
    finally:
        seam.close()
    assert left.status is None  # nobody to answer
    assert json.loads(after.body)["result"]["content"][0]["text"] == "m"
    received = server.received()
    slow_id = next(
        m["id"]
        for m in received
        if m.get("method") == "tools/call" and m["params"]["name"] == "slow"
    )
    cancelled = [m for m in received if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [slow_id]


async def _listen_for_a_change(transport: Any) -> tuple[Any, list[str]]:
    """Open `subscriptions/listen` for tool list changes, call `touch`, read one event:
    (what the server honored, the events' kinds)."""
    import mcp

    async with mcp.Client(transport, mode="2026-07-28") as client:
        with anyio.fail_after(30):
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("touch", {})
                async for event in subscription:
                    return subscription.honored, [type(event).__name__]
    return None, []


def test_a_listen_stream_carries_its_notifications_as_directly(
    listening_proxy: Callable[..., str],
) -> None:
    """2026-07-28 `subscriptions/listen` through `--listen`: the acknowledgment and the
    `notifications/tools/list_changed` the server sends on the stream (named by the upstream
    request id, which the proxy maps back to the client's) reach the client as directly."""
    direct = anyio.run(_listen_for_a_change, _stdio())
    url = listening_proxy("listen", "--", *SERVER)
    proxied = anyio.run(_listen_for_a_change, _http(url))
    assert direct[1] == ["ToolsListChanged"]
    assert proxied == direct


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("application/json, text/event-stream", (True, True)),
        ("application/json", (True, False)),
        ("text/event-stream", (False, True)),
        ("", (True, True)),  # RFC 9110 section 12.5.1: no Accept accepts any type
        ("*/*", (True, True)),
        ("application/*, text/*", (True, True)),
        ("application/json;q=0, text/event-stream", (False, True)),  # q=0: "not acceptable"
        ("Application/JSON ; q=0.5", (True, False)),
        ("text/html", (False, False)),
    ],
)
def test_accept_values(accept: str, expected: tuple[bool, bool]) -> None:
    from conduit_mcp.proxy.listen._stateless import accepted

    assert accepted(accept) == expected


@pytest.mark.live
def test_the_typescript_client_gets_server_everythings_progress_through_the_listener(
    ts_sdk: tuple[str, Path],
    server_everything_argv: list[str],
    listening_proxy: Callable[..., str],
) -> None:
    """The official TypeScript SDK client over Streamable HTTP through `--listen` (a session:
    server-everything speaks 2025-11-25) gets the progress notifications of
    `trigger-long-running-operation` on the request's stream, the same as over stdio directly."""
    from .conftest import run_ts_client

    step = {
        "op": "call",
        "name": "trigger-long-running-operation",
        "arguments": {"duration": 0.3, "steps": 3},
        "progress": True,
    }
    argv = server_everything_argv
    direct = run_ts_client(
        ts_sdk, {"transport": "stdio", "command": argv[0], "args": argv[1:], "steps": [step]}
    )
    url = listening_proxy("everything", "--quiet", "--", *argv)
    proxied = run_ts_client(
        ts_sdk, {"transport": "http", "url": url, "headers": {}, "steps": [step]}
    )
    # All three are sent before the result, in order (server-everything awaits each). The
    # TypeScript client drops a progress notification that arrives in the same read as the
    # response (it handles notifications a microtask later and forgets the token with the
    # response), so the last one may be lost by either run on a busy machine: each run must
    # see the same steps, in order, missing at most the last.
    every = [{"progress": i, "total": 3} for i in (1, 2, 3)]
    for run in (direct, proxied):
        seen = run[1]["progress"]
        assert len(seen) >= 2 and seen == every[: len(seen)], seen
    assert proxied[1]["result"] == direct[1]["result"]
