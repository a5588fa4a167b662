"""`--audit-calls`: each tools/call a caller makes, recorded in the pin store's call audit.

Not a public module. `CallAuditor.record` is called on the request's path and only queues a
`CallRecord` (who, which tool, when, the verdict and reason, the digest of the arguments:
never their values unless `keep_arguments`); a thread writes the queue in batches
(`PinStore.record_calls`, one transaction each), so a slow database never slows a call. The
queue is bounded: past `MAX_QUEUED` records waiting, a record is dropped and counted, and the
count is logged once per batch written (the audit says what it missed).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any, Final

from ..client import Error, canonical_json
from ..pins import CallRecord, PinStore, arguments_digest

logger = logging.getLogger("conduit_mcp.proxy")

#: Records waiting to be written, at most.
MAX_QUEUED: Final = 10_000
#: Records per transaction, at most.
BATCH: Final = 500


class CallAuditor:
    """Records calls into `store` from a writer thread (see the module docstring).

    Args:
        store: an open `PinStore` (the proxy's own connection is not shared: pass one opened
            for the auditor).
        server_id: the operator-assigned server id.
        keep_arguments: keep the arguments' canonical JSON text too (the operator asked).
        interval: seconds between writes when the queue is not full.
    """

    def __init__(
        self,
        store: PinStore,
        server_id: str,
        *,
        keep_arguments: bool = False,
        interval: float = 0.2,
    ) -> None:
        self._store = store
        self._server_id = server_id
        self._keep = keep_arguments
        self._interval = interval
        self._queue: deque[CallRecord] = deque()
        self._dropped = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="conduit-mcp call audit", daemon=True
        )
        self._thread.start()

    def record(
        self,
        message: Any,
        *,
        subject: str | None,
        groups: frozenset[str] | tuple[str, ...],
        verdict: str,
        reason: str | None = None,
    ) -> None:
        """Queue the record of one `tools/call` request `message` (a dict); anything else is
        ignored."""
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        name = params.get("name")
        arguments = params.get("arguments")
        try:
            digest = arguments_digest(arguments)
            kept = canonical_json(arguments or {}).decode() if self._keep else None
        except Error:  # not JSON the digest can be taken of (a refused call's, say)
            digest, kept = "sha256:unreadable", None
        request_id = message.get("id")
        record = CallRecord(
            0,
            time.time(),
            self._server_id,
            _storable(name if isinstance(name, str) else repr(name)[:200]),
            None if subject is None else _storable(subject),
            tuple(sorted(_storable(g) for g in groups)),
            verdict,
            None if reason is None else _storable(reason),
            digest,
            kept,
            None if request_id is None else _storable(str(request_id)[:64]),
        )
        if len(self._queue) >= MAX_QUEUED:
            self._dropped += 1
            return
        self._queue.append(record)
        if len(self._queue) >= BATCH:
            self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._interval)
            self._wake.clear()
            self._flush()
        self._flush()

    def _flush(self) -> None:
        while self._queue:
            batch = [self._queue.popleft() for _ in range(min(BATCH, len(self._queue)))]
            try:
                self._store.record_calls(batch)
            except Exception:  # the database: the records are lost, and said so
                logger.exception("call audit: %d records could not be written", len(batch))
                return
        if self._dropped:
            dropped, self._dropped = self._dropped, 0
            logger.error("call audit: %d records dropped (the queue was full)", dropped)

    def close(self) -> None:
        """Write what is queued and stop. Idempotent."""
        self._stop.set()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(30)


def _storable(text: str) -> str:
    """`text`, with a lone surrogate (not Unicode: no database stores it) written as its
    `\\udXXX` escape: one such string never costs the batch it is written in."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
