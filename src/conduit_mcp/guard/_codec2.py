"""mcp 2.x stream items <-> the plain JSON-RPC dicts the engine reads and writes.

Not a public module: `_streams` picks it when the installed `mcp` is 2.x. A stream item is
`mcp.shared.message.SessionMessage` whose `message` is one of `mcp.types.jsonrpc`'s four
models (request, notification, result response, error response).

Converting costs no copy: a JSON-RPC response's `result` and a request's `params` are plain
dicts inside the SDK's message models already; the engine reads them as they are.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Final

from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from ._jsonrpc_models import model_of, plain_of

#: Which SDK's messages this module reads (named in the guard's events).
SDK: Final = "mcp 2.x"
_MODELS: Any = SimpleNamespace(
    ErrorData=ErrorData,
    JSONRPCError=JSONRPCError,
    JSONRPCNotification=JSONRPCNotification,
    JSONRPCRequest=JSONRPCRequest,
    JSONRPCResponse=JSONRPCResponse,
)


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
    return plain_of(item.message, _MODELS)


def to_item(message: dict[str, Any]) -> SessionMessage:
    """The stream item for a JSON-RPC dict the engine wrote (a response, a request or a
    notification).

    Raises:
        KeyError, pydantic.ValidationError: `message` is not a JSON-RPC message the SDK's
            models take (the seam catches both).
    """
    return SessionMessage(model_of(message, _MODELS))
