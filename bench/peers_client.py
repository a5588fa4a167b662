"""The raw JSON-RPC client of bench/peers.py: one per transport (stdio lines, Streamable HTTP,
HTTP+SSE), each timing sequential `tools/call`s of `echo` and running calls with 32 in flight.

The same client for every candidate of a transport, so the bench compares proxies, not
clients: no SDK, HTTP/1.1 keep-alive on plain sockets (blocking for sequential calls, asyncio
for calls in flight), a sans-IO response parser (Content-Length and chunked bodies) and
server-sent events read as the HTML standard describes them. Every answer is checked: the
echo's text, or the listing's `echo` tool; a request a proxy sends the client is answered (a
ping with `{}`, anything else with -32601).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import select
import socket
import subprocess
import time
from typing import Any

PROTOCOL_VERSION = "2025-11-25"
CALL_PARAMS = {"name": "echo", "arguments": {"message": "hello"}}
IN_FLIGHT = 32
TIMEOUT_S = 30.0


class BenchError(RuntimeError):
    """A candidate did not start, or answered something else than the echo."""


# -- wire helpers -------------------------------------------------------------------------------


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _request(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _initialize(rid: int) -> dict[str, Any]:
    return _request(
        rid,
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench-peers", "version": "1"},
        },
    )


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _check_echo(reply: dict[str, Any]) -> None:
    try:
        ok = reply["result"]["content"][0]["text"] == "hello"
    except (KeyError, IndexError, TypeError):
        ok = False
    if not ok:
        raise BenchError(f"not the echo: {json.dumps(reply)[:300]}")


def _check_tools(reply: dict[str, Any]) -> None:
    tools = (reply.get("result") or {}).get("tools") or []
    if "echo" not in {t.get("name") for t in tools}:
        raise BenchError(f"tools/list without echo: {json.dumps(reply)[:300]}")


def _answer_server_request(message: dict[str, Any]) -> dict[str, Any]:
    """Our answer to a request a proxy sends the client (a ping; nothing else is offered)."""
    if message.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    error = {"code": -32601, "message": "not offered by the bench client"}
    return {"jsonrpc": "2.0", "id": message["id"], "error": error}


class Lines:
    """Lines from a file descriptor, with a timeout (select + os.read; no hidden buffer)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def readline(self, timeout: float = TIMEOUT_S) -> bytes:
        """The next line (with its newline). Raises BenchError at EOF or past `timeout` s."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[: end + 1])
                del self.buffer[: end + 1]
                return line
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise BenchError(f"no answer within {timeout:.0f} s")
            data = os.read(self.fd, 262144)
            if not data:
                raise BenchError("the candidate closed its stdout")
            self.buffer += data


# -- HTTP/1.1 (sans-IO response parser, blocking and asyncio connections) ----------------------


class ResponseParser:
    """Incremental HTTP/1.1 response parser: `feed(bytes)` returns events, in order:
    `("head", status, headers)`, `("data", bytes)` for each body piece, `("end",)`.
    Bodies: Content-Length or chunked; a response with neither has none (all we meet)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.state = "head"
        self.remaining = 0

    def feed(self, data: bytes) -> list[tuple[Any, ...]]:
        """Events completed by `data` (see the class docstring)."""
        buf = self.buffer
        buf += data
        out: list[tuple[Any, ...]] = []
        while True:
            if self.state == "head":
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
                del buf[: end + 4]
                status = int(lines[0].split()[1])
                headers: dict[str, str] = {}
                for raw in lines[1:]:
                    name, _, value = raw.partition(":")
                    headers[name.strip().lower()] = value.strip()
                out.append(("head", status, headers))
                if "chunked" in headers.get("transfer-encoding", ""):
                    self.state = "size"
                elif int(headers.get("content-length", "0") or 0) > 0:
                    self.remaining = int(headers["content-length"])
                    self.state = "length"
                else:
                    out.append(("end",))
            elif self.state in ("length", "chunk"):
                if not buf:
                    break
                take = min(self.remaining, len(buf))
                out.append(("data", bytes(buf[:take])))
                del buf[:take]
                self.remaining -= take
                if self.remaining == 0:
                    if self.state == "length":
                        out.append(("end",))
                        self.state = "head"
                    else:
                        self.state = "crlf"
            elif self.state == "crlf":
                if len(buf) < 2:
                    break
                del buf[:2]
                self.state = "size"
            elif self.state == "size":
                end = buf.find(b"\r\n")
                if end < 0:
                    break
                size = int(bytes(buf[:end]).split(b";")[0], 16)
                del buf[: end + 2]
                if size:
                    self.remaining, self.state = size, "chunk"
                else:
                    self.state = "trailer"
            else:  # trailer: lines until an empty one
                end = buf.find(b"\r\n")
                if end < 0:
                    break
                empty = end == 0
                del buf[: end + 2]
                if empty:
                    out.append(("end",))
                    self.state = "head"
        return out


