"""The round-4 handed cases (tests/fixtures/cases/round4, provenance in its README) and the
operator lines of issue 30 item 9, each through the real `conduit-mcp proxy` in a subprocess.

- 77: a client request whose `id` is null is answered -32600 with id null and never passed on
  (spec 2025-11-25 basic "Requests": the ID MUST NOT be null; JSON-RPC 2.0 section 5), over
  stdio (a child server, an HTTP upstream) and over `--listen` (a session, a stateless
  2026-07-28 request).
- 84: an upstream restarted under the proxy (the official Python SDK server, stopped and
  started again on its port) answers 404 to the old session; the proxy initializes again
  without a session id and the client's request succeeds (spec 2025-11-25 basic/transports
  "Session Management" 4: MUST).
- 86: over `--listen --upstream`, an unauthenticated initialize gets the upstream's HTTP 401
  with its `WWW-Authenticate` challenge byte for byte (RFC 6750 parameters, the MCP
  authorization spec's `resource_metadata`), the protected-resource metadata path is served
  through (RFC 9728), and with the client's `Authorization` the session opens. Over stdio the
  same refusal is one JSON-RPC error naming the URL and the challenge.
- Item 9: a wrong upstream path says there is no MCP endpoint at the URL; an unreachable
  upstream's warning names the URL; a server that exits at start leaves one line with its exit
  code. Item 6: one upstream connection serves every request of a session (the SDK server
  answers each request with an event stream).

Real parts: the proxy, the Python SDK's `MCPServer` over Streamable HTTP (tests/proxy/
http_server.py, which logs what it received), an HTTP client speaking raw HTTP (httpx2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.forkserver import spawn
from tests.guard.conftest import free_port, start_http, stop

from .conftest import HERE, header_log, proxy_argv
from .http_server import challenge, metadata
from .test_list_changed import Lines

CASES = HERE.parent / "fixtures" / "cases" / "round4"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "round4", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _case(number: int) -> dict[str, Any]:
    (path,) = CASES.glob(f"{number}-*.json")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


class Upstream:
    """tests/proxy/http_server.py on a port that stays the same across a restart."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.tmp_path = tmp_path
        self.extra = extra
        self.logs: list[Path] = []
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        log = self.tmp_path / f"upstream-{len(self.logs)}.jsonl"
        self.logs.append(log)
        argv = [sys.executable, str(HERE / "http_server.py"), "--port", str(self.port)]
        self.process = start_http([*argv, "--log", str(log), *self.extra], self.port)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def requests(self, index: int = -1) -> list[dict[str, Any]]:
        return header_log(self.logs[index]) if self.logs[index].exists() else []


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[Callable[..., Upstream]]:
    started: list[Upstream] = []

    def make(*extra: str) -> Upstream:
        server = Upstream(tmp_path, *extra)
        server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


class StdioProxy:
    """The real proxy on stdio: lines written, messages read (a thread), stderr kept."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        # Forked from a warm interpreter (tests/forkserver.py): none of these cases is the start.
        self.process = spawn(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        assert self.process.stdout is not None
        self.lines = Lines(self.process.stdout)
        #: messages read while waiting for an answer (notifications of the proxy's)
        self.others: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def next(self, timeout: float = 30.0) -> dict[str, Any]:
        return self.lines.next(timeout=timeout)

    def answer(self, rid: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The next message with `rid` as its id (notifications before it are kept aside)."""
        while True:
            message = self.next(timeout)
            if message.get("id") == rid and "method" not in message:
                return message
            self.others.append(message)

    def close(self) -> str:
        """Close stdin, wait, return stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        stderr = self.process.stderr.read().decode()
        self.process.stderr.close()
        assert self.process.stdout is not None
        self.process.stdout.close()
        return stderr


def _session_start(proxy: StdioProxy) -> dict[str, Any]:
    proxy.others = []
    proxy.send(INITIALIZE)
    answer = proxy.answer(1)
    proxy.send(INITIALIZED)
    return answer


# -- case 77: a request whose id is null --------------------------------------------------


NULL_ID = _case(77)["input"]["client_line"].encode()
LOGGING_SERVER = """
import json, sys
log = open(sys.argv[1], "a")
for raw in sys.stdin.buffer:
    log.write(raw.decode()); log.flush()
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "s", "version": "1"}}
    else:
        r = {"tools": []}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""


def _null_id_answered(answer: dict[str, Any]) -> None:
    """Case 77's expect: id null, -32600 Invalid Request."""
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600


