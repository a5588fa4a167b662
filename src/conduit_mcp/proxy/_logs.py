"""The proxy's logs: stderr (text) or a file (one JSON object per line). Never stdout, which
carries protocol bytes only, and never a credential (no header value is logged).

Not a public module.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, Final

_LOGGERS: Final = ("conduit_mcp.proxy", "conduit_mcp.guard")


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


def configure(log_file: Path | None, level: int = logging.INFO) -> logging.Handler:
    """Send the proxy's and the guard's records to `log_file` (JSON lines, appended) or to
    stderr (text lines prefixed `conduit-mcp proxy:`); returns the handler installed."""
    handler: logging.Handler
    if log_file is not None:
        handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setFormatter(JsonLines())
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("conduit-mcp proxy: %(levelname)s %(message)s"))
    for name in _LOGGERS:
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.setLevel(level)
        log.propagate = False
    return handler
