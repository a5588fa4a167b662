"""An incremental Server-Sent Events parser (the `text/event-stream` format).

Written here rather than built on `httpx.Response.iter_lines`, because that splits lines like
`str.splitlines` (on U+2028, U+0085, VT, FF, ...), while an event stream ends lines only at CRLF,
LF or CR, and a JSON string in a `data:` line may hold a raw U+2028.

Spec: WHATWG HTML "Server-sent events", section 9.2.5 "Parsing an event stream" and 9.2.6
"Interpreting an event stream"; MCP 2026-07-28 basic/transports/streamable-http "Receiving
Messages" (clients MUST support SSE responses; comment lines MUST be ignored).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Final

# "end-of-line = ( cr lf / cr / lf )" (WHATWG 9.2.5): nothing else ends a line.
_EOL: Final = re.compile(r"\r\n|\r|\n")
_DIGITS: Final = re.compile(r"[0-9]+\Z")
_BOM: Final = "\ufeff"


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event.

    Attributes:
        event: the event type (`"message"` when the stream named none).
        data: the data lines joined by LF (the final LF removed).
        last_event_id: the last event ID buffer at dispatch time (`""` when none was set).
    """

    event: str
    data: str
    last_event_id: str


class SseParser:
    """Turn chunks of an event stream into events, whatever the chunk boundaries.

    Feed bytes as they arrive (`feed`); each call returns the events completed by that chunk.
    Bytes are decoded as UTF-8 with replacement (WHATWG 9.2.5: "decoded using UTF-8 decode"),
    so a multi-byte character split across chunks is kept whole, and a CR at the end of one
    chunk followed by an LF at the start of the next counts as one line end.

    Attributes:
        retry_ms: the last valid `retry:` value in milliseconds, or `None`.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # the text of an unfinished line
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF is its pair
        self._started = False  # a leading BOM is dropped once, at the start of the stream
        self._data: list[str] = []
        self._event_type = ""
        self._last_event_id = ""
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse one chunk.

        Args:
            chunk: the next bytes of the stream (any length, any boundary).

        Returns:
            The events dispatched by the lines this chunk completed, in order.
        """
        text = self._decoder.decode(chunk)
        return self._lines(text)

    def close(self) -> list[SseEvent]:
        """End the stream.

        Returns:
            The events completed by flushing the decoder. An event whose blank line never came
            is discarded ("Once the end of the file is reached, any pending data must be
            discarded", WHATWG 9.2.6).
        """
        events = self._lines(self._decoder.decode(b"", final=True))
        self._pending = ""
        self._data = []
        self._event_type = ""
        return events

    def _lines(self, text: str) -> list[SseEvent]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        events: list[SseEvent] = []
        start = 0
        for match in _EOL.finditer(text):
            line = self._pending + text[start : match.start()]
            self._pending = ""
            start = match.end()
            event = self._line(line)
            if event is not None:
                events.append(event)
        if start < len(text):
            self._pending += text[start:]
        elif text.endswith("\r"):
            # The CR ended a line; an LF at the start of the next chunk belongs to it.
            self._skip_lf = True
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":  # a comment (keep-alives are comments)
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\0" not in value:
                self._last_event_id = value
        elif field == "retry":
            if _DIGITS.match(value):
                self.retry_ms = int(value)
        # Any other field name is ignored.
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event_type = self._data, self._event_type
        self._data, self._event_type = [], ""
        if not data:  # "If the data buffer is an empty string, ... return"
            return None
        return SseEvent(event_type or "message", "\n".join(data), self._last_event_id)