def test_77_a_null_id_request_over_stdio_is_answered_and_never_sent(tmp_path: Path) -> None:
    server, log = tmp_path / "server.py", tmp_path / "received.jsonl"
    server.write_text(LOGGING_SERVER)
    proxy = StdioProxy(
        [*proxy_argv("null-id", "--quiet"), "--", sys.executable, str(server), str(log)]
    )
    try:
        _session_start(proxy)
        proxy.send(NULL_ID)
        _null_id_answered(proxy.next())
        proxy.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert proxy.answer(2)["result"] == {"tools": []}
    finally:
        proxy.close()
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert [m.get("method") for m in received] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    assert all(m.get("id") is not None for m in received if m["method"] == "tools/list")


def test_77_a_null_id_request_to_an_http_upstream_is_answered_and_never_sent(
    upstream: Callable[..., Upstream],
) -> None:
    server = upstream()
    proxy = StdioProxy([*proxy_argv("null-id-http", "--quiet"), "--upstream", server.url])
    try:
        _session_start(proxy)
        proxy.send(NULL_ID)
        _null_id_answered(proxy.next())
    finally:
        proxy.close()
    assert [r.get("rpc") for r in server.requests() if r["method"] == "POST"] == [
        "initialize",
        "notifications/initialized",
    ]


def test_77_a_null_id_request_over_listen_is_answered_400_and_never_sent(
    upstream: Callable[..., Upstream], listening_proxy: Callable[..., str]
) -> None:
    server = upstream()
    url = listening_proxy("null-id-listen", "--upstream", server.url)
    with httpx2.Client(timeout=30) as client:
        opened = client.post(url, json=INITIALIZE, headers=ACCEPT)
        session = opened.headers["mcp-session-id"]
        in_session = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        refused = client.post(url, content=NULL_ID, headers=in_session)
        modern = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
        stateless = client.post(url, content=NULL_ID, headers=modern)
    for answer in (refused, stateless):
        assert answer.status_code == 400
        _null_id_answered(answer.json())
    assert [r.get("rpc") for r in server.requests() if r["method"] == "POST"] == ["initialize"]


# -- case 84: the upstream lost the session ---------------------------------------------------


def test_84_a_restarted_upstream_is_initialized_again_and_the_request_succeeds(
    upstream: Callable[..., Upstream],
) -> None:
    server = upstream()
    proxy = StdioProxy([*proxy_argv("restart", "--quiet"), "--upstream", server.url])
    try:
        _session_start(proxy)
        proxy.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        first = proxy.answer(2)
        server.stop()  # an ordinary deploy: the same server, its sessions forgotten
        server.start()
        proxy.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        again = proxy.answer(3)
        notices = proxy.others
    finally:
        stderr = proxy.close()
    assert [t["name"] for t in again["result"]["tools"]] == [
        t["name"] for t in first["result"]["tools"]
    ]
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in notices
    old_session = server.requests(0)[-1]["headers"]["mcp-session-id"]
    posts = [r for r in server.requests(1) if r["method"] == "POST"]
    assert [(r["rpc"], r["headers"].get("mcp-session-id") == old_session) for r in posts] == [
        ("tools/list", True),  # 404: the new process never heard of it
        ("initialize", False),
        ("notifications/initialized", False),
        ("tools/list", False),
    ]
    assert "mcp-session-id" not in posts[1]["headers"]  # a new session, no id attached
    assert posts[1]["id"] != 1  # the proxy's own request, not a replay of the client's
    new_session = posts[2]["headers"]["mcp-session-id"]
    assert posts[3]["headers"]["mcp-session-id"] == new_session
    assert "initializing again" in stderr


# -- case 86: a 401 and its challenge, passed through ------------------------------------------


def test_86_listen_passes_the_401_challenge_the_metadata_and_then_the_credential(
    upstream: Callable[..., Upstream], listening_proxy: Callable[..., str]
) -> None:
    case = _case(86)["input"]
    token = case["retry_headers"]["Authorization"].split()[1]
    server = upstream("--token", token)
    url = listening_proxy("oauth", "--upstream", server.url)
    base = url.rsplit("/mcp", 1)[0]
    with httpx2.Client(timeout=30) as client:
        refused = client.post(url, json=INITIALIZE, headers=ACCEPT)
        described = client.get(f"{base}/.well-known/oauth-protected-resource/mcp")
        modern = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        listing = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}}
        stateless = client.post(url, json=listing, headers=modern)
        authorized = {**ACCEPT, "authorization": case["retry_headers"]["Authorization"]}
        opened = client.post(url, json=INITIALIZE, headers=authorized)
    expected = case["upstream_401_headers"]["WWW-Authenticate"].replace("PORT", str(server.port))
    assert expected == challenge(server.port)
    for answer in (refused, stateless):
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == expected  # every parameter, as sent
        assert "mcp-session-id" not in answer.headers
    assert described.status_code == 200
    assert described.json() == metadata(server.port)
    assert opened.status_code == 200
    assert "mcp-session-id" in opened.headers
    posts = [r for r in server.requests() if r["method"] == "POST"]
    assert posts[-1]["headers"]["authorization"] == f"Bearer {token}"


