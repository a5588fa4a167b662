"""Field-level changes between two tool definitions, and which of them are material.

A change is *material* when it can alter what a model reads or what a client does; only
display fields are *cosmetic*. By default that is `title`, `icons` and `annotations.title`,
stricter than the SEP-3140 proposal on purpose: `outputSchema`, `_meta` and members this
library does not know also reach the model or change the client's behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..client._jsonrules import MAX_SAFE_INTEGER, TWO_53, escape_token, is_index_token

ChangeOp = Literal["add", "remove", "replace"]
"""What happened at a `FieldChange.path`: RFC 6902's operation names."""

#: The JSON Pointers (RFC 6901) under which a change is cosmetic by default: display text only.
DEFAULT_COSMETIC: Final = frozenset({"/title", "/icons", "/annotations/title"})


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One difference between an approved tool definition and the one listed now. Immutable.

    Attributes:
        path: an RFC 6901 JSON Pointer into the definition (`""` is the whole definition,
            `"/inputSchema/properties/city/type"` a member deep down; `~` and `/` in keys are
            written `~0` and `~1`).
        op: `"add"` (absent before), `"remove"` (absent now) or `"replace"`.
        old: the approved value at `path` (`None` for `"add"`), in its RFC 8785 normal form
            (`1.0` reads as `1`).
        new: the value listed now (`None` for `"remove"`), in the same normal form.
        material: `False` only when `path` is at or below a cosmetic pointer.
    """

    path: str
    op: ChangeOp
    old: Any
    new: Any
    material: bool

    def to_json(self) -> dict[str, Any]:
        """This change as a JSON object: `path`, `op`, `material`, and `old`/`new` when set."""
        out: dict[str, Any] = {"path": self.path, "op": self.op, "material": self.material}
        if self.op != "add":
            out["old"] = self.old
        if self.op != "remove":
            out["new"] = self.new
        return out


def normalized(value: object) -> Any:
    """A copy of the JSON value `value` as its RFC 8785 text reads back with `parse_json`.

    Integral floats below 2**53 become `int` (`1.0` -> `1`, `-0.0` -> `0`); integers beyond
    +-(2**53-1), which canonical JSON writes as `digits.0`, become `float`; keys and strings
    of `str` subclasses become `str`; tuples become lists. Both sides of a comparison then
    use one type per number, so `1` equals `1.0` and `True` never equals `1`.

    Raises:
        OverflowError: an integer too large for a double (its canonical text does not read
            back).

    Total: an explicit stack (any depth); linear in the size of `value`.
    """
    root: list[Any] = [None]
    # (source, destination container, key or index in it)
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, into, key = stack.pop()
        kind = type(item)
        if kind is dict or isinstance(item, dict):
            copy: Any = {}
            into[key] = copy
            for k, v in item.items():
                stack.append((v, copy, str.__str__(k)))
        elif kind is list or kind is tuple or isinstance(item, (list, tuple)):
            copy = [None] * len(item)
            into[key] = copy
            for index, v in enumerate(item):
                stack.append((v, copy, index))
        elif item is None or item is True or item is False:
            into[key] = item
        elif isinstance(item, str):
            into[key] = str.__str__(item)
        elif isinstance(item, int):
            number = int(item)
            into[key] = number if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER else float(number)
        elif isinstance(item, float):
            real = float(item)
            is_int = real.is_integer() and -TWO_53 < real < TWO_53
            into[key] = int(real) if is_int else real
        else:
            into[key] = item
    return root[0]


def field_changes(
    old: Any, new: Any, cosmetic: Iterable[str] = DEFAULT_COSMETIC
) -> tuple[FieldChange, ...]:
    """The field-level changes that turn `old` into `new`.

    Objects are compared member by member, arrays position by position (an insertion shows as
    replacements up to the end plus one `"add"`); any other difference, including a change of
    JSON type, is one `"replace"` of that value. Applied in order (RFC 6902, removals of array
    items from the end), the changes turn `old` into `new`. Adding or removing a whole object
    is cosmetic when everything in it is (`annotations: {"title": ...}` added where there
    were no annotations); an empty object is material.

    Args:
        old, new: JSON values in normal form (see `normalized`): `True` and `1` differ, and
            equal numbers have one type on both sides.
        cosmetic: JSON Pointers; a change at or below one of them has `material=False`.

    Returns:
        The changes sorted by `path`, token by token (array indexes as numbers, keys in code
        point order); `()` when the values are equal.

    Total: an explicit stack; linear in the size of the two values.
    """
    cosmetic = frozenset(cosmetic)
    prefixes = _proper_prefixes(cosmetic)
    out: list[FieldChange] = []
    stack: list[tuple[str, Any, Any]] = [("", old, new)]
    while stack:
        path, a, b = stack.pop()
        if type(a) is dict and type(b) is dict:
            for key in a.keys() | b.keys():
                child = path + "/" + escape_token(key)
                if key not in b:
                    _absent(out, prefixes, cosmetic, child, a[key], "remove")
                elif key not in a:
                    _absent(out, prefixes, cosmetic, child, b[key], "add")
                else:
                    stack.append((child, a[key], b[key]))
        elif type(a) is list and type(b) is list:
            for index in range(max(len(a), len(b))):
                child = f"{path}/{index}"
                if index >= len(b):
                    out.append(_change(cosmetic, child, "remove", a[index], None))
                elif index >= len(a):
                    out.append(_change(cosmetic, child, "add", None, b[index]))
                else:
                    stack.append((child, a[index], b[index]))
        elif type(a) is not type(b) or a != b:
            out.append(_change(cosmetic, path, "replace", a, b))
    out.sort(key=_order)
    return tuple(out)


def _absent(
    out: list[FieldChange],
    prefixes: frozenset[str],
    cosmetic: frozenset[str],
    path: str,
    value: Any,
    op: ChangeOp,
) -> None:
    old, new = (value, None) if op == "remove" else (None, value)
    material = not _all_cosmetic(path, value, prefixes, cosmetic)
    out.append(FieldChange(path, op, old, new, material))


def _all_cosmetic(
    path: str, value: Any, prefixes: frozenset[str], cosmetic: frozenset[str]
) -> bool:
    """Whether adding or removing `value` at `path` touches cosmetic members only.

    An object above a cosmetic pointer (`annotations` holding only `title`) counts when every
    member is cosmetic; an empty one does not (conservative). Depth is bounded by the
    pointers', not the value's.
    """
    if _is_cosmetic(path, cosmetic):
        return True
    if path not in prefixes or type(value) is not dict or not value:
        return False
    return all(
        _all_cosmetic(path + "/" + escape_token(key), child, prefixes, cosmetic)
        for key, child in value.items()
    )


def _change(cosmetic: frozenset[str], path: str, op: ChangeOp, old: Any, new: Any) -> FieldChange:
    return FieldChange(path, op, old, new, not _is_cosmetic(path, cosmetic))


def _order(change: FieldChange) -> list[tuple[int, int, str]]:
    # Document order: array indexes compare as numbers ("/2" before "/10").
    return [(0, int(t), "") if is_index_token(t) else (1, 0, t) for t in change.path.split("/")]


def _is_cosmetic(path: str, cosmetic: frozenset[str]) -> bool:
    if path in cosmetic:
        return True
    # At or below: "/icons/0/src" is under "/icons". Check each ancestor pointer.
    end = path.rfind("/")
    while end > 0:
        path = path[:end]
        if path in cosmetic:
            return True
        end = path.rfind("/")
    return False


def _proper_prefixes(pointers: frozenset[str]) -> frozenset[str]:
    found = set()
    for pointer in pointers:
        end = pointer.rfind("/")
        while end > 0:
            pointer = pointer[:end]
            found.add(pointer)
            end = pointer.rfind("/")
    return frozenset(found)
