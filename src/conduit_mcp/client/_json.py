"""Parsing JSON bytes off the wire: orjson first, an exact iterative parser where it stops short."""

from __future__ import annotations

import json.decoder
import math
import re
import sys
from collections.abc import Callable
from typing import Any, Final

import orjson

from ._errors import Error, PathItem

#: The deepest nesting `parse_json` accepts, and its default: orjson's own limit (1,024 levels of
#: objects and arrays; `[[1]]` nests 2 deep). `max_depth` may lower it, not raise it. Real
#: tools/list pages nest a few dozen levels.
MAX_DEPTH: Final = 1024


# orjson reads an integer outside [-2**63, 2**64) as a float, silently losing digits; the
# standard library keeps it exact. A run of 20 digits, or a '-' and 19 digits, anywhere (strings
# included: conservative) sends the text to the standard library: u64's maximum has 20 digits,
# i64's minimum is '-' and 19. Found with one `bytes.translate` (ASCII digits -> "0", '-' kept,
# every other byte -> " ") and two substring searches: ~25x faster than a regex on a 1 MB page,
# same answer (in UTF-8, bytes 0x2D and 0x30-0x39 are only ever '-' and the ASCII digits).
_DIGIT_MASK: Final = bytes(
    0x30 if 0x30 <= byte <= 0x39 else byte if byte == 0x2D else 0x20 for byte in range(256)
)
_DIGIT_RUN: Final = b"0" * 20
_NEGATIVE_RUN: Final = b"-" + b"0" * 19


def _has_long_digits(data: bytes | bytearray | memoryview | str) -> bool:
    if isinstance(data, str):
        # surrogatepass: lone surrogates encode to bytes >= 0x80, never digits.
        data = data.encode("utf-8", "surrogatepass")
    elif isinstance(data, memoryview):
        data = bytes(data)
    masked = data.translate(_DIGIT_MASK)
    # find, not `in`: CPython 3.11's `bytes.__contains__` formats a TypeError first (~2,300
    # instructions a test)
    return masked.find(_NEGATIVE_RUN) != -1 or masked.find(_DIGIT_RUN) != -1


