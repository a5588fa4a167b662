"""Which `outputSchema`s the SDK's own output check cannot run safely.

Not a public module. After the guard has validated a `tools/call` result, the official SDK
(`mcp` 2.3.0, `ClientSession.validate_tool_result`) validates `structuredContent` once more,
against the `outputSchema` of the listing it was given, with Python's `jsonschema`:

- `pattern` / `patternProperties` run in Python's `re`: backtracking, holding the GIL, with
  no way to interrupt it. `"^(a+)+$|!$"` against 34 `a`s and `!` (valid under ECMA-262 and
  Rust's engine, which answer at once) hangs `call_tool` for minutes; a pattern `re` cannot
  compile (`\\p{L}`) makes the SDK raise `RuntimeError` ("Invalid schema").
- `uniqueItems: true` falls back to pairwise comparison when the items do not sort (objects,
  mixed types): 2,000 distinct objects took 13.8 s on the bench machine; the server picks n.

The guard has already checked the output with a linear-time engine (jsonschema-rs), so for
such a tool it shows the SDK a copy of the listing without `outputSchema`; the SDK then skips
its check (a tool without an outputSchema has nothing to check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..client import PathItem, Tool
from ..client._cache import MISSING, BoundedCache

#: keyword -> the value that makes it unsafe for the SDK's engine (checked by type / identity).
_REGEX_KEYWORDS: Final = {"pattern": str, "patternProperties": dict}


@dataclass(frozen=True, slots=True)
class Unsafe:
    """Where an outputSchema first uses a keyword the SDK's engine cannot run safely."""

    keyword: str  # "pattern" | "patternProperties" | "uniqueItems"
    path: tuple[PathItem, ...]  # from the outputSchema root to the keyword


_CACHE_SIZE: Final = 1024
#: fingerprint -> the verdict; hits are read lock-free (`peek`).
_cache: BoundedCache[str, Unsafe | None] = BoundedCache(_CACHE_SIZE)


def unsafe_output_schema(tool: Tool) -> Unsafe | None:
    """The first keyword of `tool`'s outputSchema that the SDK's output check cannot run safely.

    Looks everywhere in the schema (`$defs`, `definitions`, under unknown keywords too: a `$ref`
    may point anywhere in the document) with an explicit stack, an object's own keywords before
    its subschemas; each node is visited once, so the cost is linear in the schema. Errs on
    the side of hiding: a `"pattern"` key with a string value inside an `enum` or `const`
    value counts too. A property *named* `pattern` (its value is a schema object, not a
    string) does not.

    Spec: 2025-06-18 and later server/tools "Output Schema" (clients SHOULD validate
    structured results against it; the guard does, so the SDK's second check may be skipped).

    Cached by the tool's fingerprint (a server lists the same tools again and again).

    Args:
        tool: an accepted `Tool` (its `raw["outputSchema"]` may be absent).

    Returns:
        `Unsafe(keyword, path)`, or `None` when there is no outputSchema or nothing unsafe in it.
    """
    fingerprint = tool.fingerprint
    if fingerprint is not None:
        hit = _cache.peek(fingerprint)
        if hit is not MISSING:
            return hit  # type: ignore[no-any-return]
    answer = _find(tool.raw.get("outputSchema"))
    if fingerprint is not None:
        _cache.put(fingerprint, answer)
    return answer


def _find(schema: object) -> Unsafe | None:
    # Parent links instead of a path per node: rebuilding the path happens once, on a hit.
    links: list[tuple[int, PathItem]] = []  # node index -> (parent index, key)
    stack: list[tuple[object, int]] = [(schema, -1)]
    while stack:
        node, index = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if _unsafe(key, value):
                    return Unsafe(key, (*_path(links, index), key))
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        else:
            continue
        for key, value in reversed(children):  # reversed: popped in document order
            if isinstance(value, (dict, list)):
                links.append((index, key))
                stack.append((value, len(links) - 1))
    return None


def _unsafe(key: object, value: object) -> bool:
    if key == "uniqueItems":
        return value is True
    expected = _REGEX_KEYWORDS.get(key) if isinstance(key, str) else None
    return expected is not None and isinstance(value, expected)


def _path(links: list[tuple[int, PathItem]], index: int) -> tuple[PathItem, ...]:
    keys: list[PathItem] = []
    while index >= 0:
        index, key = links[index]
        keys.append(key)
    return tuple(reversed(keys))
