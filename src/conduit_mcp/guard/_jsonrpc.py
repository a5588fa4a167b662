"""JSON-RPC messages the guard writes for the SDK, and the codes it uses.

Not a public module; the codes are public API (exported from `conduit_mcp.guard`). Messages
are plain JSON-RPC 2.0 dicts: each seam turns them into its SDK's message type.
"""

from __future__ import annotations

from typing import Any, Final

from ..client import PathItem, render_path

#: A refused `tools/call` (unknown, rejected, blocked or held tool; invalid arguments): JSON-RPC
#: "Invalid params", the code the spec uses for an unknown tool and invalid arguments
#: (2026-07-28 server/tools "Error Handling", "Protocol Errors").
REFUSED_CALL_CODE: Final = -32602
#: A response the client side cannot use (a `tools/call` result that is not a tool result, an
#: unreadable `tools/list` result), or a request the guard cannot take on (too many in flight):
#: JSON-RPC "Internal error".
INVALID_RESULT_CODE: Final = -32603
#: A request reusing the id of one still awaiting its response: JSON-RPC "Invalid Request"
#: (MCP basic "Requests": the id MUST NOT have been used before in the same session).
INVALID_REQUEST_CODE: Final = -32600
#: The `_meta` key of a `tools/call` result under which the guard says what it changed (see
#: `_modeltext`, which exports it); a result the guard withholds says why under `"result_withheld"`.
RESULT_META_KEY: Final = "conduit-mcp/guard"
#: `data.source` of every error response the guard writes.
SOURCE: Final = "conduit-mcp.guard"


def error_response(
    request_id: Any,
    code: int,
    message: str,
    *,
    reason: str,
    tool: str | None,
    path: tuple[PathItem, ...],
) -> dict[str, Any]:
    """A JSON-RPC error response to `request_id`, with `data` = source, reason, tool, path."""
    data = {"source": SOURCE, "reason": reason, "tool": tool, "path": render_path(path)}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message, "data": data},
    }


def result_response(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC result response carrying `result` (a plain dict, handed over)."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def withheld_result(why: str, *, result_type: bool, reason: str) -> dict[str, Any]:
    """The `tools/call` result the SDK receives in place of invalid structured output: `why`
    as its text, `isError`, and `_meta[RESULT_META_KEY]` `{"result_withheld": reason}` (the guard's
    reason code; a server's own value under that key never reaches the client).

    `result_type`: add `"resultType": "complete"` (2026-07-28 on, where the SDK's model
    requires it; spec 2026-07-28 basic "ResultType").
    """
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": why}],
        "isError": True,
        "_meta": {RESULT_META_KEY: {"result_withheld": reason}},
    }
    if result_type:
        result["resultType"] = "complete"
    return result