class SseParser:
    """Server-sent events from body pieces: `feed(bytes)` returns `(event, data)` pairs (WHATWG
    HTML, "Interpreting an event stream": a line ends at CRLF, LF or CR; an empty line
    dispatches the event if it has data; the type defaults to `message`)."""

    LINE_END = re.compile(rb"\r\n|\n|\r")

    def __init__(self) -> None:
        self.buffer = b""
        self.event = ""
        self.data: list[str] = []

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        """Events completed by `data`."""
        self.buffer += data
        out: list[tuple[str, str]] = []
        while (end := self.LINE_END.search(self.buffer)) is not None:
            if end.group() == b"\r" and end.end() == len(self.buffer):
                break  # the LF of a CRLF may come with the next piece
            line = self.buffer[: end.start()].decode()
            self.buffer = self.buffer[end.end() :]
            if not line:
                if self.data:
                    out.append((self.event or "message", "\n".join(self.data)))
                self.event, self.data = "", []
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                self.event = value
            elif name == "data":
                self.data.append(value)
        return out


def _head(method: str, port: int, path: str, headers: dict[str, str], body: bytes) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"host: 127.0.0.1:{port}"]
    if method == "POST":
        lines += ["content-type: application/json", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _json_replies(headers: dict[str, str], body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one POST's answer: a JSON body, or an event stream's data."""
    if not body:
        return []
    if headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(data) for _, data in SseParser().feed(body + b"\n\n") if data.strip()]
    value = json.loads(body)
    return value if isinstance(value, list) else [value]


class HttpConn:
    """One blocking keep-alive HTTP/1.1 connection to 127.0.0.1:`port`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.parser = ResponseParser()
        self.events: list[tuple[Any, ...]] = []

    def close(self) -> None:
        self.sock.close()

    def send(self, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> None:
        self.sock.sendall(_head(method, self.port, path, headers, body))

    def event(self) -> tuple[Any, ...]:
        """The next parser event, reading as needed. Raises BenchError on EOF or timeout."""
        while not self.events:
            try:
                data = self.sock.recv(262144)
            except TimeoutError as exc:
                raise BenchError(f"no HTTP answer within {TIMEOUT_S:.0f} s") from exc
            if not data:
                raise BenchError("the server closed the connection")
            self.events.extend(self.parser.feed(data))
        return self.events.pop(0)

    def head(self) -> tuple[int, dict[str, str]]:
        """The status and headers of the next response."""
        event = self.event()
        assert event[0] == "head", event
        return event[1], event[2]

    def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        """One whole request and response: (status, headers, body)."""
        self.send(method, path, headers, body)
        status, got = self.head()
        parts = []
        while (event := self.event())[0] != "end":
            parts.append(event[1])
        return status, got, b"".join(parts)


class AsyncHttpConn:
    """The asyncio twin of `HttpConn` (the throughput rounds)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.parser = ResponseParser()
        self.events: list[tuple[Any, ...]] = []
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> AsyncHttpConn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    def close(self) -> None:
        self.writer.close()

    def send(self, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> None:
        self.writer.write(_head(method, self.port, path, headers, body))

    async def event(self) -> tuple[Any, ...]:
        while not self.events:
            data = await asyncio.wait_for(self.reader.read(262144), TIMEOUT_S)
            if not data:
                raise BenchError("the server closed the connection")
            self.events.extend(self.parser.feed(data))
        return self.events.pop(0)

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        self.send(method, path, headers, body)
        event = await self.event()
        assert event[0] == "head", event
        parts = []
        while (piece := await self.event())[0] != "end":
            parts.append(piece[1])
        return event[1], event[2], b"".join(parts)


# -- clients: one per transport, each with a sequential call and a 32-in-flight run -------------


#: What a run with calls in flight gives: (calls answered, seconds taken).
Rate = tuple[int, float]


class StdioClient:
    """JSON-RPC lines on a candidate's stdin/stdout (the candidate is a subprocess)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.fd_in = process.stdin.fileno()
        self.lines = Lines(process.stdout.fileno())
        self.next_id = 0

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd_in, view) :]

    def reply(self) -> dict[str, Any]:
        """The next response (server requests answered, notifications skipped)."""
        while True:
            message = json.loads(self.lines.readline())
            if "method" not in message:
                return dict(message)
            if "id" in message:
                self.write(_line(_answer_server_request(message)))

    def rpc(self, message: dict[str, Any]) -> dict[str, Any]:
        self.write(_line(message))
        while True:
            reply = self.reply()
            if reply.get("id") == message["id"]:
                return reply

    def rid(self) -> int:
        self.next_id += 1
        return self.next_id

    def open(self) -> None:
        """initialize, notifications/initialized, tools/list (the guard learns the tools)."""
        reply = self.rpc(_initialize(self.rid()))
        if "result" not in reply:
            raise BenchError(f"initialize: {json.dumps(reply)[:300]}")
        self.write(_line(INITIALIZED))
        _check_tools(self.rpc(_request(self.rid(), "tools/list")))

    def calls(self, count: int, into: list[float] | None = None, seconds: float = 0.0) -> None:
        """`count` sequential `tools/call`s (fewer if `seconds` > 0 pass first), each one's
        wall µs appended to `into`."""
        deadline = time.perf_counter() + seconds if seconds else float("inf")
        for _ in range(count):
            start = time.perf_counter_ns()
            reply = self.rpc(_request(self.rid(), "tools/call", CALL_PARAMS))
            if into is not None:
                into.append((time.perf_counter_ns() - start) / 1000)
            _check_echo(reply)
            if time.perf_counter() > deadline:
                break

    def in_flight(self, count: int, depth: int = IN_FLIGHT, seconds: float = 0.0) -> Rate:
        """`count` calls with `depth` of them written ahead on the pipe, a new one written as
        each answer arrives (none after `seconds`, if > 0): (calls answered, seconds taken)."""
        deadline = time.perf_counter() + seconds if seconds else float("inf")
        first = self.next_id + 1
        self.next_id += count
        ids = iter(range(first, first + count))
        head = [_line(_request(i, "tools/call", CALL_PARAMS)) for i in itertools.islice(ids, depth)]
        start = time.perf_counter()
        self.write(b"".join(head))
        sent, done = len(head), 0
        while done < sent:
            _check_echo(self.reply())
            done += 1
            if time.perf_counter() < deadline and (nxt := next(ids, None)) is not None:
                self.write(_line(_request(nxt, "tools/call", CALL_PARAMS)))
                sent += 1
        return done, time.perf_counter() - start


class StreamableClient:
    """Streamable HTTP at `path`, in a 2025-11-25 session (`initialize`, then the
    `Mcp-Session-Id` and `MCP-Protocol-Version` headers on every request); an answer is read
    as a JSON body or as an event stream."""

    def __init__(self, port: int, path: str = "/mcp") -> None:
        self.port, self.path = port, path
        self.session: str | None = None
        self.version = PROTOCOL_VERSION
        self.next_id = 0

    def headers(self) -> dict[str, str]:
        found = {"accept": "application/json, text/event-stream"}
        if self.session is not None:
            found["mcp-session-id"] = self.session
            found["mcp-protocol-version"] = self.version
        return found

    def body(self, rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
        return json.dumps(_request(rid, method, params), separators=(",", ":")).encode()

    def rid(self) -> int:
        self.next_id += 1
        return self.next_id

    def post(self, conn: HttpConn, rid: int, method: str, params: Any = None) -> dict[str, Any]:
        status, headers, body = conn.request(
            "POST", self.path, self.headers(), self.body(rid, method, params)
        )
        replies = [r for r in _json_replies(headers, body) if r.get("id") == rid]
        if status != 200 or not replies:
            raise BenchError(f"{method}: HTTP {status} {body[:300]!r}")
        if method == "initialize":
            self.session = headers.get("mcp-session-id")
        return replies[0]

    def open(self) -> None:
        conn = HttpConn(self.port)
        try:
            reply = self.post(conn, self.rid(), "initialize", _initialize(0)["params"])
            self.version = str(reply.get("result", {}).get("protocolVersion", self.version))
            data = json.dumps(INITIALIZED).encode()
            status, _, _ = conn.request("POST", self.path, self.headers(), data)
            if status not in (200, 202, 204):
                raise BenchError(f"notifications/initialized: HTTP {status}")
            _check_tools(self.post(conn, self.rid(), "tools/list"))
        finally:
            conn.close()

    def calls(self, count: int, into: list[float] | None = None, seconds: float = 0.0) -> None:
        """As `StdioClient.calls`, on a fresh connection kept for the batch."""
        deadline = time.perf_counter() + seconds if seconds else float("inf")
        conn = HttpConn(self.port)
        try:
            for _ in range(count):
                start = time.perf_counter_ns()
                reply = self.post(conn, self.rid(), "tools/call", CALL_PARAMS)
                if into is not None:
                    into.append((time.perf_counter_ns() - start) / 1000)
                _check_echo(reply)
                if time.perf_counter() > deadline:
                    break
        finally:
            conn.close()

    def in_flight(self, count: int, depth: int = IN_FLIGHT, seconds: float = 0.0) -> Rate:
        """As `StdioClient.in_flight`, on `depth` keep-alive connections of the session, one
        call in flight on each."""
        return asyncio.run(self._in_flight(count, depth, seconds))

    async def _in_flight(self, count: int, depth: int, seconds: float) -> Rate:
        conns = [await AsyncHttpConn(self.port).open() for _ in range(depth)]
        left = [count]
        done = [0]
        deadline = time.perf_counter() + seconds if seconds else float("inf")

        async def worker(conn: AsyncHttpConn) -> None:
            while left[0] > 0 and time.perf_counter() < deadline:
                left[0] -= 1
                rid = self.rid()
                status, headers, body = await conn.request(
                    "POST",
                    self.path,
                    self.headers(),
                    self.body(rid, "tools/call", CALL_PARAMS),
                )
                replies = [r for r in _json_replies(headers, body) if r.get("id") == rid]
                if status != 200 or not replies:
                    raise BenchError(f"tools/call: HTTP {status} {body[:300]!r}")
                _check_echo(replies[0])
                done[0] += 1

        try:
            start = time.perf_counter()
            await asyncio.gather(*(worker(c) for c in conns))
            return done[0], time.perf_counter() - start
        finally:
            for conn in conns:
                conn.close()


class SseClient:
    """The HTTP+SSE transport (2024-11-05): `GET sse_path` opens a stream whose first event
    names the POST endpoint; each POST is answered 202 and its response comes on the stream."""

    def __init__(self, port: int, sse_path: str = "/sse") -> None:
        self.port, self.sse_path = port, sse_path
        self.stream: HttpConn | None = None
        self.sse = SseParser()
        self.pending: list[tuple[str, str]] = []
        self.endpoint = ""
        self.next_id = 0

    def rid(self) -> int:
        self.next_id += 1
        return self.next_id

    def stream_event(self) -> tuple[str, str]:
        assert self.stream is not None
        while not self.pending:
            event = self.stream.event()
            if event[0] == "end":
                raise BenchError("the SSE stream ended")
            if event[0] == "data":
                self.pending.extend(self.sse.feed(event[1]))
        return self.pending.pop(0)

    def connect(self) -> None:
        self.stream = HttpConn(self.port)
        self.stream.send("GET", self.sse_path, {"accept": "text/event-stream"})
        status, _ = self.stream.head()
        if status != 200:
            raise BenchError(f"GET {self.sse_path}: HTTP {status}")
        while True:
            kind, data = self.stream_event()
            if kind == "endpoint":
                self.endpoint = data.strip()
                break

    def wait(self, rid: int) -> dict[str, Any]:
        while True:
            kind, data = self.stream_event()
            if kind != "message" or not data.strip():
                continue
            message = json.loads(data)
            if message.get("id") == rid and "method" not in message:
                return dict(message)

    def post(self, conn: HttpConn, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        status, _, body = conn.request("POST", self.endpoint, {}, data)
        if status not in (200, 202):
            raise BenchError(f"POST {self.endpoint}: HTTP {status} {body[:200]!r}")

    def rpc(self, conn: HttpConn, message: dict[str, Any]) -> dict[str, Any]:
        self.post(conn, message)
        return self.wait(message["id"])

    def open(self) -> None:
        self.connect()
        conn = HttpConn(self.port)
        try:
            if "result" not in self.rpc(conn, _initialize(self.rid())):
                raise BenchError("initialize over SSE failed")
            self.post(conn, INITIALIZED)
            _check_tools(self.rpc(conn, _request(self.rid(), "tools/list")))
        finally:
            conn.close()

    def calls(self, count: int, into: list[float] | None = None, seconds: float = 0.0) -> None:
        """As `StdioClient.calls`: each POST on a fresh connection kept for the batch, each
        answer read from the stream."""
        deadline = time.perf_counter() + seconds if seconds else float("inf")
        conn = HttpConn(self.port)
        try:
            for _ in range(count):
                start = time.perf_counter_ns()
                reply = self.rpc(conn, _request(self.rid(), "tools/call", CALL_PARAMS))
                if into is not None:
                    into.append((time.perf_counter_ns() - start) / 1000)
                _check_echo(reply)
                if time.perf_counter() > deadline:
                    break
        finally:
            conn.close()

    def in_flight(self, count: int, depth: int = IN_FLIGHT, seconds: float = 0.0) -> Rate:
        """As `StdioClient.in_flight`: `depth` POST connections, the answers on the stream."""
        return asyncio.run(self._in_flight(count, depth, seconds))

    async def _in_flight(self, count: int, depth: int, seconds: float) -> Rate:
        # The stream's socket moves to asyncio for the round, and back afterwards.
        assert self.stream is not None
        sock = self.stream.sock
        sock.settimeout(None)
        reader, writer = await asyncio.open_connection(sock=sock)
        waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        loop = asyncio.get_running_loop()

        def deliver(kind: str, data: str) -> None:
            if kind == "message" and data.strip():
                message = json.loads(data)
                future = waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)

        for kind, data in self.pending:
            deliver(kind, data)
        self.pending.clear()
        for event in self.stream.events:
            if event[0] == "data":
                for kind, data in self.sse.feed(event[1]):
                    deliver(kind, data)
        self.stream.events.clear()

        async def read_stream() -> None:
            while True:
                data = await reader.read(262144)
                if not data:
                    return
                for event in self.stream.parser.feed(data):  # type: ignore[union-attr]
                    if event[0] == "data":
                        for kind, text in self.sse.feed(event[1]):
                            deliver(kind, text)

        conns = [await AsyncHttpConn(self.port).open() for _ in range(depth)]
        left = [count]
        done = [0]
        deadline = time.perf_counter() + seconds if seconds else float("inf")

        async def worker(conn: AsyncHttpConn) -> None:
            while left[0] > 0 and time.perf_counter() < deadline:
                left[0] -= 1
                rid = self.rid()
                future: asyncio.Future[dict[str, Any]] = loop.create_future()
                waiting[rid] = future
                data = json.dumps(_request(rid, "tools/call", CALL_PARAMS)).encode()
                status, _, _ = await conn.request("POST", self.endpoint, {}, data)
                if status not in (200, 202):
                    raise BenchError(f"POST {self.endpoint}: HTTP {status}")
                _check_echo(await asyncio.wait_for(future, TIMEOUT_S))
                done[0] += 1

        stream_task = asyncio.ensure_future(read_stream())
        try:
            start = time.perf_counter()
            await asyncio.gather(*(worker(c) for c in conns))
            return done[0], time.perf_counter() - start
        finally:
            for conn in conns:
                conn.close()
            stream_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream_task
            reader_transport: Any = writer.transport
            reader_transport.pause_reading()
            # Hand the socket back to the blocking client: a dup, as the transport owns it.
            self.stream.sock = socket.socket(fileno=os.dup(sock.fileno()))
            self.stream.sock.setblocking(True)
            self.stream.sock.settimeout(TIMEOUT_S)
            writer.transport.abort()
