"""A raw HTTP/1.1 server on loopback, in-process (anyio), whose every answer a test writes: the
upstream of the session client's tests, where a real server could not be made to lose a
session, cut a stream or send a forged answer on cue.

conduit-defined test double. Each request (method, path, lower-cased headers, body) is handed to
the test's `handler(request, connection)`, which writes raw bytes with `connection.write` (a
keep-alive connection stays open for the next request unless the handler closes it). The
server counts the connections it accepted and records every request in `requests`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int  # which accepted connection carried it (1, 2, ...)

    @property
    def message(self) -> Any:
        return json.loads(self.body) if self.body else None


class Connection:
    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream
        self.closed = False

    async def write(self, data: bytes) -> None:
        await self._stream.send(data)

    async def close(self) -> None:
        self.closed = True
        await self._stream.aclose()


Handler = Callable[[Request, Connection], Awaitable[None]]


@dataclass
class Scripted:
    handler: Handler
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener:
            task_status.started()
            await listener.serve(self._connection)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        self.connections += 1
        number = self.connections
        connection = Connection(stream)
        buffer = b""
        try:
            while not connection.closed:
                while b"\r\n\r\n" not in buffer:
                    chunk = await stream.receive()
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                while len(buffer) < length:
                    buffer += await stream.receive()
                body, buffer = buffer[:length], buffer[length:]
                request = Request(method, path, headers, body, number)
                self.requests.append(request)
                await self.handler(request, connection)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            await stream.aclose()


def json_answer(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> bytes:
    """A whole JSON response (keep-alive)."""
    body = json.dumps(value).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


def empty(status: int, headers: dict[str, str] | None = None) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return f"HTTP/1.1 {status} X\r\ncontent-length: 0\r\n{extra}\r\n".encode()


SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def event(message: Any) -> bytes:
    """One SSE event as one chunk."""
    return chunk(b"data: " + json.dumps(message).encode() + b"\n\n")


LAST_CHUNK = b"0\r\n\r\n"
