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

from ._fingerprint import canonical_json
from ._json import parse_json

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
    """`value` as RFC 8785 would read it back: `1.0` -> `1`, keys as text, a fresh copy.

    Raises:
        Error: as `canonical_json`, when `value` is not JSON.
    """
    return parse_json(canonical_json(value))


def field_changes(
    old: Any, new: Any, cosmetic: Iterable[str] = DEFAULT_COSMETIC
) -> tuple[FieldChange, ...]:
    """The field-level changes that turn `old` into `new`.

    Objects are compared member by member, arrays position by position (an insertion shows as
    replacements up to the end plus one `"add"`); any other difference, including a change of
    JSON type, is one `"replace"` of that value. Where a cosmetic pointer lies below a member
    that is an object on one side and absent on the other, the object is compared with `{}`,
    so that adding `annotations: {"title": ...}` is one cosmetic change at
    `/annotations/title`, not a material one at `/annotations`.

    Args:
        old, new: JSON values in normal form (see `normalized`): `True` and `1` differ, and
            equal numbers have one type on both sides.
        cosmetic: JSON Pointers; a change at or below one of them has `material=False`.

    Returns:
        The changes, sorted by `path` (code point order); `()` when the values are equal.

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
                child = path + "/" + key.replace("~", "~0").replace("/", "~1")
                if key not in b:
                    _absent(out, stack, prefixes, cosmetic, child, a[key], "remove")
                elif key not in a:
                    _absent(out, stack, prefixes, cosmetic, child, b[key], "add")
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
    out.sort(key=lambda change: change.path)
    return tuple(out)


def _absent(
    out: list[FieldChange],
    stack: list[tuple[str, Any, Any]],
    prefixes: frozenset[str],
    cosmetic: frozenset[str],
    path: str,
    value: Any,
    op: ChangeOp,
) -> None:
    if path in prefixes and type(value) is dict and value:
        stack.append((path, value, {}) if op == "remove" else (path, {}, value))
        return
    old, new = (value, None) if op == "remove" else (None, value)
    out.append(_change(cosmetic, path, op, old, new))


def _change(cosmetic: frozenset[str], path: str, op: ChangeOp, old: Any, new: Any) -> FieldChange:
    return FieldChange(path, op, old, new, not _is_cosmetic(path, cosmetic))


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