def parse_json(data: bytes | bytearray | memoryview | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON text exactly as RFC 8259 defines it.

    orjson parses (fast); where orjson would lose data — it reads integers beyond 64 bits as
    floats — an exact parser (iterative: no recursion at any depth) parses the same text, so
    `2**70` arrives exact. Both agree on every other input (tested): `NaN`, `Infinity`,
    numbers that overflow a double, lone surrogates (raw or escaped), a byte-order mark,
    trailing commas and trailing content are refused. Duplicate object keys: the last wins.

    Args:
        data: UTF-8 bytes (or `str`) of one JSON text.
        max_depth: the deepest nesting of objects and arrays accepted (`[[1]]` nests 2 deep):
            1 to `MAX_DEPTH` (1,024, the default and orjson's own ceiling). Lowering it protects
            the caller's own recursive code; below 1,024 a page with more than `max_depth`
            brackets costs one extra walk over the parsed value.

    Returns:
        The value: `dict`, `list`, `str`, `int`, `float`, `bool` or `None`.

    Raises:
        Error: kind `"protocol"`, reason `"invalid_json"`, path `()`, for text that is not
            JSON (malformed, invalid UTF-8, lone surrogates, NaN/Infinity, a number that
            overflows a double); the message names the character offset.
            Kind `"policy"`, reason `"limit_exceeded"`, when objects and arrays nest deeper than
            `max_depth` (path: to the first container too deep, `details["limit"]`), or an
            integer has more digits than the interpreter converts
            (`sys.get_int_max_str_digits()`, 4,300 by default; path to the number).
        TypeError: `data` is not bytes-like or `str`, or `max_depth` is not an `int` (caller
            bugs).
        ValueError: `max_depth` is outside 1..1024 (a caller bug).

    Total: never recurses in Python; time and memory linear in `len(data)` (the parsed value
    takes memory of the order of the text's: ~1x for long strings, ~10-20x for many small
    values). The exact parser runs only for texts holding a run of 20 digits (or `-` and 19),
    and to find the path of a depth error.

    Spec: RFC 8259 (section 9: a parser may limit nesting depth and the range of numbers).
    """
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
    if type(max_depth) is not int:
        raise TypeError(f"max_depth must be an int, got {type(max_depth).__name__}")
    if not 1 <= max_depth <= MAX_DEPTH:
        raise ValueError(f"max_depth must be between 1 and {MAX_DEPTH}, got {max_depth}")
    if _has_long_digits(data):
        return _parse_exact(_text(data), max_depth)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "depth limit" not in str(exc) and "recursion" not in str(exc):
            raise Error("protocol", "invalid_json", f"not valid JSON: {exc}") from None
        # The exact parser stops at the same container, and knows its path.
        _parse_exact(_text(data), max_depth)
        raise _too_deep((), max_depth) from None  # pragma: no cover - orjson and it agree
    if max_depth < MAX_DEPTH and _nests_deeper(data, value, max_depth):
        _parse_exact(_text(data), max_depth)  # raises, with the path
        raise _too_deep((), max_depth)  # pragma: no cover
    return value


def _text(data: bytes | bytearray | memoryview | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid("invalid UTF-8", exc.start, unit="byte") from None


def _nests_deeper(data: bytes | bytearray | memoryview | str, value: Any, max_depth: int) -> bool:
    # Fewer opening brackets than the limit (strings included: an upper bound) settles it.
    if isinstance(data, str):
        brackets = data.count("[") + data.count("{")
    else:
        raw = bytes(data) if isinstance(data, memoryview) else data
        brackets = raw.count(b"[") + raw.count(b"{")
    if brackets <= max_depth or type(value) not in (dict, list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        children = node.values() if type(node) is dict else node
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
    return False


# -- the exact parser -------------------------------------------------------------------------
# RFC 8259 grammar, an explicit stack of open containers (any depth), strings decoded by the
# standard library's C `scanstring`. Slower than orjson (a Python step per token), so it runs
# only where orjson would lose data or cannot say where.

# The C string scanner when the interpreter has it (it does on CPython); not in typeshed.
_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = (
    json.decoder.scanstring  # type: ignore[attr-defined]
)
_WS: Final = re.compile(r"[ \t\n\r]+")


def _skip(text: str, pos: int) -> int:
    """The position of the first character at or after `pos` that is not JSON whitespace."""
    match = _WS.match(text, pos)
    return pos if match is None else match.end()


_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _parse_exact(text: str, max_depth: int) -> Any:
    """Parse `text` exactly (integers of any size), refusing what orjson refuses."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a raw lone surrogate (str input only)
            raise _invalid("a lone surrogate", exc.start) from None
    escapes = "\\u" in text  # only an escape can decode to a lone surrogate now
    end = len(text)
    frames: list[Any] = []  # the open containers, innermost last
    path: list[PathItem] = []  # per open container: the key or index being parsed
    pos = _skip(text, 0)
    while True:
        # One value at `pos`; an opened container continues with its first member.
        char = text[pos] if pos < end else ""
        value: Any
        if char == "[" or char == "{":
            if len(frames) >= max_depth:
                raise _too_deep(tuple(path), max_depth)
            pos = _skip(text, pos + 1)
            if char == "[":
                if text.startswith("]", pos):
                    value, pos = [], pos + 1
                else:
                    frames.append([])
                    path.append(0)
                    continue
            elif text.startswith("}", pos):
                value, pos = {}, pos + 1
            else:
                key, pos = _key(text, pos, escapes)
                frames.append({})
                path.append(key)
                continue
        elif char == '"':
            value, pos = _string(text, pos + 1, escapes)
        elif char == "-" or "0" <= char <= "9":
            value, pos = _number(text, pos, path)
        elif text.startswith("true", pos):
            value, pos = True, pos + 4
        elif text.startswith("false", pos):
            value, pos = False, pos + 5
        elif text.startswith("null", pos):
            value, pos = None, pos + 4
        else:
            raise _invalid("expected a JSON value", pos)
        # Store the finished value in its container; close the containers that end here.
        while True:
            pos = _skip(text, pos)
            if not frames:
                if pos != end:
                    raise _invalid("unexpected content after the document", pos)
                return value
            container = frames[-1]
            is_list = type(container) is list
            if is_list:
                container.append(value)
            else:
                container[path[-1]] = value
            char = text[pos] if pos < end else ""
            if char == ",":
                pos = _skip(text, pos + 1)
                if is_list:
                    path[-1] = len(container)
                else:
                    path[-1], pos = _key(text, pos, escapes)
                break
            if char == ("]" if is_list else "}"):
                value, pos = frames.pop(), pos + 1
                path.pop()
                continue
            raise _invalid("expected ',' or the end of the container", pos)


def _key(text: str, pos: int, escapes: bool) -> tuple[str, int]:
    if not text.startswith('"', pos):
        raise _invalid("expected a string key", pos)
    key, pos = _string(text, pos + 1, escapes)
    pos = _skip(text, pos)
    if not text.startswith(":", pos):
        raise _invalid("expected ':'", pos)
    return key, _skip(text, pos + 1)


def _string(text: str, pos: int, escapes: bool) -> tuple[str, int]:
    """The string whose opening quote is just before `pos`; refuses control characters."""
    try:
        value, after = _scanstring(text, pos, True)
    except ValueError as exc:  # json.JSONDecodeError
        raise _invalid(getattr(exc, "msg", "malformed string"), pos - 1) from None
    if escapes and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid("a lone surrogate escape", pos - 1) from None
    return value, after


def _number(text: str, pos: int, path: list[PathItem]) -> tuple[int | float, int]:
    match = _NUMBER.match(text, pos)
    if match is None:
        raise _invalid("malformed number", pos)
    token = match.group()
    if match.group(1) is None and match.group(2) is None:
        try:
            return int(token), match.end()
        except ValueError:  # more digits than sys.get_int_max_str_digits()
            limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
            where = tuple(path)
            raise Error(
                "policy",
                "limit_exceeded",
                f"an integer has more than {limit} digits",
                path=where,
                details={"limit": limit, "digits": len(token.lstrip("-"))},
            ) from None
    number = float(token)
    if math.isinf(number):
        raise _invalid("number is infinite as a double", pos)
    return number, match.end()


def _invalid(what: str, pos: int, *, unit: str = "char") -> Error:
    return Error("protocol", "invalid_json", f"not valid JSON: {what} at {unit} {pos}")


def _too_deep(path: tuple[PathItem, ...], max_depth: int) -> Error:
    return Error(
        "policy",
        "limit_exceeded",
        f"objects and arrays nest deeper than {max_depth} levels",
        path=path,
        details={"limit": max_depth},
    )
