"""The proxy's logs: stderr (text) or a file (one JSON object per line). Never stdout, which
carries protocol bytes only, and never a credential (no header value is logged).

Not a public module.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Final

_LOGGERS: Final = ("conduit_mcp.proxy", "conduit_mcp.guard")
#: seconds during which a refusal like one just shown (same reason, same tool) is not shown again
REPEAT_WINDOW: Final = 60.0
#: (reason, tool) keys remembered: the least recently seen goes first
REPEAT_KEYS: Final = 256


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, RFC 3339), level, logger, message, and for a
    guard decision its event fields (kind, tool, reason, decision, path, server_id)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        event = getattr(record, "guard_event", None)
        if event is not None:
            entry["event"] = {
                "kind": event.kind,
                "tool": event.tool,
                "reason": event.reason,
                "decision": event.decision,
                "path": event.json_path,
                "server_id": event.server_id,
            }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class RepeatLimit(logging.Filter):
    """At most one `call_refused` record per (reason, tool) in `window` seconds (by the
    record's `created` time); the next one shown says how many were left out. Other records
    pass. Memory: `keys` entries, the least recently seen dropped first (a tool name is cut at
    200 characters in its key)."""

    def __init__(self, window: float = REPEAT_WINDOW, keys: int = REPEAT_KEYS) -> None:
        super().__init__()
        self._window = window
        self._keys = keys
        self._seen: OrderedDict[tuple[str, str | None], tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether `record` is shown; a record shown after others were left out gains
        "(N more like it in the last minute not shown)"."""
        event = getattr(record, "guard_event", None)
        if event is None or event.kind != "call_refused":
            return True
        tool = event.tool[:200] if isinstance(event.tool, str) else None
        key = (str(event.reason), tool)
        with self._lock:
            last = self._seen.get(key)
            if last is not None and 0 <= record.created - last[0] < self._window:
                self._seen[key] = (last[0], last[1] + 1)
                self._seen.move_to_end(key)
                return False
            self._seen[key] = (record.created, 0)
            self._seen.move_to_end(key)
            if len(self._seen) > self._keys:
                self._seen.popitem(last=False)
        if last is not None and last[1]:
            record.msg = f"{record.getMessage()} ({last[1]} more like it not shown)"
            record.args = None
        return True


def configure(log_file: Path | None, level: int = logging.INFO) -> logging.Handler:
    """Send the proxy's and the guard's records to `log_file` (JSON lines, appended: every
    record) or to stderr (text lines prefixed `conduit-mcp proxy:`, a refused call shown once
    per reason and tool a minute: `RepeatLimit`); returns the handler installed."""
    handler: logging.Handler
    if log_file is not None:
        handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setFormatter(JsonLines())
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("conduit-mcp proxy: %(levelname)s %(message)s"))
        handler.addFilter(RepeatLimit())
    for name in _LOGGERS:
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.setLevel(level)
        log.propagate = False
    return handler
