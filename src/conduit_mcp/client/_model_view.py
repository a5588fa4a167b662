"""What a model reads of a tool: the one definition intake scans and the adapters clean.

A model is shown a tool's `name`, `title`, `description` and `annotations.title`, and the
provider adapters forward the `inputSchema` (and hosts often the `outputSchema`) whose prose a
model reads just as closely: tool poisoning moves from the description into a parameter's
description, a property name, an enum value or a default. `iter_model_text` yields every such
string with its exact path, so one scan covers all of them.

Inside `inputSchema` and `outputSchema` (walked as JSON Schema, every keyword's subschemas
included):

- every `title` and `description` that is a string;
- every property name (the keys of `properties`);
- every string inside the values of `enum`, `const`, `default` and `examples`, at any depth.

Keys of `$defs`, `definitions`, `patternProperties` and other maps are not prose and are not
yielded; the schemas under them are walked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from . import _wire as w
from ._errors import PathItem

#: Schema keywords whose value is data (an instance), not a subschema: every string in it is read.
DATA_KEYWORDS: Final = frozenset({"enum", "const", "default", "examples"})

#: Schema keywords whose string value is prose for a reader.
PROSE_KEYWORDS: Final = frozenset({w.TITLE, w.DESCRIPTION})

#: The schema members of a tool that hold prose a model reads.
SCHEMA_MEMBERS: Final = (w.INPUT_SCHEMA, w.OUTPUT_SCHEMA)

_PROPERTIES: Final = "properties"


class ModelText:
    """One string a model reads, and where it sits in the tool.

    Attributes:
        text: the string, exactly as in the tool (never copied or changed).
        path: keys and indexes from the tool object to the string, e.g.
            `("inputSchema", "properties", "id", "description")`; for a property name, the
            path of that property (`("inputSchema", "properties", "id")`). Built on demand
            (a parent chain is kept), so a deep schema costs linear time to walk.
        is_key: whether `text` is an object key (a property name) rather than a value.
    """

    __slots__ = ("_parent", "_step", "is_key", "text")

    def __init__(self, text: str, parent: _Node | None, step: PathItem, is_key: bool) -> None:
        self.text = text
        self.is_key = is_key
        self._parent = parent
        self._step = step

    @property
    def path(self) -> tuple[PathItem, ...]:
        """The path from the tool object to this string (see the class docstring)."""
        return (*_path(self._parent), self._step)

    def __repr__(self) -> str:
        return f"ModelText(path={self.path!r}, is_key={self.is_key})"


class _Node:
    # One step of a path, with a link to its parent: paths are shared, not copied per node.
    __slots__ = ("parent", "step")

    def __init__(self, parent: _Node | None, step: PathItem) -> None:
        self.parent = parent
        self.step = step


def _path(node: _Node | None) -> tuple[PathItem, ...]:
    steps: list[PathItem] = []
    while node is not None:
        steps.append(node.step)
        node = node.parent
    steps.reverse()
    return tuple(steps)


_SCHEMA: Final = 0  # stack entry: a (sub)schema position
_DATA: Final = 1  # stack entry: a value inside enum/const/default/examples


def iter_model_text(tool: Mapping[str, Any]) -> Iterator[ModelText]:
    """Yield every string of a tool that a model reads, with its path.

    Args:
        tool: a tool object as sent (`Tool.raw`, or a raw dict that passed the shape check);
            members of the wrong type are skipped, never an error. Not copied, never mutated.

    Yields:
        `ModelText` items, in this order: `name`, `title`, `description`, `annotations.title`
        (those that are strings), then the strings of `inputSchema` and `outputSchema` in a
        fixed depth-first order: at each schema object, its `title`/`description` and property
        names first, then its members' contents in member order (see the module docstring for
        which strings).

    Total: an explicit stack, one visit per JSON node (no recursion, no `RecursionError` at any
    depth); paths are materialized only when `ModelText.path` is read.

    Spec: 2026-07-28 server/tools "Tool" (name, title, description, annotations, inputSchema,
    outputSchema) and "Security Considerations" (clients SHOULD treat tool descriptions and
    annotations from untrusted servers with care); conduit-defined: which schema strings a
    model reads.
    """
    if not isinstance(tool, Mapping):
        return
    for key in (w.NAME, w.TITLE, w.DESCRIPTION):
        value = tool.get(key)
        if isinstance(value, str):
            yield ModelText(value, None, key, False)
    annotations = tool.get(w.ANNOTATIONS)
    if isinstance(annotations, Mapping):
        value = annotations.get(w.TITLE)
        if isinstance(value, str):
            yield ModelText(value, _Node(None, w.ANNOTATIONS), w.TITLE, False)
    for member in SCHEMA_MEMBERS:
        schema = tool.get(member)
        if isinstance(schema, (dict, list)):
            yield from _walk(schema, _Node(None, member))


def _walk(root: Any, root_node: _Node) -> Iterator[ModelText]:
    stack: list[tuple[int, Any, _Node]] = [(_SCHEMA, root, root_node)]
    while stack:
        mode, value, node = stack.pop()
        if mode == _DATA:
            if isinstance(value, str):
                yield ModelText(value, node.parent, node.step, False)
            elif isinstance(value, dict):
                for key in reversed(list(value)):
                    stack.append((_DATA, value[key], _Node(node, key)))
            elif isinstance(value, list):
                for index in range(len(value) - 1, -1, -1):
                    stack.append((_DATA, value[index], _Node(node, index)))
            continue
        if isinstance(value, list):  # prefixItems, allOf, items as an array, ...
            for index in range(len(value) - 1, -1, -1):
                stack.append((_SCHEMA, value[index], _Node(node, index)))
            continue
        if not isinstance(value, dict):
            continue
        pending: list[tuple[int, Any, _Node]] = []
        for key, member in value.items():
            if key in PROSE_KEYWORDS and isinstance(member, str):
                yield ModelText(member, node, key, False)
            elif key in DATA_KEYWORDS:
                pending.append((_DATA, member, _Node(node, key)))
            elif key == _PROPERTIES and isinstance(member, dict):
                properties = _Node(node, key)
                for name, subschema in member.items():
                    if isinstance(name, str):
                        yield ModelText(name, properties, name, True)
                    pending.append((_SCHEMA, subschema, _Node(properties, name)))
            elif isinstance(member, (dict, list)):
                pending.append((_SCHEMA, member, _Node(node, key)))
        stack.extend(reversed(pending))
