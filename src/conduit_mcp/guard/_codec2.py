"""mcp 2.x stream items <-> the plain JSON-RPC dicts the engine reads and writes.

Not a public module: `_streams` picks it when the installed `mcp` is 2.x. A stream item is
`mcp.shared.message.SessionMessage` whose `message` is one of `mcp.types.jsonrpc`'s four
models (request, notification, result response, error response).

Converting costs no copy: a JSON-RPC response's `result` and a request's `params` are plain
dicts inside the SDK's message models already; the engine reads them as they are.
"""

from __future__ import annotations

from typing import Any, Final

from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

#: Which SDK's messages this module reads (named in the guard's events).
SDK: Final = "mcp 2.x"


def to_plain(item: Any) -> dict[str, Any] | None:
    """The JSON-RPC dict the engine reads for a stream item.

    Args:
        item: what the SDK wrote or the transport delivered.

    Returns:
        `{"jsonrpc", "id", "method", "params"}` for a request, without `id` for a
        notification, `{"jsonrpc", "id", "result"}` or `{"jsonrpc", "id", "error"}` for a
        response; `None` for anything else (not a `SessionMessage`, or one whose `message`
        is none of the four JSON-RPC models): the seam refuses it.
    """
    if not isinstance(item, SessionMessage):
        return None
    message: Any = item.message
    if isinstance(message, JSONRPCResponse):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, JSONRPCRequest):
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "method": message.method,
            "params": message.params,
        }
    if isinstance(message, JSONRPCNotification):
        return {"jsonrpc": "2.0", "method": message.method, "params": message.params}
    if isinstance(message, JSONRPCError):
        error = message.error
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "error": {"code": error.code, "message": error.message, "data": error.data},
        }
    return None


def to_item(message: dict[str, Any]) -> SessionMessage:
    """The stream item for a JSON-RPC dict the engine wrote (a response, a request or a
    notification).

    Raises:
        KeyError, pydantic.ValidationError: `message` is not a JSON-RPC message the SDK's
            models take (the seam catches both).
    """
    if "error" in message:
        error = message["error"]
        return SessionMessage(
            JSONRPCError(
                jsonrpc="2.0",
                id=message["id"],
                error=ErrorData(
                    code=error["code"], message=error["message"], data=error.get("data")
                ),
            )
        )
    if "result" in message:
        return SessionMessage(
            JSONRPCResponse(jsonrpc="2.0", id=message["id"], result=message["result"])
        )
    if "id" not in message:  # no `params` key at all when absent: `null` is not valid JSON-RPC
        if message.get("params") is None:
            return SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=message["method"]))
        return SessionMessage(
            JSONRPCNotification(jsonrpc="2.0", method=message["method"], params=message["params"])
        )
    return SessionMessage(
        JSONRPCRequest(
            jsonrpc="2.0", id=message["id"], method=message["method"], params=message.get("params")
        )
    )
