"""JSON rules used in more than one module, each in one place.

The absent-key sentinel, the I-JSON integer range, the linked-list path a walker builds, RFC 6901
JSON Pointers and the compact serializer with its standard-library fallback. Parsing lives in
`_json.py`, RFC 8785 canonical form in `_jcs.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

import orjson

from ._errors import PathItem

MISSING: Final[Any] = object()
"""What `mapping.get(key, MISSING)` returns for an absent key: unlike `None`, never a JSON value."""

#: The largest integer an IEEE 754 double holds exactly with its neighbours: 2**53 - 1.
#: Spec: RFC 7493 (I-JSON) section 2.2; RFC 8785 section 3.2.2.3 relies on it.
MAX_SAFE_INTEGER: Final = 2**53 - 1

#: 2**53 as a float: below it in magnitude every integral double is an exactly held integer.
TWO_53: Final = 9007199254740992.0

Link: TypeAlias = "tuple[Link, PathItem] | None"
"""A path inside a walk: `(parent link, key)` pairs ending in `None` (the root). Built with one
C-level tuple per step and shared by every child, so a place costs O(1) memory at any depth."""


def link_keys(link: Link) -> tuple[PathItem, ...]:
    """The keys of a link from the root, as a new tuple (O(depth)).

    Args:
        link: a `Link` (`None` is the root).

    Returns:
        The keys and indexes from the root to the place, e.g. `("properties", "city")`.
    """
    keys: list[PathItem] = []
    while link is not None:
        link, key = link
        keys.append(key)
    keys.reverse()
    return tuple(keys)


def link_depth(link: Link, limit: int) -> int:
    """The number of keys in `link`, counted up to `limit + 1` at most (O(limit)).

    Args:
        link: a `Link`.
        limit: where to stop counting; a deeper link reads as `limit + 1`.

    Returns:
        min(depth, limit + 1).
    """
    depth = 0
    while link is not None and depth <= limit:
        link = link[0]
        depth += 1
    return depth


def escape_token(key: str) -> str:
    """One object key as a JSON Pointer reference token: `~` -> `~0`, `/` -> `~1`.

    Spec: RFC 6901 section 3 (MUST: `~` and `/` are escaped in reference tokens).
    """
    return key.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """One JSON Pointer reference token as the key it names: `~1` -> `/`, then `~0` -> `~`.

    Spec: RFC 6901 section 4 (this order, so `~01` reads as `~1`).
    """
    return token.replace("~1", "/").replace("~0", "~")


def fragment_tokens(ref: str) -> tuple[str, ...] | None:
    """The reference tokens of a same-document `$ref` (`#` or `#/...`), unescaped.

    Args:
        ref: a reference such as `"#/$defs/a~1b"`.

    Returns:
        `()` for `"#"`, the tokens (`("$defs", "a/b")`) for `"#/..."`, `None` for anything
        else (another document, a plain-name anchor). Percent-escapes are not decoded.

    Spec: RFC 6901 sections 4 (`~1` -> `/` first, then `~0` -> `~`) and 6 (URI fragment form).
    """
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    return tuple(unescape_token(token) for token in ref[2:].split("/"))


def is_index_token(token: str) -> bool:
    """Whether a reference token reads as an array index: ASCII digits only.

    `str.isdigit` alone also accepts `"¹"` or `"٣"`, on which `int()` raises or which RFC 6901
    does not allow (section 4: `array-index = %x30 / ( %x31-39 *(%x30-39) )`; leading zeros
    are tolerated here, as before).
    """
    return token.isascii() and token.isdigit()


def resolve_tokens(
    root: object, tokens: tuple[str, ...], aliases: Mapping[str, str] | None = None
) -> object:
    """The value at `tokens` inside `root`, or `MISSING` when there is none.

    `aliases` maps a token to the key tried instead when an object lacks the token itself
    (`{"definitions": "$defs"}` for schemas whose definitions were renamed on the way).

    An array index is a run of ASCII digits below the array's length (`"-"`, indexes past the
    end and other Unicode digits such as `"¹"` find nothing). Never raises; O(len(tokens)).

    Spec: RFC 6901 section 4 (evaluation).
    """
    node = root
    for token in tokens:
        if isinstance(node, dict):
            if aliases and token in aliases and token not in node:
                token = aliases[token]
            node = node.get(token, MISSING)
            if node is MISSING:
                return MISSING
        elif isinstance(node, list) and is_index_token(token) and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


def compact_json(value: object, *, sort_keys: bool = False, allow_nan: bool = True) -> bytes:
    """Compact JSON text of `value` as UTF-8, exact for integers of any size.

    orjson writes it (fast); what orjson refuses (integers past 64 bits, lone surrogates,
    more than 255 levels, non-`str` keys, cycles) goes to the standard library's encoder,
    whose output is the same text for the values both accept.

    Args:
        value: a JSON value. Not mutated.
        sort_keys: members in code-point order of their keys (else as stored).
        allow_nan: in the fallback, write NaN/Infinity as `NaN`/`Infinity` (else it raises);
            orjson writes them as `null` either way.

    Returns:
        The bytes; lone surrogates (fallback only) encoded with `surrogatepass`.

    Raises:
        RecursionError: the fallback's C encoder ran out of stack (very deep input).
        ValueError: a cycle, NaN with `allow_nan=False`, or an integer past
            `sys.get_int_max_str_digits()`.
        TypeError: a value or key JSON cannot hold.

    Spec: RFC 8259 section 2 (no insignificant whitespace is written).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:  # orjson.JSONEncodeError
        pass
    text = json.dumps(
        value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan
    )
    return text.encode("utf-8", "surrogatepass")
