"""Drift (rug-pull) detection: compare two tool sets by fingerprint, and explain each change.

A server may change a tool's definition at any time (MCP 2026-07-28 server/tools
"Capabilities": the set of tools "MAY change over time"). A client that showed a person which
tools reach the model (server/tools "User Interaction Model", SHOULD) needs to notice when a
definition it approved is no longer the one being served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..client._errors import Error
from ..client._fingerprint import fingerprint as _fingerprint
from ..client._tool import Tool
from ._changes import DEFAULT_COSMETIC, FieldChange, field_changes, normalized


@dataclass(frozen=True)
class ToolDiff:
    """How one server's tool set moved between a baseline and now. Immutable.

    Every field is a tuple of tool names sorted by code point (Python `str` order).

    Attributes:
        added: names present now and absent from the baseline.
        removed: names in the baseline and absent now.
        changed: names in both, with different fingerprints.
        unchanged: names in both, with equal fingerprints.
        changes: changed name -> its field-level changes (`FieldChange`s sorted by RFC 6901
            `path`), for every changed name whose definitions are known on both sides (both
            sides `Tool`s, or `PinStore.diff` with approved definitions); a read-only mapping.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    changes: Mapping[str, tuple[FieldChange, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", MappingProxyType(dict(self.changes)))

    @property
    def material(self) -> tuple[str, ...]:
        """The changed names with a material change (or whose changes are not known)."""
        return tuple(
            name
            for name in self.changed
            if name not in self.changes or any(c.material for c in self.changes[name])
        )

    @property
    def has_drift(self) -> bool:
        """`True` when anything was added, removed or changed."""
        return bool(self.added or self.removed or self.changed)


def diff_tools(
    baseline: Mapping[str, str] | Iterable[Tool],
    current: Mapping[str, str] | Iterable[Tool],
    *,
    cosmetic: Iterable[str] = DEFAULT_COSMETIC,
) -> ToolDiff:
    """Compare two fingerprinted tool sets of one server by tool name.

    Each side is either a mapping of tool name to fingerprint (e.g. `PinStore.pinned()` or a
    saved snapshot) or an iterable of `Tool`s. A `Tool`'s `fingerprint` is used when set, else
    it is computed from `raw` with `fingerprint()`. Names are compared exactly (never
    normalized). `server_id`s are not compared: pass the tools of one server on each side.

    Args:
        baseline: the tool set approved or seen before.
        current: the tool set now listed.
        cosmetic: JSON Pointers under which a change is not material (see `PinStore`).

    Returns:
        A `ToolDiff` of sorted name tuples; when both sides are `Tool`s, `changes` explains
        every changed name field by field.

    Raises:
        Error: kind `"protocol"`, reason `"duplicate_tool_name"`, path `(index, "name")` into
            that iterable, when an iterable of `Tool`s names one tool twice (names SHOULD be
            unique within a server, and a duplicate makes "which definition?" ambiguous);
            or as `fingerprint()` for a `Tool` without a fingerprint whose `raw` is not JSON.
        TypeError: an argument is a `str`/`bytes`, a mapping with a non-`str` key or value,
            or an iterable with an element that is not a `Tool` (caller bugs).

    Total: O(n log n) in the number of tools; fingerprints are computed only where missing;
    changes cost linear time in the size of the changed definitions.

    Spec: MCP 2026-07-28 server/tools "Tool Names" (uniqueness is scoped to a single
    server: compare per server) and "Capabilities" (the tool set MAY change over time).
    """
    old, old_raw = _by_name(baseline, "baseline")
    new, new_raw = _by_name(current, "current")
    changed: list[str] = []
    unchanged: list[str] = []
    for name, value in new.items():
        before = old.get(name)
        if before is None:
            continue
        (unchanged if before == value else changed).append(name)
    pointers = frozenset(cosmetic)
    explained: dict[str, tuple[FieldChange, ...]] = {}
    for name in changed:
        if name in old_raw and name in new_raw:
            explained[name] = explain(old_raw[name], new_raw[name], pointers)
    return ToolDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(changed)),
        unchanged=tuple(sorted(unchanged)),
        changes=explained,
    )


def explain(old_raw: Any, new_raw: Any, cosmetic: frozenset[str]) -> tuple[FieldChange, ...]:
    """`field_changes` of two raw definitions known to differ; never `()`.

    Definitions holding an integer too large for a double, or equal after normalization but
    not byte-equal (integers beyond 2**53), are one material `"replace"` at `""` (the whole
    definition).
    """
    old, new = _normalized_or_none(old_raw), _normalized_or_none(new_raw)
    if old is not None and new is not None:
        changes = field_changes(old, new, cosmetic)
        if changes:
            return changes
    return (FieldChange("", "replace", old, new, True),)


def _normalized_or_none(raw: Any) -> Any:
    try:
        return normalized(raw)
    except (ValueError, OverflowError):  # an integer beyond a double
        return None


def _by_name(
    tools: Mapping[str, str] | Iterable[Tool], argument: str
) -> tuple[dict[str, str], dict[str, Any]]:
    """(name -> fingerprint, name -> raw definition where known)."""
    if isinstance(tools, (str, bytes, bytearray)):
        raise TypeError(f"{argument} must be a mapping or an iterable of Tool, not a string")
    if isinstance(tools, Mapping):
        for name, value in tools.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(f"{argument} must map str tool names to str fingerprints")
        return dict(tools), {}
    result: dict[str, str] = {}
    raws: dict[str, Any] = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise TypeError(f"{argument}[{index}] must be a Tool, got {type(tool).__name__}")
        name = tool.name
        if name in result:
            raise Error(
                "protocol",
                "duplicate_tool_name",
                f"tool {index} of {argument} repeats the name of an earlier tool",
                path=(index, "name"),
                details={"argument": argument},
            )
        result[name] = _tool_fingerprint(tool)
        raws[name] = tool.raw
    return result, raws


def _tool_fingerprint(tool: Tool) -> str:
    return tool.fingerprint if tool.fingerprint is not None else _fingerprint(tool.raw)
