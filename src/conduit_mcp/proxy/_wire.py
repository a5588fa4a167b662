"""JSON-RPC messages as newline-delimited lines: the stdio transport's framing, both ways.

Not a public module. Spec: MCP 2025-11-25 basic/transports "stdio" (messages are delimited by
newlines and MUST NOT contain embedded newlines; UTF-8).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import orjson
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)

#: The longest line read (bytes): a longer one is an error, so memory stays bounded.
MAX_LINE: Final = 256 * 1024 * 1024
_CHUNK: Final = 256 * 1024


class LineTooLong(Exception):
    """A line longer than `MAX_LINE` bytes (the rest of it is skipped)."""


def decode(line: bytes) -> SessionMessage | Exception:
    """One line as the SDK reads it: UTF-8 (bad bytes replaced), then a JSON-RPC message.

    Returns:
        A `SessionMessage`, or the validation error (never raises).
    """
    try:
        text = line.decode("utf-8", "replace")
        return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))
    except Exception as exc:  # pydantic.ValidationError, recursion limits
        return exc


def encode(item: SessionMessage) -> bytes:
    """One message as a line (`model_dump_json(by_alias=True, exclude_unset=True)`, as the
    SDK writes it), newline included.

    Raises:
        pydantic_core.PydanticSerializationError: a string the JSON encoder cannot write.
    """
    json = item.message.model_dump_json(by_alias=True, exclude_unset=True)
    return json.encode("utf-8", "surrogatepass") + b"\n"


def invalid_line_error(line: bytes) -> SessionMessage:
    """The JSON-RPC error response to a line that is not a message (JSON-RPC 2.0 section 5.1:
    -32700 for invalid JSON, -32600 for JSON that is not a valid request; `id` the request's
    when it can be read, else null)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    rid = value.get("id") if isinstance(value, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        rid = None
    return _error(rid, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")


def _error(rid: Any, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))
    )


class LineReader:
    """Newline-delimited lines from a source of byte chunks; memory bounded by `MAX_LINE`.

    Args:
        read_chunk: returns the next chunk of bytes, `b""` at the end of the stream.
        max_line: the longest line kept, in bytes.
    """

    def __init__(
        self, read_chunk: Callable[[], Awaitable[bytes]], max_line: int = MAX_LINE
    ) -> None:
        self._read = read_chunk
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer known to hold no newline
        self._max = max_line
        self._skipping = False
        self._eof = False

    async def next_line(self) -> bytes | None:
        """The next line without its newline (blank lines skipped), or `None` at the end.

        Raises:
            LineTooLong: a line past `max_line` bytes (once per such line; reading goes on).
        """
        while True:
            cut = self._buffer.find(b"\n", self._scanned)
            if cut >= 0:
                line = bytes(self._buffer[:cut])
                del self._buffer[: cut + 1]
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    continue
                if line.strip():
                    return line
                continue
            self._scanned = len(self._buffer)
            if self._scanned > self._max:
                self._buffer.clear()
                self._scanned = 0
                if not self._skipping:
                    self._skipping = True
                    raise LineTooLong(f"a line longer than {self._max} bytes")
            if self._eof:
                rest = bytes(self._buffer)
                self._buffer.clear()
                if rest.strip() and not self._skipping:
                    return rest
                return None
            chunk = await self._read()
            if not chunk:
                self._eof = True
            else:
                self._buffer += chunk


def chunk_size() -> int:
    """Bytes asked for per read."""
    return _CHUNK
