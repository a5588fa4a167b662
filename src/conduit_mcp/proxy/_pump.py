"""Server -> client: every message the guard lets through, in order, refusals made actionable.

Not a public module. Shared by the stdio proxy with an HTTP upstream (`stdio/`) and by each
session of the HTTP listener (`listen/`): both hand the SDK's streams through `GuardSeam.wrap`.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from ._seam import GuardSeam

logger = logging.getLogger("conduit_mcp.proxy")


async def pump(
    guarded_read: Any, sink: MemoryObjectSendStream[SessionMessage], seam: GuardSeam
) -> None:
    """Move messages from the guarded read stream to `sink` until the server's output ends.

    Args:
        guarded_read: the read side `GuardSeam.wrap` returned.
        sink: where messages for the client go.
        seam: explains refusals (`GuardSeam.explain`).
    """
    while True:
        try:
            item = await guarded_read.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        if isinstance(item, Exception):
            logger.warning("server message unreadable: %s: dropped", type(item).__name__)
            continue
        await sink.send(seam.explain(item))
