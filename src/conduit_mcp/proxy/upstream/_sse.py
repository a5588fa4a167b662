"""An event stream read as its body arrives: each event's `data` once it ends, in time linear in
the input and in memory bounded by the one event being read.

Not a public module. Shared by the session client (`_session`) and the stateless POSTs
(`_direct`).

Spec: WHATWG HTML "Server-sent events", "Interpreting an event stream": lines end with CRLF, LF
or CR; a line starting with `:` is a comment; `field: value` (one space after the colon
dropped); `data` lines of one event are joined with LF; a blank line ends the event; `id` sets
the last event id (not when it holds NUL), `retry` the reconnection time (ASCII digits only).
Liberal where servers are sloppy: an event the stream ends inside is still handed on (the spec
drops it), and the event type is not read (the SDK's client reads `message` events only, a
server naming its events otherwise is read alike).

What an upstream cannot make the proxy do:

- scan a byte more than three times: the next CR and the next LF are each searched for once,
  from where the last search stopped, whatever the line lengths, and a line's colon within
  that line (a stream of short lines cost quadratic time when each search ran to the end of
  what had arrived); a run of comments and fields the proxy does not read is passed over by
  one regular-expression scan, not line by line in Python;
- hold an event that cannot be a JSON-RPC message: data whose first character other than JSON
  white space is not `{` is counted and dropped as it arrives (`dropped_events`,
  `dropped_bytes`), and so are comments and other fields longer than `LINE_PEEK`; only the
  unfinished end of the current line is kept between pieces;
- keep memory after an event: the buffer gives back what a long line took as soon as the line
  is consumed (CPython's `bytearray` reallocates when it shrinks below half), and an event's
  data is handed on and not kept.
"""

from __future__ import annotations

import re
from typing import Final

#: The largest event data accepted (bytes); past it `EventTooLarge`.
MAX_EVENT: Final = 512 * 1024 * 1024
#: How much of an unfinished line is read before deciding whether it can be kept: past it a
#: comment, another field, or data that cannot start a JSON object is dropped as it arrives.
LINE_PEEK: Final = 64 * 1024
_LF: Final = 0x0A
_CR: Final = 0x0D
_BLANK: Final = b" \t\r\n"  # JSON white space
#: A line naming a field the proxy reads (`data`, `id`, `retry`), from its start.
_READ: Final = re.compile(rb"(?:data|id|retry)(?:[:\r\n]|\Z)")
#: Whole lines the proxy does not read (comments, other fields), one after another: no blank
#: line (it ends an event), no line of `_READ`'s, no CR last (it may start a CRLF).
_IGNORED: Final = re.compile(
    rb"(?:(?!(?:data|id|retry)(?:[:\r\n]|\Z))[^\r\n]+(?:\n|\r\n|\r(?!\Z)))+"
)


class EventTooLarge(ValueError):
    """An event's data passed `MAX_EVENT` bytes."""


class _Next:
    """Where the next occurrence of one byte is, remembered between searches so no byte is
    searched twice: `at` (an offset at or after the last query's start, or -1) and `clear`
    (no occurrence in the searched range up to this offset)."""

    __slots__ = ("at", "byte", "clear")

    def __init__(self, byte: int) -> None:
        self.byte = byte
        self.at = -1
        self.clear = 0

    def find(self, buffer: bytearray, start: int, limit: int) -> int:
        """The first occurrence in `buffer[start:limit]`, or -1 (`start` never decreases
        between calls, except by `shift`)."""
        if self.at >= start:
            return self.at if self.at < limit else -1
        begin = start if start > self.clear else self.clear
        if begin >= limit:
            return -1
        found = buffer.find(self.byte, begin, limit)
        if found == -1:
            self.at, self.clear = -1, limit
        else:
            self.at, self.clear = found, found
        return found

    def shift(self, removed: int) -> None:
        """`removed` bytes were cut from the front of the buffer."""
        self.at = self.at - removed if self.at >= removed else -1
        self.clear = self.clear - removed if self.clear > removed else 0


