"""mcp 1.x stream items <-> the plain JSON-RPC dicts the engine reads and writes.

Not a public module: `_streams` picks it when the installed `mcp` is 1.x (>= 1.24, the floor
of langchain-mcp-adapters and mcp-use; read against 1.24.0 and 1.30.0, whose message models
are the same). A stream item is `mcp.shared.message.SessionMessage` whose `message` is
`mcp.types.JSONRPCMessage`, a pydantic `RootModel` whose `root` is one of
`JSONRPCRequest`, `JSONRPCNotification`, `JSONRPCResponse`, `JSONRPCError`; the SDK's
`BaseSession._receive_loop` dispatches on the type of `message.message.root`, so the engine
sees exactly the message the SDK acts on. Like 2.x, `result` and `params` are plain dicts
inside those models: no copy.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

from mcp.shared.message import SessionMessage
from pydantic import RootModel

from ._jsonrpc_models import model_of, plain_of

# mcp 1.x's `mcp.types` is one module; type checkers see the installed 2.x package instead,
# whose `JSONRPCMessage` is a plain union: the names are looked up at run time.
_types: Any = importlib.import_module("mcp.types")
_message: Any = getattr(_types, "JSONRPCMessage", None)
#: Whether the installed `mcp` is 1.x (its `JSONRPCMessage` is a `RootModel`; mcp 2.x's is a
#: plain union). Otherwise no item is recognised (every one refused) and none can be built.
MCP1: Final = isinstance(_message, type) and issubclass(_message, RootModel)
JSONRPCMessage: Any = _message if MCP1 else type("NotMcp1Message", (), {})
ErrorData: Any = _types.ErrorData
JSONRPCError: Any = _types.JSONRPCError
JSONRPCNotification: Any = _types.JSONRPCNotification
JSONRPCRequest: Any = _types.JSONRPCRequest
JSONRPCResponse: Any = _types.JSONRPCResponse

#: Which SDK's messages this module reads (named in the guard's events).
SDK: Final = "mcp 1.x"


def to_plain(item: Any) -> dict[str, Any] | None:
    """The JSON-RPC dict the engine reads for a stream item.

    Args:
        item: what the SDK wrote or the transport delivered.

    Returns:
        `{"jsonrpc", "id", "method", "params"}` for a request, without `id` for a
        notification, `{"jsonrpc", "id", "result"}` or `{"jsonrpc", "id", "error"}` for a
        response; `None` for anything else (not a `SessionMessage`, a `message` that is not a
        `JSONRPCMessage`, or a root that is none of its four models): the seam refuses it.
    """
    if not isinstance(item, SessionMessage):
        return None
    wrapper: Any = item.message
    if not isinstance(wrapper, JSONRPCMessage):
        return None
    return plain_of(wrapper.root, _types)


def to_item(message: dict[str, Any]) -> SessionMessage:
    """The stream item for a JSON-RPC dict the engine wrote (a response, a request or a
    notification).

    Raises:
        KeyError, pydantic.ValidationError: `message` is not a JSON-RPC message the SDK's
            models take (the seam catches both).
    """
    return SessionMessage(JSONRPCMessage(model_of(message, _types)))
