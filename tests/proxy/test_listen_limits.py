"""`conduit-mcp proxy --listen` bounded before it reads (issue 30, item 2), attacked with raw
sockets the way a hostile client would: a request head of 32 MiB, a head that never ends, a
connection that sends nothing, a body larger than the bound (announced, and chunked), more
connections from one address than allowed, an idle kept-alive connection; and the Host /
Origin checks and the budgets run before a request's body is read.

Oracles: RFC 6585 section 5 (431 Request Header Fields Too Large) and section 4 (429 Too Many
Requests, `Retry-After`); RFC 9110 section 15.5.9 (408 Request Timeout), 15.5.14 (413
Content Too Large); RFC 9112 section 9.6 (`Connection: close` on a response after which the
server closes); the bounds given to the proxy on its command line (the figures asserted are
worked out from them, not read from the code under test); the proxy's resident memory from
`/proc/PID/status` (VmHWM, its peak).
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy.listen._budget import ClientBudget
from conduit_mcp.proxy.listen._server import Listener
from tests.forkserver import spawn
from tests.guard.conftest import Process

from .conftest import proxy_argv

PORT = 8765
#: Seconds a test waits for an answer or a close before it fails (never reached when the
#: bound holds: the proxy's bound in these tests is a fraction of it).
DEADLINE = 20.0


class Proxy:
    """A running `conduit-mcp proxy --listen 127.0.0.1:PORT` (no server behind it is ever
    started: nothing here reaches one)."""

    def __init__(self, process: Process, port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.log = log

    def connect(self, source: str = "127.0.0.1") -> socket.socket:
        sock = socket.socket()
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", self.port))
        sock.settimeout(DEADLINE)
        return sock

    def peak_kib(self) -> int:
        """The proxy's peak resident memory so far (VmHWM, KiB)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def logged(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Callable[..., Proxy]]:
    from tests.guard.conftest import free_port, wait_for_port

    started: list[Process] = []

    def start(*options: str) -> Proxy:
        port = free_port()
        log = tmp_path / f"proxy-{port}.jsonl"
        argv = [
            *proxy_argv("limits", "--log", str(log), "--listen", f"127.0.0.1:{port}"),
            *options,
            "--",
            sys.executable,
            "-c",
            "pass",
        ]
        # Forked (tests/forkserver.py): what is measured is growth from the proxy's own start.
        process = spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(process)
        wait_for_port(port, process)
        return Proxy(process, port, log)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _until_closed(sock: socket.socket) -> bytes:
    """Everything the proxy sends until it closes the connection (a reset counts as a close);
    fails past the socket's timeout (`DEADLINE`)."""
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not piece:
            return data
        data += piece


