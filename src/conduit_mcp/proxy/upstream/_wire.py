"""A JSON-RPC message read from an upstream's answer, or written for one: parsed as the guard
reads it, written compactly, and matched to the request it answers.

Not a public module. Shared by the session client (`_session`) and the stateless POSTs
(`_direct`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from .._message import _is_message, read_message


def answer_to(message: dict[str, Any], request_id: Any) -> dict[str, Any] | None:
    """`message` as the answer to `request_id`, or `None` when it names another request. An
    id written as a string for an integer one (or the other way) is the same request (a
    server's sloppiness); an error with a null id answers the request it was sent for (the
    server could not read its id)."""
    if "method" in message:
        return None
    answered = message.get("id")
    if answered == request_id and type(answered) is type(request_id):
        return message
    if answered is None and "error" in message:
        return {**message, "id": request_id}
    if isinstance(answered, str | int) and str(answered) == str(request_id):
        return {**message, "id": request_id}
    return None


def dump(message: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError:  # a lone surrogate, an integer past 64 bits
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode()


def parse(data: bytes | bytearray) -> dict[str, Any] | None:
    """One JSON-RPC message as the guard reads it (`_message.read_message`'s reading, without
    its copy of the bytes to relay), or `None`."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    if value is not None and _is_message(value):
        return value  # type: ignore[no-any-return]
    if value is not None and (type(value) is not dict or value.get("jsonrpc") != "2.0"):
        return None  # JSON, but no reading of it is a JSON-RPC 2.0 message: junk, cheaply
    del value
    parsed = read_message(data)  # type: ignore[arg-type]
    return parsed[0] if parsed is not None else None
