"""The one mapping between an SDK's four JSON-RPC message models and the plain dicts the
engine reads and writes, for every SDK whose models have the same fields (mcp 1.x and 2.x:
`_codec1`, `_codec2` pass their own classes).

Not a public module. JSON-RPC 2.0 section 4 (request, notification: a request without `id`),
section 5 (response: `result` or `error`).
"""

from __future__ import annotations

from typing import Any, Protocol


class Models(Protocol):
    """An SDK's message classes (a module or a namespace holding these names)."""

    ErrorData: Any
    JSONRPCError: Any
    JSONRPCNotification: Any
    JSONRPCRequest: Any
    JSONRPCResponse: Any


def plain_of(message: Any, models: Models) -> dict[str, Any] | None:
    """The JSON-RPC dict for one of `models`' messages: `{"jsonrpc", "id", "method",
    "params"}` for a request, without `id` for a notification, `{"jsonrpc", "id", "result"}`
    or `{"jsonrpc", "id", "error"}` for a response; `None` for anything else. No copy: the
    `result` and `params` dicts are the model's own."""
    if isinstance(message, models.JSONRPCResponse):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, models.JSONRPCRequest):
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "method": message.method,
            "params": message.params,
        }
    if isinstance(message, models.JSONRPCNotification):
        return {"jsonrpc": "2.0", "method": message.method, "params": message.params}
    if isinstance(message, models.JSONRPCError):
        error = message.error
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "error": {"code": error.code, "message": error.message, "data": error.data},
        }
    return None


def model_of(message: dict[str, Any], models: Models) -> Any:
    """`models`' message for a JSON-RPC dict the engine wrote (a response, a request or a
    notification; a notification without `params` gets no `params` key: `null` is not valid
    JSON-RPC).

    Raises:
        KeyError, pydantic.ValidationError: `message` is not a JSON-RPC message the models take.
    """
    if "error" in message:
        error = message["error"]
        data = models.ErrorData(
            code=error["code"], message=error["message"], data=error.get("data")
        )
        return models.JSONRPCError(jsonrpc="2.0", id=message["id"], error=data)
    if "result" in message:
        return models.JSONRPCResponse(jsonrpc="2.0", id=message["id"], result=message["result"])
    if "id" not in message:
        if message.get("params") is None:
            return models.JSONRPCNotification(jsonrpc="2.0", method=message["method"])
        return models.JSONRPCNotification(
            jsonrpc="2.0", method=message["method"], params=message["params"]
        )
    return models.JSONRPCRequest(
        jsonrpc="2.0", id=message["id"], method=message["method"], params=message.get("params")
    )
