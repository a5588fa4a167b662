"""JSON-RPC messages read and written exactly: one message of bytes as the guard and the SDK
read it, and a message as bytes every client reads as one line.

Not a public module. The stdio relay (`stdio/`), the HTTP listener's stateless router
(`listen/`) and the direct HTTP upstream (`upstream/`) all read messages here; cutting a stream
into lines is the stdio room's (`stdio/_framing.py`). Spec: MCP 2025-11-25 basic/transports
"stdio" (messages are delimited by newlines and MUST NOT contain embedded newlines; UTF-8) and
JSON-RPC 2.0.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

import orjson

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

# The SDK (`mcp`) is imported by the functions that make or read its `SessionMessage`, not
# here: the stdio relay to a child server reads and writes plain messages only, and `import
# mcp` loads the SDK's client and server whole (most of the proxy's start-up time).

#: JSON-RPC 2.0 section 5.1 error codes.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600


def decode(line: bytes) -> SessionMessage | Exception:
    """One line as the SDK reads it: UTF-8 (bad bytes replaced), then a JSON-RPC message.

    Returns:
        A `SessionMessage`, or the validation error (never raises).
    """
    sdk = _sdk or _load_sdk()
    try:
        text = line.decode("utf-8", "replace")
        message = sdk[1].validate_json(text, by_name=False)
        if isinstance(message, sdk[2]) and null_id_request(json.loads(text)):
            return ValueError("a request whose id is null")
        return sdk[0](message)
    except Exception as exc:  # pydantic.ValidationError, recursion limits
        return exc


#: `(SessionMessage, jsonrpc_message_adapter, JSONRPCNotification)` once `_load_sdk` ran.
_sdk: tuple[type[SessionMessage], Any, Any] | None = None


def _load_sdk() -> tuple[type[SessionMessage], Any, Any]:
    """What `decode` uses of the SDK, imported on its first line and kept (an import statement
    in a function runs on every call)."""
    global _sdk
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCNotification, jsonrpc_message_adapter

    _sdk = (SessionMessage, jsonrpc_message_adapter, JSONRPCNotification)
    return _sdk


def encode(item: SessionMessage) -> bytes:
    """One message as a line (`model_dump_json(by_alias=True, exclude_unset=True)`, as the
    SDK writes it), newline included; with JSON's ASCII escapes instead when a string holds
    a raw NEL, LS or PS (one line to every client, as `read_message`).

    Raises:
        pydantic_core.PydanticSerializationError: a string the JSON encoder cannot write.
    """
    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
    data = text.encode("utf-8", "surrogatepass") + b"\n"
    if _breaks_a_line(data):  # a raw NEL, LS or PS from a string: written escaped
        return json.dumps(json.loads(text), separators=(",", ":")).encode("ascii") + b"\n"
    return data


#: Bytes that end a line for some clients inside what JSON reads as one line: CR (white space to
#: JSON; a line end to Node's `readline` and Python's universal newlines) and NEL, LS, PS (raw in
#: a JSON string; line ends to Python's `str.splitlines`). A message holding one is sent escaped,
#: so no client reads a second message, unchecked, out of its pieces.
_LINE_BREAKS: Final = (b"\r", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85")
#: `_LINE_BREAKS` past ASCII (NEL, LS, PS), found in one scan. Searched for, never tested with
#: `mark in data`: CPython's `bytes.__contains__` first reads its argument as an integer and
#: formats a TypeError for a bytes one (~1,800 instructions, four marks a message).
_WIDE_BREAK: Final = re.compile(b"\xe2\x80[\xa8\xa9]|\xc2\x85")


def _breaks_a_line(data: bytes) -> bool:
    """Whether compact JSON written by an encoder (CR always escaped) holds a raw NEL, LS or
    PS, which some clients end a line at."""
    return not data.isascii() and _WIDE_BREAK.search(data) is not None


def read_message(line: bytes) -> tuple[dict[str, Any], bytes] | None:
    """One line as the guard reads it, parsed once: `(message, bytes to send when the guard
    lets it pass)`, or `None` when the line is not a JSON-RPC message the SDK would read
    (answer or drop it as `decode` failing).

    Most senders write compact JSON (the TypeScript SDK's `JSON.stringify`, the Python SDK's
    pydantic): the line is parsed with orjson and, when orjson writes the parsed value back
    byte for byte, passed as read. Otherwise (white space, escapes: Python's `json.dumps`)
    it is still passed as read with orjson's reading when the colons show that no member was
    dropped and no integer can be past 64 bits (`_read`); failing either, it is
    parsed with the standard library, which keeps every number exact, and still passed as
    read unless an object names a member twice: parsers disagree on which one counts, so
    such a line, and any the SDK reads differently or not at all (not UTF-8, `NaN`, extra
    members, an `id` that is neither a string nor an integer), takes the SDK's own reading
    (`decode`) and is sent as the SDK writes it (`encode`). In every case the bytes sent are
    the message the guard read, and one line to every client: a message holding a byte some
    client ends a line at (`_LINE_BREAKS`: CR, NEL, LS, PS) is sent with JSON's ASCII escapes
    instead (`None` when it holds a number JSON cannot write back, `1e400`).

    Args:
        line: one line, with or without its newline.

    Returns:
        `(message, data)`: the JSON-RPC object as a `dict` (`id`, `method`, `params`,
        `result`, `error`) and the line to write (newline included); or `None`.
    """
    parsed = _read(line)
    if parsed is None:
        return None
    data = parsed[1]
    # `_LINE_BREAKS`: CR, then `_breaks_a_line` inline (two Python calls a round trip less)
    if data.find(b"\r") != -1 or (not data.isascii() and _WIDE_BREAK.search(data) is not None):
        return _escaped(parsed[0])
    return parsed


def _escaped(message: dict[str, Any]) -> tuple[dict[str, Any], bytes] | None:
    """`message` and its line with every character past ASCII escaped (`None`: an infinite
    float, read from a number past the float range)."""
    try:
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (TypeError, ValueError, RecursionError):
        return None
    return message, data + b"\n"


def _read(line: bytes) -> tuple[dict[str, Any], bytes] | None:
    """`read_message` before the line-break screen."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = None
    if value is not None and _is_message(value):
        try:
            canonical = orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:  # nested past orjson's writer (255 levels; reader 1,024)
            canonical = None  # the standard library decides
        if canonical is not None:
            if canonical == line:
                return value, line
            if line[-1:] != b"\n" and canonical[:-1] == line:
                return value, canonical
            # Same members: orjson's reading kept every member `line` names (no object names
            # one twice), told from the colons alone, two scans in C where the standard
            # library's second parse costs ~36k instructions a spaced line. Each member of an
            # object is one name-separator colon in either text; every other colon is inside
            # a string, and orjson writes a colon in a string as a colon. Without a `\u003a`
            # escape (the one spelling of a colon that is not one in `line`), each string
            # orjson kept holds as many colons in `canonical` as in `line`, so the counts are
            # equal exactly when no member, nor a string inside it, was dropped for a repeated
            # name; with such an escape anywhere the standard library decides.
            # No long digits: no integer orjson reads as a float (outside [-2**63, 2**64): a
            # run of 20 digits, or '-' and 19), strings included (conservative), as the
            # client's `parse_json` screens a text: one translation and two searches (`find`:
            # CPython 3.11's `bytes in bytes` formats a TypeError first).
            # Inline, not helpers: a spaced line costs these scans, not Python calls too.
            if line.find(b"\\u003") == -1 and line.count(b":") == canonical.count(b":"):
                masked = line.translate(_DIGIT_MASK)
                if masked.find(_NEGATIVE_RUN) == -1 and masked.find(_POSITIVE_RUN) == -1:
                    return value, line if line[-1:] == b"\n" else bytes(line) + b"\n"
        del canonical
        value = None  # freed before the second parse: a large message is held once at a time
    try:
        value = _EXACT.decode(line.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, NaN, a duplicated member
        value = None
    if value is not None and _is_message(value):
        return value, line if line[-1:] == b"\n" else bytes(line) + b"\n"
    if value is not None and null_id_request(value):
        return None  # never a notification with its id dropped, as the SDK's models read it
    item = decode(line)
    if isinstance(item, Exception):
        return None
    message = item.message.model_dump(by_alias=True, exclude_unset=True)
    if _escaped(message) is None:  # `1e400` read as infinity: the SDK would write `null`
        return None
    return message, encode(item)


#: For `_read`'s long-digit screen: each ASCII digit as "0", '-' kept, every other byte a space.
_DIGIT_MASK: Final = bytes(
    0x30 if 0x30 <= byte <= 0x39 else byte if byte == 0x2D else 0x20 for byte in range(256)
)


#: In `line.translate(_DIGIT_MASK)`: a run of 19 digits after '-', or of 20.
_NEGATIVE_RUN: Final = b"-" + b"0" * 19
_POSITIVE_RUN: Final = b"0" * 20


def dump_message(message: dict[str, Any]) -> bytes:
    """A message the proxy writes itself (a guard's replacement or answer) as one line to
    every client: with JSON's ASCII escapes when a string holds a NEL, LS or PS.

    Raises:
        TypeError, ValueError: a value JSON cannot hold.
    """
    try:
        data = orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:  # a lone surrogate read from a \\ud800 escape: escaped again
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    if _breaks_a_line(data):  # one line to every client, as `read_message` sends (NEL, LS, PS)
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    return data


def _is_message(value: Any) -> bool:
    """Whether `value` is a JSON-RPC 2.0 message exactly as the SDK's models read it, with no
    member they would ignore (so the dict the guard reads is the message the SDK would
    build): a request, notification, response or error response."""
    if type(value) is not dict or value.get("jsonrpc") != "2.0":
        return False
    size = len(value)
    if "method" in value:
        if type(value["method"]) is not str:
            return False
        if "params" in value:
            if type(value["params"]) is not dict:
                return False
            size -= 1
        if "id" in value:
            if type(value["id"]) not in _ID_TYPES:
                return False
            size -= 1
        return size == 2
    if size != 3 or "id" not in value:
        return False
    request_id = value["id"]
    if "result" in value:
        return type(request_id) in _ID_TYPES and type(value["result"]) is dict
    error = value.get("error")
    return (
        (request_id is None or type(request_id) in _ID_TYPES)
        and type(error) is dict
        and type(error.get("code")) is int
        and type(error.get("message")) is str
        and len(error) - ("data" in error) == 2
    )


#: The types of a JSON-RPC id as the SDK reads it (`bool` is not `int` here: `type` is exact).
_ID_TYPES: Final = frozenset({int, str})


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("an object names a member twice")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: The standard library's parser, refusing what JSON (RFC 8259) and orjson refuse too.
_EXACT: Final = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def invalid_line_error(line: bytes) -> SessionMessage:
    """The JSON-RPC error response to a line that is not a message (JSON-RPC 2.0 section 5.1:
    -32700 for invalid JSON, -32600 for JSON that is not a valid request; `id` the request's
    when it can be read, else null)."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import ErrorData, JSONRPCError

    answer = invalid_line_answer(line)
    error = answer["error"]
    return SessionMessage(
        JSONRPCError(
            jsonrpc="2.0",
            id=answer["id"],
            error=ErrorData(code=error["code"], message=error["message"]),
        )
    )


def invalid_line_answer(line: bytes) -> dict[str, Any]:
    """`invalid_line_error` as a plain JSON-RPC message."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if null_id_request(value):
        return null_id_answer()
    rid = value.get("id") if isinstance(value, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        rid = None
    return _error(rid, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")


def null_id_request(value: Any) -> bool:
    """Whether `value` is a request whose `id` is null: JSON-RPC 2.0 allows it, MCP does not
    (2025-11-25 basic "Requests": the ID MUST NOT be null), and the SDK's models read it as a
    notification with the id dropped, so a proxy passing it on leaves its sender unanswered.
    It is answered `null_id_answer()` and never sent on."""
    return type(value) is dict and "method" in value and "id" in value and value["id"] is None


def null_id_answer() -> dict[str, Any]:
    """The answer to a request whose id is null (JSON-RPC 2.0 section 5: -32600 Invalid
    Request, `id` null as the request's own)."""
    return _error(
        None,
        INVALID_REQUEST,
        "Invalid Request: a request's id must be a string or an integer, not null",
    )


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