def test_86_over_stdio_a_refusal_is_one_error_naming_the_url_and_the_challenge(
    upstream: Callable[..., Upstream],
) -> None:
    server = upstream("--token", "good-token-88")
    proxy = StdioProxy([*proxy_argv("oauth-stdio", "--quiet"), "--upstream", server.url])
    try:
        proxy.send(INITIALIZE)
        answer = proxy.answer(1)
    finally:
        stderr = proxy.close()
    error = answer["error"]
    assert server.url in error["message"]
    assert "HTTP 401" in error["message"]
    assert challenge(server.port) in error["message"]
    assert error["data"] == {
        "url": server.url,
        "status": 401,
        "www-authenticate": challenge(server.port),
    }
    lines = [line for line in stderr.splitlines() if "HTTP 401" in line]
    assert len(lines) == 1 and server.url in lines[0]


# -- item 6: one connection ---------------------------------------------------------------


def test_one_upstream_connection_serves_every_request_of_a_session(
    upstream: Callable[..., Upstream],
) -> None:
    """The SDK server answers each POST with an event stream whose end follows the response
    event: the connection is reused, not closed after each answer (54 for 53 before)."""
    server = upstream()
    proxy = StdioProxy([*proxy_argv("reuse", "--quiet"), "--upstream", server.url])
    try:
        _session_start(proxy)
        proxy.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        proxy.answer(2)
        for rid in range(3, 23):
            call = {"name": "add", "arguments": {"a": rid, "b": 1}}
            proxy.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": call})
            assert proxy.answer(rid)["result"]["content"][0]["text"] == str(rid + 1)
    finally:
        proxy.close()
    posts = [r for r in server.requests() if r["method"] == "POST"]
    assert len(posts) == 2 + 1 + 20
    calls = [r for r in posts if r["rpc"] == "tools/call"]
    assert len({r["client_port"] for r in calls}) == 1
    # The GET stream (the SDK server keeps it open) holds a connection of its own at most.
    every = {r["client_port"] for r in server.requests()}
    assert len(every) <= 2


# -- item 9: what an operator reads ------------------------------------------------------------


def test_a_wrong_upstream_path_says_there_is_no_mcp_endpoint_there(
    upstream: Callable[..., Upstream],
) -> None:
    server = upstream()
    wrong = server.url.replace("/mcp", "/v1/mcp")
    proxy = StdioProxy([*proxy_argv("wrong-path", "--quiet"), "--upstream", wrong])
    try:
        proxy.send(INITIALIZE)
        answer = proxy.answer(1)
    finally:
        stderr = proxy.close()
    message = answer["error"]["message"]
    assert f"no MCP endpoint at {wrong}" in message and "HTTP 404" in message
    assert answer["error"]["code"] != -32601  # not "method not found": the URL is wrong
    lines = [line for line in stderr.splitlines() if wrong in line]
    assert len(lines) == 1 and "HTTP 404" in lines[0]


def test_an_unreachable_upstreams_warning_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    proxy = StdioProxy([*proxy_argv("down", "--quiet"), "--upstream", url])
    try:
        proxy.send(INITIALIZE)
        answer = proxy.answer(1)
    finally:
        stderr = proxy.close()
    assert url in answer["error"]["message"]
    assert any(url in line and "unreachable" in line for line in stderr.splitlines()), stderr


def test_a_server_that_exits_at_start_leaves_one_line_with_its_exit_code(tmp_path: Path) -> None:
    server = tmp_path / "crash.py"
    server.write_text("import sys\nsys.stderr.write('boom\\n')\nsys.exit(3)\n")
    proxy = StdioProxy([*proxy_argv("crash", "--quiet"), "--", sys.executable, str(server)])
    assert proxy.process.wait(timeout=30) == 3
    stderr = proxy.close()
    lines = [line for line in stderr.splitlines() if line.startswith("conduit-mcp proxy:")]
    assert len(lines) == 1, stderr
    assert "exited with code 3" in lines[0] and sys.executable in lines[0]