def _answer(data: bytes) -> tuple[int, dict[str, str], Any]:
    """(status, header fields, JSON body) of one HTTP/1.1 response."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, json.loads(body)


def test_a_32_mib_head_is_answered_431_at_the_bound_and_memory_stays_flat(
    proxy: Callable[..., Proxy],
) -> None:
    """Measured on main: a 101 MiB header grew the proxy by 137 MiB (httptools keeps a header
    value of any size, growing it piece by piece). Now the proxy answers 431 once the head
    passes 64 KiB (the default), with `Connection: close` and the reason, and reads nothing
    more into memory: the client keeps sending 32 MiB, the proxy's peak resident memory grows
    by less than 8 MiB (the head's 64 KiB, the socket's read buffers, the refusal)."""
    running = proxy()
    before = running.peak_kib()
    sock = running.connect()
    sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
    piece = b"a" * (1 << 20)
    sent = answered = 0
    data = b""
    while sent < 32 << 20 and not answered:
        readable, writable, _ = select.select([sock], [sock], [], DEADLINE)
        assert readable or writable, "the proxy neither answered nor read"
        if readable:
            answered = 1
            break
        try:
            sent += sock.send(piece)
        except (BrokenPipeError, ConnectionResetError):
            break
    data = _until_closed(sock)
    sock.close()
    status, fields, body = _answer(data)
    assert status == 431
    assert fields["connection"] == "close"
    assert body["error"]["data"]["reason"] == "head_too_large"
    assert sent < 32 << 20  # it stopped reading: the rest never left the client
    assert running.peak_kib() - before < 8 * 1024
    warnings = [e for e in running.logged() if "head_too_large" in e["message"]]
    assert warnings and "127.0.0.1" in warnings[0]["message"]


def test_a_head_that_never_ends_is_answered_408_and_a_silent_connection_closed(
    proxy: Callable[..., Proxy],
) -> None:
    """Measured on main: an unfinished head stayed open 42 s and more. With `--head-timeout
    0.5`, a head missing its blank line is answered 408 and the connection closes; a
    connection that sends nothing at all is closed without an answer (no request to answer).
    The test waits on the socket only: the close comes long before `DEADLINE`."""
    running = proxy("--head-timeout", "0.5")
    sock = running.connect()
    sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n" % running.port)
    status, fields, body = _answer(_until_closed(sock))
    sock.close()
    assert (status, fields["connection"]) == (408, "close")
    assert body["error"]["data"]["reason"] == "head_timeout"
    silent = running.connect()
    assert _until_closed(silent) == b""
    silent.close()


def test_a_later_head_on_a_kept_alive_connection_that_never_ends_is_answered_408(
    proxy: Callable[..., Proxy],
) -> None:
    """The head bound holds for every request of a kept-alive connection, not only its first:
    with `--head-timeout 0.5` (and a keep-alive timeout far past it), a whole request is
    answered 200, then a second head missing its blank line is answered 408 and the
    connection closes (RFC 9110 section 15.5.9), before `DEADLINE`."""
    running = proxy("--head-timeout", "0.5", "--keep-alive-timeout", "60")
    sock = running.connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % running.port)
    first = b""
    while b"\r\n\r\n" not in first or not first.endswith(b"}"):
        piece = sock.recv(65536)
        assert piece, "the proxy closed the connection after the first request"
        first += piece
    assert first.startswith(b"HTTP/1.1 200 OK\r\n")
    sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n" % running.port)
    status, fields, body = _answer(_until_closed(sock))
    sock.close()
    assert (status, fields["connection"]) == (408, "close")
    assert body["error"]["data"]["reason"] == "head_timeout"


def test_an_idle_kept_alive_connection_closes_after_the_keep_alive_timeout(
    proxy: Callable[..., Proxy],
) -> None:
    """`--keep-alive-timeout 0.5`: after an answered request the connection, left idle, is
    closed by the proxy (before `DEADLINE`)."""
    running = proxy("--keep-alive-timeout", "0.5")
    sock = running.connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % running.port)
    data = _until_closed(sock)
    sock.close()
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert data.count(b"HTTP/1.1") == 1


def test_a_body_past_the_bound_is_refused_before_it_is_read(
    proxy: Callable[..., Proxy],
) -> None:
    """`--max-body-bytes 1000`: a POST announcing 10 MB is answered 413 at once, its body
    never sent (on main the listener waited for it); a chunked body is answered 413 when it
    passes 1,000 bytes, the rest dropped."""
    running = proxy("--max-body-bytes", "1000")
    head = (
        b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n"
        b"mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\n" % running.port
    )
    sock = running.connect()
    sock.sendall(head + b"content-length: 10000000\r\n\r\n")
    status, fields, body = _answer(_until_closed(sock))
    sock.close()
    assert (status, fields["connection"]) == (413, "close")
    assert body["error"]["data"]["reason"] == "body_too_large"
    sock = running.connect()
    sock.sendall(head + b"transfer-encoding: chunked\r\n\r\n")
    chunk = b"400\r\n" + b"x" * 0x400 + b"\r\n"  # 1,024 bytes: past the bound
    sock.sendall(chunk)
    status, _, body = _answer(_until_closed(sock))
    sock.close()
    assert status == 413 and body["error"]["data"]["reason"] == "body_too_large"


def test_connections_past_the_per_address_bound_get_429_and_a_closed_one_frees_its_place(
    proxy: Callable[..., Proxy],
) -> None:
    """`--max-connections-per-address 3`: three open connections from 127.0.0.1 (each holding
    an unfinished request line), the fourth is answered 429 with `Retry-After` and closed; a
    client from another address (127.0.0.2) is still served; once one of the three closes,
    127.0.0.1 is served again (a new connection is tried until one is answered 200: the
    proxy sees the close a moment after the client made it)."""
    running = proxy("--max-connections-per-address", "3")
    held = [running.connect() for _ in range(3)]
    for sock in held:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    extra = running.connect()
    status, fields, body = _answer(_until_closed(extra))
    extra.close()
    assert (status, fields["retry-after"], fields["connection"]) == (429, "1", "close")
    assert body["error"]["data"]["reason"] == "too_many_connections_per_address"
    request = b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:%d\r\nconnection: close\r\n\r\n"
    other = running.connect("127.0.0.2")
    other.sendall(request % running.port)
    assert _until_closed(other).startswith(b"HTTP/1.1 200 OK\r\n")
    other.close()
    held.pop().close()
    answers = []
    for _attempt in range(200):
        sock = running.connect()
        sock.sendall(request % running.port)
        answers.append(_until_closed(sock)[:12])
        sock.close()
        if answers[-1] == b"HTTP/1.1 200":
            break
    assert answers[-1] == b"HTTP/1.1 200"
    assert set(answers[:-1]) <= {b"HTTP/1.1 429"}
    for sock in held:
        sock.close()


# -- the listener's order: nothing of a body is read before the checks --------------------


def _scope(headers: list[tuple[str, str]], peer: tuple[str, int]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": peer,
        "server": ("127.0.0.1", PORT),
    }


def _ask(listener: Listener, headers: list[tuple[str, str]], peer: Any) -> tuple[int, int]:
    """POST to the listener as the HTTP server would, with a body that never comes: (the
    answer's status, how many times the body was asked for)."""
    reads = 0
    answer: list[int] = []

    async def receive() -> Any:
        nonlocal reads
        reads += 1
        await anyio.sleep_forever()

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            answer.append(message["status"])

    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:
                await tg.start(listener.run)
                await listener(_scope(headers, peer), receive, send)
                tg.cancel_scope.cancel()

    anyio.run(main)
    return answer[0], reads


_JSON = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def test_host_origin_and_budgets_are_checked_before_any_body_is_read() -> None:
    """conduit-defined order (issue 30, item 2): a request with a foreign `Host` (421, as the
    SDK's DNS-rebinding check answers) or `Origin` (403), a stateless request of a client at
    its budget (429) and an `initialize` of a client at its session budget (429) are all
    answered without their body being read: on main the budgets read the body first."""
    seam = GuardSeam(GuardSettings("order"))
    budget = ClientBudget(max_in_flight_per_client=1, max_sessions_per_client=1)
    listener = Listener(seam, ["true"], host="127.0.0.1", port=PORT, budget=budget)
    host = [("host", f"127.0.0.1:{PORT}")]
    peer = ("10.0.0.9", 50000)
    try:
        assert _ask(listener, [("host", "evil.example:80"), *_JSON], peer) == (421, 0)
        assert _ask(listener, [*host, ("origin", "http://evil.example"), *_JSON], peer) == (403, 0)
        who = budget.client("Bearer at-its-cap", peer)
        assert budget.admit(who, False) is None  # one request of its in flight
        modern = [
            *host,
            *_JSON,
            ("authorization", "Bearer at-its-cap"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ]
        assert _ask(listener, modern, peer) == (429, 0)
        assert budget.open_session(who) is None  # one session of its open
        opening = [*host, *_JSON, ("authorization", "Bearer at-its-cap")]
        assert _ask(listener, opening, peer) == (429, 0)
    finally:
        seam.close()


def test_sigterm_stops_the_proxy_while_a_body_never_comes(proxy: Callable[..., Proxy]) -> None:
    """conduit-defined (a hostile review): a client that sends a POST's head and only part of
    its body holds the request open; SIGTERM waited for it for ever (uvicorn's graceful
    shutdown has no limit unless given one), so one client kept the proxy from stopping. The
    listener now waits `SHUTDOWN_GRACE` seconds (5), then ends the request and exits."""
    running = proxy()
    sock = running.connect()
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
    ) % running.port
    sock.sendall(head + b'{"jsonrpc"')
    with pytest.raises(socket.timeout):  # the request is open: nothing is answered yet
        sock.settimeout(1.0)
        sock.recv(1)
    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(timeout=DEADLINE) in (0, -signal.SIGTERM)  # uvicorn re-raises it
    sock.close()