class EventReader:
    """Feed the body's pieces; get each event's data as it ends.

    Args:
        max_event: the largest event data accepted (bytes).

    Attributes:
        last_id: the last `id` field read (`None` before one).
        retry: the last `retry` field read, in milliseconds (`None` before one).
        dropped_events, dropped_bytes: events dropped as no JSON-RPC message, and their data
            bytes (counted across the stream).
    """

    __slots__ = (
        "_blank",
        "_buffer",
        "_cr",
        "_data",
        "_junk",
        "_kept",
        "_lf",
        "_max",
        "_skip",
        "dropped_bytes",
        "dropped_events",
        "last_id",
        "retry",
    )

    def __init__(self, max_event: int = MAX_EVENT) -> None:
        self._max = max_event
        self._buffer = bytearray()
        self._lf = _Next(_LF)
        self._cr = _Next(_CR)
        self._data: bytearray | None = None  # the current event's data (its lines joined)
        self._blank = True  # the current event's data holds JSON white space only, so far
        self._junk = False  # the current event's data cannot be a JSON-RPC message
        #: the unfinished line is being dropped as it arrives: `"junk"` (data of a junk
        #: event, counted) or `"other"` (a comment or another field)
        self._skip: str | None = None
        self._kept = False  # the unfinished line was looked at (`_peek`) and is kept
        self.last_id: str | None = None
        self.retry: int | None = None
        self.dropped_events = 0
        self.dropped_bytes = 0

    def feed(self, piece: bytes | bytearray) -> list[bytearray]:
        """The data of each event `piece` ends, in order (never empty data).

        Raises:
            EventTooLarge: an event's data passed `max_event` bytes.
        """
        buffer = self._buffer
        buffer += piece
        events: list[bytearray] = []
        start = 0
        size = len(buffer)
        while True:
            lf = self._lf.find(buffer, start, size)
            cr = self._cr.find(buffer, start, lf if lf != -1 else size)
            if cr != -1:
                if cr + 1 >= size:  # a CR last may be the first half of a CRLF
                    break
                end, after = cr, cr + 2 if buffer[cr + 1] == _LF else cr + 1
            elif lf != -1:
                end, after = lf, lf + 1
            else:
                break
            self._kept = False
            if self._skip is not None:
                self._skipped(end - start)
                self._skip = None
            else:
                event = self._line(buffer, start, end)
                if event is not None:
                    events.append(event)
                elif end > start and (buffer[start] == 0x3A or not _READ.match(buffer, start)):
                    # A comment or a field the proxy does not read: the whole lines of that
                    # kind after it go in one scan of the regular expression engine.
                    run = _IGNORED.match(buffer, after)
                    if run is not None:
                        after = run.end()
            start = after
        if self._skip is None and not self._kept and size - start > LINE_PEEK:
            self._peek(buffer, start, size)
            self._kept = self._skip is None
        if self._skip is not None and size - start > 1:
            # Dropped as it arrives: only the last byte is kept (a CR that may start a CRLF).
            self._skipped(size - 1 - start)
            start = size - 1
        if start:
            del buffer[:start]
            self._lf.shift(start)
            self._cr.shift(start)
        if len(buffer) > self._max + LINE_PEEK:
            raise EventTooLarge(f"an event is larger than {self._max} bytes")
        return events

    def close(self) -> bytearray | None:
        """The stream ended: the data of the event it ended inside, if any (an unfinished
        last line counts as a line)."""
        buffer = self._buffer
        if buffer and self._skip is None:
            end = len(buffer) - 1 if buffer[-1] in (_CR, _LF) else len(buffer)
            event = self._line(buffer, 0, end)
            if event is not None:
                return event
        self._buffer = bytearray()
        return self._line(bytearray(), 0, 0)  # a blank line: the event ends

    def _skipped(self, count: int) -> None:
        if self._skip == "junk":
            self.dropped_bytes += count

    def _peek(self, buffer: bytearray, start: int, size: int) -> None:
        """An unfinished line longer than `LINE_PEEK`: keep it only when it is data that can
        be (part of) a JSON-RPC message."""
        if buffer[start] == 0x3A or not buffer.startswith(b"data", start):  # comment, field
            self._skip = "other"
            return
        colon = start + 4
        if colon < size and buffer[colon] != 0x3A:
            self._skip = "other"  # `datax...`: another field's name
            return
        if self._junk or (self._blank and self._opens(buffer, colon + 1, size) is False):
            self._junk = True
            self._data = None
            self._skip = "junk"

    def _opens(self, buffer: bytearray, begin: int, end: int) -> bool | None:
        """How data `buffer[begin:end]` starts, after the current event's blank data so far:
        `True` a JSON object (the first byte other than white space is `{`), `None` white
        space alone (undecided), `False` anything else (no JSON-RPC message), white space
        past `LINE_PEEK` bytes included (no message is shaped so)."""
        stop = min(end, begin + LINE_PEEK)
        for index in range(begin, stop):
            byte = buffer[index]
            if byte not in _BLANK:
                return byte == 0x7B
        return None if stop == end else False

    def _line(self, buffer: bytearray, start: int, end: int) -> bytearray | None:
        """One whole line `buffer[start:end]`; the event's data when it ends the event."""
        if end == start:  # a blank line: the event ends
            data, self._data = self._data, None
            junk, self._junk = self._junk, False
            self._blank = True
            if junk:
                self.dropped_events += 1
                return None
            return data if data else None
        if buffer[start] == 0x3A:  # a comment
            return None
        colon = buffer.find(b":", start, end)
        name_end = end if colon == -1 else colon
        if name_end - start > 5:  # no field the proxy reads has a longer name
            return None
        begin = end if colon == -1 else colon + 1
        if begin < end and buffer[begin] == 0x20:
            begin += 1
        name = buffer[start:name_end]
        if name == b"data":
            self._add_data(buffer, begin, end)
        elif name == b"id":
            value = buffer[begin:end]
            if 0 not in value:
                self.last_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            value = buffer[begin:end]
            if value and value.isdigit():
                self.retry = int(value)
        return None

    def _add_data(self, buffer: bytearray, begin: int, end: int) -> None:
        if self._junk:
            self.dropped_bytes += end - begin
            return
        if self._blank and begin < end:
            opens = self._opens(buffer, begin, end)
            if opens is False:
                self._junk = True
                self.dropped_bytes += end - begin + (len(self._data) if self._data else 0)
                self._data = None
                return
            self._blank = opens is None
        data = self._data
        if data is None:
            data = self._data = buffer[begin:end]
        else:
            data += b"\n"
            data += buffer[begin:end]
        if len(data) > self._max:
            raise EventTooLarge(f"an event is larger than {self._max} bytes")
