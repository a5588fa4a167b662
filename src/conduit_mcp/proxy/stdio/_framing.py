"""Newline-delimited lines cut from a stream of byte chunks, memory bounded: the stdio
transport's framing, for the relay's threads and for asyncio alike.

Not a public module. What a line holds is `_message`'s. Spec: MCP 2025-11-25 basic/transports
"stdio" (messages are delimited by newlines and MUST NOT contain embedded newlines).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final

#: The longest line read (bytes): a longer one is an error, so memory stays bounded.
MAX_LINE: Final = 256 * 1024 * 1024
_CHUNK: Final = 256 * 1024


class LineTooLong(Exception):
    """A line longer than `MAX_LINE` bytes (the rest of it is skipped)."""


class _Framing:
    """What both line readers share: chunks cut into lines, memory bounded by `max_line`.

    A chunk holding whole lines is cut without copying the common case (one line, one
    chunk); a line spread over chunks is gathered in a `bytearray` and handed out as it is.
    """

    def __init__(self, max_line: int, keep_newline: bool) -> None:
        self._partial = bytearray()
        self._ready: deque[bytes | bytearray | None] = deque()  # None: a line was too long
        self._max = max_line
        self._skipping = False
        self._eof = False
        self._keep = keep_newline

    def _take(self) -> bytes | object | None:
        """The next line ready, `None` at the end, or `_MORE` (read a chunk first).

        Raises:
            LineTooLong: as `LineReader.next_line`.
        """
        ready = self._ready
        if ready:
            line = ready.popleft()
            if line is None:
                raise LineTooLong(f"a line longer than {self._max} bytes")
            return line  # bytearray: bytes-like, read only
        if self._eof:
            return None
        return _MORE

    def _end(self) -> bytes | None:
        """The stream ended: its last line when it had no newline (else `None`)."""
        self._eof = True
        rest, self._partial = self._partial, bytearray()
        if rest and not self._skipping and not rest.isspace():
            return bytes(rest + b"\n") if self._keep else bytes(rest)
        return None

    def _split(self, chunk: bytes) -> None:
        cut = chunk.find(b"\n")
        if cut < 0:
            self._gather(chunk)
            return
        start = 0
        if self._partial or self._skipping:
            self._gather(memoryview(chunk)[: cut + 1])
            line, self._partial = self._partial, bytearray()
            self._emit(line)
            start = cut + 1
            cut = chunk.find(b"\n", start)
        while cut >= 0:
            self._emit(chunk[start : cut + 1])  # the whole chunk: the same object, no copy
            start = cut + 1
            cut = chunk.find(b"\n", start)
        if start < len(chunk):
            self._gather(memoryview(chunk)[start:])

    def _gather(self, data: bytes | memoryview) -> None:
        if self._skipping:
            return
        if len(self._partial) + len(data) > self._max + 1:  # + 1: the newline
            self._partial = bytearray()
            self._skipping = True
            self._ready.append(None)
            return
        self._partial += data

    def _emit(self, line: bytes | bytearray) -> None:
        if self._skipping:  # the end of a line that was too long
            self._skipping = False
            return
        if line.isspace():
            return
        self._ready.append(line if self._keep else line[:-1])


#: `_Framing._take`: no line is ready, read a chunk.
_MORE: Final = object()


def _dropped(source: str, exc: LineTooLong) -> None:
    logging.getLogger("conduit_mcp.proxy").warning("%s: %s: dropped", source, exc)


class LineReader(_Framing):
    """Newline-delimited lines from a source of byte chunks; memory bounded by `MAX_LINE`.

    Args:
        read_chunk: returns the next chunk of bytes, `b""` at the end of the stream.
        max_line: the longest line kept, in bytes.
        keep_newline: whether each line keeps its `\\n` (the relay writes a line it passes
            as read, without a copy to add one); a last line without one at the end of the
            stream gets one.
    """

    def __init__(
        self,
        read_chunk: Callable[[], Awaitable[bytes]],
        max_line: int = MAX_LINE,
        *,
        keep_newline: bool = False,
    ) -> None:
        super().__init__(max_line, keep_newline)
        self._read = read_chunk

    async def next_line(self) -> bytes | None:
        """The next line (blank lines skipped), or `None` at the end. A line longer than
        `MAX_LINE` may come as a `bytearray` (read-only use; no copy was made).

        Raises:
            LineTooLong: a line past `max_line` bytes (once per such line; reading goes on).
        """
        while True:
            line = self._take()
            if line is not _MORE:
                return line  # type: ignore[return-value]
            chunk = await self._read()
            if chunk:
                self._split(chunk)
            elif (rest := self._end()) is not None:
                return rest

    async def next_kept(self, source: str) -> bytes | None:
        """`next_line`, a line past `max_line` dropped and logged (`source` names the
        input in the log line, e.g. `"server stdout"`), `None` at the end."""
        while True:
            try:
                return await self.next_line()
            except LineTooLong as exc:
                _dropped(source, exc)


class BlockingLineReader(_Framing):
    """`LineReader` over a blocking source (`read_chunk` returns the next chunk, `b""` at
    the end), for a thread of its own."""

    def __init__(
        self,
        read_chunk: Callable[[], bytes],
        max_line: int = MAX_LINE,
        *,
        keep_newline: bool = False,
    ) -> None:
        super().__init__(max_line, keep_newline)
        self._read = read_chunk

    def holds_line(self) -> bool:
        """Whether `next_line` returns a line without reading (one is buffered)."""
        ready = self._ready
        return bool(ready) and ready[0] is not None

    def next_line(self) -> bytes | None:
        """As `LineReader.next_line`."""
        while True:
            if self._ready or self._eof:  # `_take` has a line or the end (never `_MORE`)
                return self._take()  # type: ignore[return-value]
            chunk = self._read()
            if chunk:
                # The common case, one message a read: a chunk that is one whole line, nothing
                # gathered before it, is that line as it is (`_split` finds the same).
                if (
                    chunk[-1] == 10
                    and chunk.find(b"\n") == len(chunk) - 1
                    and not self._partial
                    and not self._skipping
                ):
                    if chunk.isspace():
                        continue
                    return chunk if self._keep else chunk[:-1]
                self._split(chunk)
            elif (rest := self._end()) is not None:
                return rest

    def next_kept(self, source: str) -> bytes | None:
        """As `LineReader.next_kept`."""
        while True:
            try:
                return self.next_line()
            except LineTooLong as exc:
                _dropped(source, exc)


class FedLines(_Framing):
    """`LineReader` fed by its caller instead of reading: `feed` each chunk as it comes
    (`finish` at the end of the stream), then `next_line` until it returns `None` (nothing
    ready yet, or nothing left once finished). For a reader driven by readiness callbacks
    (`stdio/_child.py`), where nothing may await."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        super().__init__(max_line, False)

    def feed(self, chunk: bytes) -> None:
        """Cut `chunk` (not empty) into the lines it completes."""
        self._split(chunk)

    def finish(self) -> None:
        """The stream ended: its last line, when it had no newline, becomes ready."""
        rest = self._end()
        if rest is not None:
            self._ready.append(rest)

    def next_line(self) -> bytes | None:
        """The next line ready (blank lines skipped), or `None`: none is ready (read on).

        Raises:
            LineTooLong: as `LineReader.next_line` (the next call goes on past it).
        """
        line = self._take()
        return None if line is _MORE else line  # type: ignore[return-value]


def chunk_size() -> int:
    """Bytes asked for per read."""
    return _CHUNK
