"""`conduit-mcp capture`: a server's `tools/list` pages as it sent them, with the negotiated
protocol version and the transport, in one JSON file the other commands read.

Private to the CLI. The handshake is the official MCP Python SDK's (`ClientSession` over its
`stdio_client` or `streamable_http_client`), so the version recorded is the one a real client
negotiates. Between the transport and the session two pumps hand every message on unchanged
and keep the raw `result` of each `tools/list` response (the JSON as the transport parsed it,
before any SDK model is built: the bytes a guard at the same place sees, so fingerprints agree).
Pagination follows the raw `nextCursor`, so a page the SDK's own model refuses is still kept.

The file (`CAPTURE_FORMAT`):

    {"format": "conduit-mcp/capture", "version": 1,
     "protocol_version": "2025-11-25", "transport": "stdio",
     "server": {"command": [...]} | {"url": "...", "headers": [<names>]},
     "server_info": <initialize result's serverInfo, as sent> | null,
     "captured_at": "2026-12-01T11:00:00Z",
     "pages": [<tools/list result>, ...]}

Spec: 2025-11-25 basic/lifecycle (initialization, version negotiation), server/tools
"Listing Tools" and utilities/pagination (an opaque `nextCursor`; its absence ends the list).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

#: The value of `format` that marks a capture file.
CAPTURE_FORMAT: Final = "conduit-mcp/capture"

#: The file layout's version; a reader refuses a newer one.
CAPTURE_VERSION: Final = 1

#: At most this many characters of a server's error message are repeated to the operator.
_SAID_CHARS: Final = 200

#: At most this many pages are requested (a server whose cursors never end is stopped).
MAX_PAGES: Final = 1000


class CaptureError(Exception):
    """The capture could not be completed; the message is one line for the operator."""


def is_capture(value: object) -> bool:
    """Whether a parsed JSON document is a capture file (its `format` is `CAPTURE_FORMAT`)."""
    return isinstance(value, dict) and value.get("format") == CAPTURE_FORMAT


def read_capture(value: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    """The listing, protocol version and transport recorded in a capture file.

    Args:
        value: a parsed capture file (`is_capture(value)` holds).

    Returns:
        `(page, protocol_version, transport)`: `page` is one `tools/list` result holding the
        tools of every page in server order (`nextCursor` of the last page kept), so a name
        repeated across pages is caught as a duplicate.

    Raises:
        CaptureError: a newer layout, a member missing or of the wrong type.
    """
    if value.get("version") != CAPTURE_VERSION:
        raise CaptureError(f"capture layout version {value.get('version')!r} is not 1")
    version, transport, pages = (
        value.get("protocol_version"),
        value.get("transport"),
        value.get("pages"),
    )
    if not isinstance(version, str) or not isinstance(transport, str):
        raise CaptureError("protocol_version and transport must be strings")
    if not isinstance(pages, list) or not all(isinstance(p, dict) for p in pages):
        raise CaptureError("pages must be a list of tools/list results")
    tools: list[Any] = []
    for index, page in enumerate(pages):
        listed = page.get("tools")
        if not isinstance(listed, list):
            raise CaptureError(f"pages[{index}] has no tools array")
        tools.extend(listed)
    merged: dict[str, Any] = {"tools": tools}
    if pages and "nextCursor" in pages[-1]:
        merged["nextCursor"] = pages[-1]["nextCursor"]
    return merged, version, transport


async def capture(
    open_transport: Callable[[], AbstractAsyncContextManager[tuple[Any, Any]]],
    *,
    transport: str,
    server: dict[str, Any],
) -> dict[str, Any]:
    """Run the handshake and every `tools/list` page through the SDK; return the capture file.

    Args:
        open_transport: makes the SDK transport (`stdio_client(...)` or
            `streamable_http_client(...)`), an async context manager of the stream pair.
        transport: `"stdio"` or `"streamable-http"`, recorded as given.
        server: what was run or reached (`{"command": [...]}` or `{"url": ..., "headers":
            [...]}`: header names only), recorded.

    Returns:
        The capture file as a dict (layout in the module docstring).

    Raises:
        CaptureError: the server answered `initialize` or `tools/list` with an error, sent no
            `tools/list` result, repeated a cursor, or needed more than `MAX_PAGES` pages.
        Exception: whatever the SDK's transport raises (a server that cannot start, an
            unreachable URL); the caller reports it as one line.
    """
    import anyio
    from mcp import ClientSession
    from mcp.shared.dispatcher import coerce_request_id
    from mcp.shared.exceptions import MCPError
    from mcp.types import PaginatedRequestParams
    from mcp.types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

    listing_ids: set[Any] = set()
    handshake_ids: set[Any] = set()
    handshake: list[dict[str, Any]] = []
    pages: list[dict[str, Any]] = []
    refusals: list[str] = []

    async def pump_out(source: Any, sink: Any) -> None:
        async with source:
            async for item in source:
                message = getattr(item, "message", None)
                if isinstance(message, JSONRPCRequest) and message.method == "tools/list":
                    listing_ids.add(coerce_request_id(message.id))
                elif isinstance(message, JSONRPCRequest) and message.method == "initialize":
                    handshake_ids.add(coerce_request_id(message.id))
                await sink.send(item)

    async def pump_in(source: Any, sink: Any) -> None:
        async with sink:
            async for item in source:
                message = getattr(item, "message", None)
                if isinstance(message, (JSONRPCResponse, JSONRPCError)) and message.id is not None:
                    key = coerce_request_id(message.id)
                    if key in handshake_ids and isinstance(message, JSONRPCResponse):
                        handshake.append(message.result)
                    if key in listing_ids:
                        if isinstance(message, JSONRPCResponse):
                            pages.append(message.result)
                        else:
                            said = str(message.error.message)[:_SAID_CHARS]
                            refusals.append(f"{message.error.code} {said}")
                await sink.send(item)

    async with open_transport() as (read, write), anyio.create_task_group() as tasks:
        to_session, session_read = anyio.create_memory_object_stream[Any](16)
        session_write, from_session = anyio.create_memory_object_stream[Any](16)
        tasks.start_soon(pump_in, read, to_session)
        tasks.start_soon(pump_out, from_session, write)
        async with ClientSession(session_read, session_write) as session:
            try:
                initialized = await session.initialize()
            except MCPError as exc:
                said = str(exc)[:_SAID_CHARS]
                raise CaptureError(f"initialize failed: {exc.error.code} {said}") from None
            version = session.protocol_version or initialized.protocol_version
            seen: set[str] = set()
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                before = len(pages)
                params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
                try:
                    await session.list_tools(params=params)
                except Exception:
                    # The server's error response (MCPError), or the SDK's model refusing a
                    # page that was kept raw: either way the raw message decides, below.
                    pass
                if refusals:
                    raise CaptureError(f"tools/list failed: {refusals[-1]}")
                if len(pages) == before:
                    raise CaptureError("the server sent no tools/list result")
                next_cursor = pages[-1].get("nextCursor")
                if not isinstance(next_cursor, str):
                    break  # absent: the last page; not a string: kept in the page, not followed
                if next_cursor in seen:
                    raise CaptureError("the server repeated a nextCursor: stopped to avoid a loop")
                seen.add(next_cursor)
                cursor = next_cursor
            else:
                raise CaptureError(f"more than {MAX_PAGES} tools/list pages: stopped")
        tasks.cancel_scope.cancel()
    return {
        "format": CAPTURE_FORMAT,
        "version": CAPTURE_VERSION,
        "protocol_version": version,
        "transport": transport,
        "server": server,
        "server_info": handshake[-1].get("serverInfo") if handshake else None,
        "captured_at": datetime.datetime.now(datetime.timezone.utc)
        .replace(microsecond=0)
        .isoformat()
        .replace("+00:00", "Z"),
        "pages": pages,
    }
