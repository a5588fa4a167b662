"""RFC 8785 canonical JSON (JCS), as the fingerprint (`_fingerprint.py`) hashes it.

Two serializers give the same bytes:

* `_canonical_slow`: the reference. Pure Python, explicit stack (any depth), exact RFC 8785
  for every JSON value, plus this library's documented form for integers RFC 8785 cannot hold.
  It also produces the `Error` (with its path) for input that is not JSON.
* `_canonical_fast`: orjson with sorted keys, taken only when its output provably equals the
  reference. orjson differs from RFC 8785 on exactly three points: floats (`1.0` vs `1`,
  `1e+16` vs `10000000000000000`, `-0.0` vs `0`), NaN/Infinity (orjson writes `null`) and key
  order when a key holds a character above U+FFFF (orjson sorts by code point, RFC 8785 by
  UTF-16 code unit). One `bytes.translate` pass plus a literal search over orjson's output
  flags every possible float, `null` or 4-byte UTF-8 sequence (with rare false positives,
  e.g. `"a,e"` inside a string); only then does a walk over the value look. It replaces each
  float by an `orjson.Fragment` of its ECMAScript form, and each nested object with such a
  key by a Fragment of its reference serialization, in a path copy, and orjson runs again.
  Whatever orjson rejects (depth > 254, integers outside +-(2**53-1), lone surrogates,
  non-string keys, subclasses of builtins), NaN/Infinity and a root object with such a key
  go to the reference.

Property tests check the fast path against the reference and both against the `rfc8785`
package wherever that package accepts the input.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from typing import Any, Final

import orjson

from ._cache import BoundedCache
from ._errors import Error, PathItem, cycle_error, json_type_name, render_path
from ._jsonrules import MAX_SAFE_INTEGER, TWO_53

# orjson options for the fast path: sorted keys; anything it cannot match exactly must raise
# (out-of-range integers, subclasses of builtins, datetimes, dataclasses) so the reference runs.
_ORJSON_OPTIONS: Final = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _scan_table() -> bytes:
    # One `bytes.translate` pass over orjson's compact output. Digits, '+' and '-' are deleted,
    # so every number token vanishes except its '.' or 'e'; ':' ',' '[' (the bytes a value can
    # follow) become ':'; '.', 'e', 'n' become 0x01. Outside strings, a float or a `null`
    # (orjson's NaN/Infinity) is therefore always ":\x01". orjson never writes raw bytes < 0x20
    # (it escapes them), so 0x01 and 0x00 cannot come from the text itself. UTF-8 lead bytes of
    # characters above U+FFFF (0xF0-0xF4; 0xF5-0xFF never occur) become 0x00.
    table = bytearray(range(256))
    for byte in b",[":
        table[byte] = ord(":")
    for byte in b".en":
        table[byte] = 0x01
    for byte in range(0xF0, 0x100):
        table[byte] = 0x00
    return bytes(table)


_SCAN_TABLE: Final = _scan_table()
_SCAN_DELETE: Final = b"0123456789+-"
# A regex, not `in`: sre finds a literal by memchr on its first byte (':' is rarer than 0x01).
_find_float_or_null: Final = re.compile(b":\x01").search
_MAYBE_ASTRAL: Final = b"\x00"
# For `_rewrite_floats`: a translation that keeps positions (digits, signs and the bytes a
# value can follow -> ':'; '.', 'e', 'n' -> 0x01), and the byte classes of orjson's grammar.
_ALIGNED_TABLE: Final = bytes(
    ord(":") if byte in b",[:0123456789+-" else 0x01 if byte in b".en" else byte
    for byte in range(256)
)
_find_all_float_or_null: Final = re.compile(b":\x01").finditer
_match_number: Final = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?").match
_DIGITS: Final = frozenset(b"0123456789")
_DIGITS_AND_MINUS: Final = frozenset(b"0123456789-")
_SEPARATORS: Final = frozenset(b":,[")
_CLOSERS: Final = frozenset(b",]}")
# orjson float token -> RFC 8785 bytes; schema numbers repeat (0.0, 1.0, 0.5), so a small
# bounded memo saves the formatting. A pure function of the token: safe to share.
_FLOAT_TOKENS: Final[BoundedCache[bytes, bytes]] = BoundedCache(4096)
_LEAF_TYPES: Final = frozenset({str, int, bool, type(None)})  # written by orjson as RFC 8785

# RFC 8785 3.2.2.2: escape '"', '\\' and U+0000-U+001F; short forms where ECMAScript has them.
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\]')
_ESCAPES: Final[dict[str, str]] = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    **{chr(code): f"\\u{code:04x}" for code in range(0x20) if chr(code) not in "\b\t\n\f\r"},
}


def canonical_json(value: object) -> bytes:
    """Serialize a JSON value to its RFC 8785 (JCS) canonical form, as UTF-8 bytes.

    Objects have their members sorted by the UTF-16 code units of their names, no whitespace
    is written, strings escape only `"`, `\\` and U+0000-U+001F (`\\b \\t \\n \\f \\r` or
    lowercase `\\u00xx`), and numbers use ECMAScript's Number-to-String (`1.0` -> `1`,
    `1e21` -> `1e+21`, `-0.0` -> `0`). The result is byte-identical to the `rfc8785` package
    wherever that package accepts the input.

    Integers outside +-(2**53-1), which RFC 8785 cannot represent (I-JSON numbers are IEEE 754
    doubles), are written as their exact decimal digits followed by `.0`, e.g. `2**64` ->
    `18446744073709551616.0`. ECMAScript never writes a number ending in `.0`, so this form
    cannot equal the canonical form of any float or in-range integer, and distinct integers
    stay distinct. (Consequence: such an integer and a float of the same value differ.) The
    bytes are then valid JSON but not valid RFC 8785; they are meant for hashing, not parsing.

    Args:
        value: a JSON value as a JSON parser returns it: `dict` with `str` keys, `list`,
            `str`, `int`, `float`, `bool`, `None` (subclasses of these and `tuple`s, read as
            arrays, are accepted too). Not mutated.

    Returns:
        The canonical bytes.

    Raises:
        Error: kind `"protocol"`, reason `"invalid_json"`, with `path` to the offending value,
            when the value is not JSON: a NaN or infinite float, an object key that is not a
            `str` (path to the object), a string or key that is not valid Unicode (a lone
            surrogate; path to the string or to the member), a container that contains itself,
            or a value of any other type. Kind `"policy"`, reason `"limit_exceeded"` when an
            integer has more decimal digits than the interpreter will convert
            (`details["limit"]`: `sys.get_int_max_str_digits()`, an int).
            Not covered: `uuid.UUID`, `enum.Enum` and `orjson.Fragment` objects, which no JSON
            parser returns, are written as orjson writes them when the fast path takes the
            value (undefined for callers; never on the wire).

    Total: any depth (10,000 levels and more: an explicit stack, no recursion) and any size;
    time O(n log n) in the number of members, memory O(n).

    Spec: RFC 8785 section 3.2 (3.2.1 whitespace, 3.2.2.2 strings, 3.2.2.3 numbers,
    3.2.3 sorting of object properties, 3.2.4 UTF-8 generation).

    >>> canonical_json({"b": [1.0, 1e21, "\\u20ac"], "a": None})
    b'{"a":null,"b":[1,1e+21,"\\xe2\\x82\\xac"]}'
    """
    kind = type(value)
    if kind is dict or kind is list:
        out = _canonical_fast(value)
        if out is not None:
            return out
    return _canonical_slow(value)


# -- fast path ------------------------------------------------------------------------------


def _canonical_fast(value: Any) -> bytes | None:
    """orjson's sorted compact output when it provably equals RFC 8785, else `None`.

    Only for a dict or list at the root (a float at the root has no separator in front).
    """
    try:
        out = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    scan = out.translate(_SCAN_TABLE, _SCAN_DELETE)
    maybe_float = _find_float_or_null(scan) is not None
    maybe_astral = not out.isascii() and scan.find(_MAYBE_ASTRAL) != -1  # find: see _json
    if not (maybe_float or maybe_astral):
        return out
    if not maybe_astral:
        rewritten = _rewrite_floats(out)
        if rewritten is not None:
            return rewritten
    patched = _patched(value, maybe_astral)
    if patched is value:  # a false alarm: a `null`, or float-like text inside a string
        return out
    if patched is None:
        return None
    try:
        return orjson.dumps(patched, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:  # pragma: no cover - orjson took the unpatched value
        return None


def _rewrite_floats(out: bytes) -> bytes | None:
    """`out` with every float token rewritten in its RFC 8785 form, by text alone.

    Returns `None` (the caller walks the value instead) when a `null` stands outside strings
    (it may be orjson's NaN) or the text holds an escaped backslash (which would confuse the
    quote counting below).
    """
    if out.find(b"\\\\") != -1:  # `find`, not `in`: see proxy/_message.py
        return None
    aligned = out.translate(_ALIGNED_TABLE)  # same length as `out`: positions match
    parts: list[bytes] = []
    done = 0  # out[:done] is already in parts (or still to be copied verbatim)
    quotes = 0  # unescaped '"' in out[:counted]: odd means inside a string
    counted = 0
    for hit in _find_all_float_or_null(aligned):
        at = hit.start()
        if at < done:
            continue  # a second '.'/'e' of a token already rewritten
        after = out[at + 1]
        if after == 0x6E:  # 'n': `null` after a separator, or text such as "2nd"
            if out[at] not in _SEPARATORS or out[at + 1 : at + 5] != b"null":
                continue
            start = end = at + 1
        else:  # '.' or 'e' after a digit, or text such as ":e" or "v1.2"
            if out[at] not in _DIGITS:
                continue
            start = at
            while out[start - 1] in _DIGITS_AND_MINUS:
                start -= 1
            if out[start - 1] not in _SEPARATORS:
                continue
            number = _match_number(out, start)
            if number is None:
                continue
            end = number.end()
        if out[end + 4 if after == 0x6E else end] not in _CLOSERS:
            continue
        quotes += out.count(b'"', counted, start) - out.count(b'\\"', counted, start)
        counted = start
        if quotes % 2:
            continue  # inside a string
        if after == 0x6E:
            return None
        token = out[start:end]
        canonical = _FLOAT_TOKENS.peek(token, None)
        if canonical is None:
            canonical = _float_bytes(float(token), [])  # orjson's token round-trips exactly
            _FLOAT_TOKENS.put(token, canonical)
        parts.append(out[done:start])
        parts.append(canonical)
        done = end
    if not parts:
        return out
    parts.append(out[done:])
    return b"".join(parts)


def _patched(root: Any, check_keys: bool) -> Any:
    """`root` with what orjson would write differently replaced by RFC 8785 bytes.

    Each float becomes an `orjson.Fragment` of its ECMAScript form; each object (below the
    root) with a key above U+FFFF becomes a Fragment of its reference serialization. Only the
    containers on the way to a replacement are copied (shallow); `root` is never changed.

    Returns:
        `root` itself when nothing needs replacing; the patched copy; or `None` when the
        reference path must run (NaN/Infinity, which needs an `Error` with its full path, or
        a key above U+FFFF in the root object).

    Called only after orjson accepted `root` (JSON types, depth <= 254).
    """
    if check_keys and type(root) is dict and _has_astral_key(root):
        return None
    # nodes[i] = (container, index of its parent in nodes, its key or index in that parent)
    nodes: list[tuple[Any, int, Any]] = [(root, -1, None)]
    fixes: list[tuple[int, Any, orjson.Fragment]] = []
    stack = [0]
    while stack:
        parent = stack.pop()
        node = nodes[parent][0]
        is_dict = type(node) is dict
        if _LEAF_TYPES.issuperset(map(type, node.values() if is_dict else node)):
            continue  # all strings/ints/bools/nulls: checked in C, most schema objects are
        for key, child in node.items() if is_dict else enumerate(node):
            kind = type(child)
            if kind is str or kind is int or kind is bool or child is None:
                continue
            if kind is float:
                if not math.isfinite(child):
                    return None
                fixes.append((parent, key, orjson.Fragment(_float_bytes(child, []))))
            elif kind is dict and check_keys and _has_astral_key(child):
                try:
                    fragment = orjson.Fragment(_canonical_slow(child))
                except Error:  # NaN inside: the reference path reports it with its full path
                    return None
                fixes.append((parent, key, fragment))
            elif kind is dict or kind is list or kind is tuple:
                nodes.append((child, parent, key))
                stack.append(len(nodes) - 1)
    if not fixes:
        return root
    copies: dict[int, Any] = {}
    for parent, key, fragment in fixes:
        _copy_of(parent, nodes, copies)[key] = fragment
    return copies[0]


def _copy_of(index: int, nodes: list[tuple[Any, int, Any]], copies: dict[int, Any]) -> Any:
    """The shallow copy of nodes[index], copying (and relinking) its ancestors as needed."""
    chain = []
    while index not in copies:
        chain.append(index)
        if index == 0:
            break
        index = nodes[index][1]
    for position in reversed(chain):
        node, parent, key = nodes[position]
        copy = dict(node) if type(node) is dict else list(node)
        copies[position] = copy
        if parent >= 0:
            copies[parent][key] = copy
    return copies[chain[0]] if chain else copies[index]


def _has_astral_key(obj: dict[str, Any]) -> bool:
    for key in obj:
        if not key.isascii() and max(key) > "\uffff":
            return True
    return False


# -- reference path -------------------------------------------------------------------------


def _canonical_slow(root: object) -> bytes:
    """Exact RFC 8785 serialization with an explicit stack; the oracle for the fast path."""
    parts: list[bytes] = []
    emit = parts.append
    # A frame: [members, next index, closing byte, id of the container].
    # members: (path item, b'"key":' or None for arrays, child value).
    frames: list[list[Any]] = []
    path: list[PathItem] = []
    active: set[int] = set()  # ids of the containers being written, to refuse cycles
    value = root
    while True:
        if value is None:
            emit(b"null")
        elif value is True:
            emit(b"true")
        elif value is False:
            emit(b"false")
        elif isinstance(value, str):
            emit(_string_bytes(value, path))
        elif isinstance(value, int):
            emit(_int_bytes(value, path))
        elif isinstance(value, float):
            emit(_float_bytes(value, path))
        elif isinstance(value, (dict, list, tuple)):
            ident = id(value)
            if ident in active:
                raise cycle_error(tuple(path))
            members: Sequence[tuple[PathItem, bytes | None, Any]]
            if isinstance(value, dict):
                members = _sorted_members(value, path)
                opener, closer = b"{", b"}"
            else:
                members = [(index, None, child) for index, child in enumerate(value)]
                opener, closer = b"[", b"]"
            if members:
                emit(opener)
                active.add(ident)
                frames.append([members, 0, closer, ident])
                path.append(0)  # replaced by the child's key or index below
            else:
                emit(opener + closer)
        else:
            raise _not_json(path, f"is a {type(value).__name__}", json_type_name(value))
        # Move to the next value to write, closing finished containers.
        while frames:
            frame = frames[-1]
            members, index = frame[0], frame[1]
            if index < len(members):
                if index:
                    emit(b",")
                item, prefix, value = members[index]
                if prefix is not None:
                    emit(prefix)
                path[-1] = item
                frame[1] = index + 1
                break
            emit(frame[2])
            active.discard(frame[3])
            frames.pop()
            path.pop()
        else:
            return b"".join(parts)


def _sorted_members(obj: dict[Any, Any], path: list[PathItem]) -> list[tuple[str, bytes, Any]]:
    """The members of `obj` as (key, b'"key":', value), in RFC 8785 3.2.3 order."""
    members: list[tuple[str, bytes, Any]] = []
    astral = False
    for key, child in obj.items():
        if not isinstance(key, str):
            got = json_type_name(key)
            raise Error(
                "protocol",
                "invalid_json",
                f"{render_path(tuple(path))} has an object key of type {got}; JSON keys are"
                " strings",
                path=tuple(path),
                details={"expected": "string", "got": got},
            )
        key = str.__str__(key)
        members.append((key, _string_bytes(key, path, key) + b":", child))
        if not astral and not key.isascii() and max(key) > "\uffff":
            astral = True
    if astral:
        # UTF-16 code-unit order: a character above U+FFFF (a surrogate pair, 0xD800-0xDFFF)
        # sorts before U+E000-U+FFFF, unlike code-point order. Keys are valid Unicode here.
        members.sort(key=lambda member: member[0].encode("utf-16-be"))
    else:
        # Without such characters, code-point order equals UTF-16 code-unit order.
        members.sort(key=lambda member: member[0])
    return members


def _string_bytes(text: str, path: list[PathItem], key: str | None = None) -> bytes:
    """RFC 8785 3.2.2.2 string form, UTF-8 encoded (3.2.4)."""
    escaped = _NEEDS_ESCAPE.sub(_escape, text) if _NEEDS_ESCAPE.search(text) else text
    try:
        return b'"' + escaped.encode("utf-8") + b'"'
    except UnicodeEncodeError:
        where = (*path, key) if key is not None else tuple(path)
        index = next(i for i, char in enumerate(text) if "\ud800" <= char <= "\udfff")
        what = "an object key" if key is not None else "a string"
        raise Error(
            "protocol",
            "invalid_json",
            f"{render_path(where)}: {what} holds a lone surrogate, which is not Unicode text",
            path=where,
            details={"expected": "valid Unicode", "got": "lone surrogate", "index": index},
        ) from None


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def _int_bytes(number: int, path: list[PathItem]) -> bytes:
    try:
        digits = int.__repr__(number)  # not repr(): an IntEnum's repr is not its digits
    except ValueError:  # more digits than sys.get_int_max_str_digits() allows
        limit = sys.get_int_max_str_digits()
        raise Error(
            "policy",
            "limit_exceeded",
            f"{render_path(tuple(path))}: integer has more than {limit} digits to serialize",
            path=tuple(path),
            details={"limit": limit},
        ) from None
    if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        return digits.encode("ascii")
    # Outside I-JSON's exact range: exact digits + ".0", a form ECMAScript never produces.
    return digits.encode("ascii") + b".0"


def _float_bytes(number: float, path: list[PathItem]) -> bytes:
    """ECMAScript Number::toString (ECMA-262 6.1.6.1.20), as RFC 8785 3.2.2.3 requires."""
    if not math.isfinite(number):
        raise _not_json(path, "is NaN or infinite", "number")
    if number.is_integer() and -TWO_53 < number < TWO_53:
        # Below 2**53 every integer is a double, so the shortest digits are the exact ones.
        # (Not above: 2.0**60 is written 1152921504606847000.) -0.0 -> 0.
        return int(number).__repr__().encode("ascii")
    text = float.__repr__(number)  # shortest round-trip digits (as ECMAScript requires)
    if "e" not in text and not text.endswith(".0"):
        # repr is positional for 1e-4 <= |x| < 1e16, where ECMAScript is positional too,
        # with the same digits; only integral values (".0") are written differently.
        return text.encode("ascii")
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    # value = 0.<digits> * 10**(len(whole) + exponent); leading zeros lower the point.
    n = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(stripped))
    s = stripped.rstrip("0")
    k = len(s)
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + s
    else:
        e = n - 1
        exp = ("e+" if e >= 0 else "e-") + str(abs(e))
        out = s + exp if k == 1 else s[0] + "." + s[1:] + exp
    return (sign + out).encode("ascii")


def _not_json(path: list[PathItem], what: str, got: str) -> Error:
    where = tuple(path)
    return Error(
        "protocol",
        "invalid_json",
        f"{render_path(where)} {what}, which JSON cannot hold",
        path=where,
        details={"expected": "a JSON value", "got": got},
    )
