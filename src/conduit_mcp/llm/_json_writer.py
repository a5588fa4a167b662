"""Compact JSON text of any value a parser or a caller may hand over, for a model to read.

`structuredContent` is written into a text block when a result would otherwise show the model
nothing (`_shape`). The C encoder does the common case; values it refuses (nested past its
recursion limit, integers past `sys.get_int_max_str_digits()`, NaN, values JSON cannot hold)
go through an explicit-stack writer whose time and memory are linear in the value.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from ..client import _wire as w
from ..client._errors import PathItem, cycle_error
from ..client._jsonrules import compact_json


def dump_json(value: Any) -> str:
    """Compact JSON text of `value` (member order kept), exact for integers.

    NaN and infinities (not JSON; only lenient parsers make them) are written as `null`; values
    JSON cannot hold as `"<type>"`. Raises `Error` only for a cycle (`_dump_json_iterative`).
    """
    try:
        return compact_json(value, allow_nan=False).decode("utf-8", "surrogatepass")
    except (RecursionError, ValueError, TypeError):
        # Too deep for the C encoder, an integer past `sys.get_int_max_str_digits()`, a cycle,
        # NaN, or a value JSON cannot hold: the explicit-stack encoder copes (or, for a cycle,
        # raises the one cycle Error).
        return _dump_json_iterative(value)


_OPEN: Final = 0  # stack entry: a value to encode
_EMIT: Final = 1  # stack entry: literal text
_LEAVE: Final = 2  # stack entry: leaving a container (cycle detection)


def _dump_json_iterative(value: Any) -> str:
    """As `dump_json`, with an explicit stack.

    Raises:
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`), path from
            `structuredContent`, when the value contains itself: the one treatment of cycles.
    """
    out: list[str] = []
    on_path: set[int] = set()
    path: list[PathItem] = [w.STRUCTURED_CONTENT]  # where the open containers sit
    # (tag, item, step): step is the member name or index an _OPEN value sits at (None for
    # the root); a _LEAVE entry's step says whether its container added one to `path`.
    stack: list[tuple[int, Any, PathItem | None]] = [(_OPEN, value, None)]
    while stack:
        tag, item, step = stack.pop()
        if tag == _EMIT:
            out.append(item)
            continue
        if tag == _LEAVE:
            on_path.discard(item)
            if step is not None:
                path.pop()
            continue
        if isinstance(item, (dict, list, tuple)):
            if id(item) in on_path:
                raise cycle_error((*path, step) if step is not None else tuple(path))
            on_path.add(id(item))
            if step is not None:
                path.append(step)
            stack.append((_LEAVE, id(item), step))
            if isinstance(item, dict):
                stack.append((_EMIT, "}", None))
                entries = list(item.items())
                for index in range(len(entries) - 1, -1, -1):
                    key, member = entries[index]
                    stack.append((_OPEN, member, key if isinstance(key, str) else str(key)))
                    stack.append((_EMIT, _json_key(key) + ":", None))
                    if index:
                        stack.append((_EMIT, ",", None))
                out.append("{")
            else:
                stack.append((_EMIT, "]", None))
                for index in range(len(item) - 1, -1, -1):
                    stack.append((_OPEN, item[index], index))
                    if index:
                        stack.append((_EMIT, ",", None))
                out.append("[")
        else:
            out.append(_json_scalar(item))
    return "".join(out)


def _json_key(key: object) -> str:
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if key is None or isinstance(key, (bool, int, float)):
        # What `json.dumps` does with such keys: their JSON text, as a string.
        return json.dumps(_json_scalar(key), ensure_ascii=False)
    return json.dumps(f"<{type(key).__name__}>")


def _json_scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return _int_text(int(value))
    if isinstance(value, float):
        number = float(value)
        return repr(number) if math.isfinite(number) else "null"  # as orjson writes them
    return json.dumps(f"<{type(value).__name__}>")


# Python limits int -> str conversion (CVE-2020-10735); 640 digits is the smallest limit one
# can set, so chunks of 600 always convert. Past _INT_BITS_LIMIT (about 60,000 digits, far
# beyond any cap) the number is replaced by a note rather than paying quadratic time.
_INT_CHUNK_DIGITS: Final = 600
_INT_CHUNK: Final = 10**_INT_CHUNK_DIGITS
_INT_BITS_LIMIT: Final = 200_000


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:
        pass
    if value.bit_length() > _INT_BITS_LIMIT:
        digits = int(value.bit_length() * 0.30103) + 1
        return json.dumps(f"<integer of about {digits} digits>")
    sign = "-" if value < 0 else ""
    value = abs(value)
    chunks: list[str] = []
    while value >= _INT_CHUNK:
        value, low = divmod(value, _INT_CHUNK)
        chunks.append(f"{low:0{_INT_CHUNK_DIGITS}d}")
    chunks.append(str(value))
    return sign + "".join(reversed(chunks))
