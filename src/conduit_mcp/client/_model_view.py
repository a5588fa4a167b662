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

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import orjson

from . import _wire as w
from ._errors import PathItem, cycle_error
from ._jsonrules import Link, link_keys
from ._unicode import has_hidden, has_hidden_utf8

#: Schema keywords whose value is data (an instance), not a subschema: every string in it is read.
DATA_KEYWORDS: Final = frozenset({"enum", "const", "default", "examples"})

#: Schema keywords whose string value is prose for a reader.
PROSE_KEYWORDS: Final = frozenset({w.TITLE, w.DESCRIPTION})

#: The schema members of a tool that hold prose a model reads.
SCHEMA_MEMBERS: Final = (w.INPUT_SCHEMA, w.OUTPUT_SCHEMA)

_PROPERTIES: Final = "properties"


_LEAVE: Final = object()  # a `cycle_path` stack entry that closes a container
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def cycle_path(value: object) -> tuple[PathItem, ...] | None:
    """The path to the first container met again inside itself, or None when `value` has no
    reference cycle.

    Args:
        value: any Python value; dicts (and other mappings), lists and tuples are walked. Not
            mutated.

    Returns:
        Keys and indexes from `value` to the place where a container on the current path
        appears again (e.g. `("properties", "a")` for `s["properties"]["a"] = s`), or None.
        Shared, acyclic sub-values are not cycles.

    Total: an explicit stack; each container is walked once (a finished one is acyclic
    below, so meeting it again is skipped), linear in the number of members.

    Spec: RFC 8259 (a JSON value is a finite tree); conduit-defined: the one treatment of
    cycles (`_errors.cycle_error`).
    """
    on_path: set[int] = set()
    done: set[int] = set()
    # (container, its place) to enter, or (_LEAVE, its id) to take it off the current path
    stack: list[tuple[Any, Any]] = [(value, None)]
    pop, push = stack.pop, stack.append
    while stack:
        item, place = pop()
        if item is _LEAVE:
            on_path.discard(place)
            done.add(place)
            continue
        ident = id(item)
        if ident in on_path:
            return link_keys(place)
        if ident in done:
            continue
        on_path.add(ident)
        push((_LEAVE, ident))
        kind = type(item)
        if kind is dict or (kind is not list and kind is not tuple and isinstance(item, Mapping)):
            members: Iterable[tuple[PathItem, Any]] = item.items()
        else:
            members = enumerate(item)
        for key, child in members:
            child_kind = type(child)
            if child_kind in _SCALARS:  # the common case, one set lookup
                continue
            if (
                child_kind is dict
                or child_kind is list
                or isinstance(child, (Mapping, list, tuple))
            ):
                push((child, (place, key)))
    return None


def refuse_cycle(value: object, prefix: tuple[PathItem, ...] = ()) -> None:
    """Raise the one cycle error when `value` contains itself; return None otherwise.

    orjson serializes the common value at C speed and refuses every cycle (as it refuses huge
    integers, non-`str` keys or depth over 255); only then does `cycle_path` walk it.

    Args:
        value: the value a walker is about to traverse. Not mutated.
        prefix: the path of `value` in the caller's input, put before the cycle's path.

    Raises:
        Error: `cycle_error` (kind `"protocol"`, reason `"invalid_json"`), path `prefix` plus
            the path to the container met again.

    Spec: RFC 8259 (a JSON value is a finite tree); conduit-defined: the one treatment of
    cycles (`_errors.cycle_error`).
    """
    try:
        orjson.dumps(value)
        return
    except TypeError:  # orjson.JSONEncodeError; the cause may not be a cycle
        pass
    path = cycle_path(value)
    if path is not None:
        raise cycle_error((*prefix, *path))


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

    def __init__(self, text: str, parent: Link, step: PathItem, is_key: bool) -> None:
        self.text = text
        self.is_key = is_key
        self._parent = parent
        self._step = step

    @property
    def path(self) -> tuple[PathItem, ...]:
        """The path from the tool object to this string (see the class docstring)."""
        return link_keys((self._parent, self._step))

    def __repr__(self) -> str:
        return f"ModelText(path={self.path!r}, is_key={self.is_key})"


# The place of a container: a `Link` from the tool object, shared, not copied per node
# (typed `Any`: a data-mode entry is never the root, so `node[0]` needs no check).
_Node = Any


def iter_model_text(tool: object, *, plain: bool = True) -> Iterator[ModelText]:
    """Yield every string of a tool that a model reads, with its path.

    Args:
        tool: a tool object as sent (`Tool.raw`, or a raw dict that passed the shape check);
            anything but a `dict` yields nothing, and members of the wrong type are skipped,
            never an error. Not copied, never mutated.
        plain: `False` skips every string without a control or invisible character
            (`_unicode.has_hidden`), and whole schemas without one (checked on their orjson
            serialization): what a scan for hidden characters needs, cheaply.

    Yields:
        `ModelText` items, in this order: `name`, `title`, `description`, `annotations.title`
        (those that are strings), then the strings of `inputSchema` and `outputSchema` in a
        fixed depth-first order: at each schema object, its `title`/`description` and property
        names first, then its members' contents in member order (see the module docstring for
        which strings).

    Raises:
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`) when `tool` (with
            `plain=False`) or a schema member contains itself, path from the tool object to
            the container met again; raised before the walk that would meet it.

    Total: an explicit stack, one visit per JSON node (no recursion, no `RecursionError` at any
    depth); paths are materialized only when `ModelText.path` is read.

    Spec: 2026-07-28 server/tools "Tool" (name, title, description, annotations, inputSchema,
    outputSchema) and "Security Considerations" (clients SHOULD treat tool descriptions and
    annotations from untrusted servers with care); conduit-defined: which schema strings a
    model reads.
    """
    if not isinstance(tool, dict):  # a parsed JSON object (an ABC check costs more than this)
        return
    if not plain and not _maybe_hidden(tool):  # the common case, at C speed
        return
    get = tool.get
    for key in (w.NAME, w.TITLE, w.DESCRIPTION):
        value = get(key)
        if type(value) is str and (plain or not _plain(value)):
            yield ModelText(value, None, key, False)
    annotations = get(w.ANNOTATIONS)
    if type(annotations) is dict:
        value = annotations.get(w.TITLE)
        if type(value) is str and (plain or not _plain(value)):
            yield ModelText(value, (None, w.ANNOTATIONS), w.TITLE, False)
    for member in SCHEMA_MEMBERS:
        schema = get(member)
        if type(schema) is dict or type(schema) is list:
            if plain:
                refuse_cycle(schema, (member,))  # (not plain: checked with the whole tool)
            elif not _maybe_hidden(schema):
                continue
            yield from _walk(schema, (None, member), plain)


def _plain(text: str) -> bool:
    return (text.isascii() and text.isprintable()) or not has_hidden(text)


# What orjson writes for the characters a hidden-character scan looks for: C0 controls as
# `\u00XX` or `\b`/`\f` escapes, DEL raw, everything non-ASCII raw. A literal backslash is
# written `\\`, so a text like `\b` in a `pattern` also matches: a false alarm only costs the
# walk, never a missed character.


def _maybe_hidden(schema: Any) -> bool:
    """Whether a tool or schema may hold a string with a control or invisible character.

    One C-speed serialization and one regex scan instead of a Python walk for the common
    schema that holds none; `True` whenever orjson refuses the value (huge integers, lone
    surrogates, non-str keys, depth over 255), so the walk decides, unless the value
    contains itself (then `cycle_error`, the walk would never end).
    """
    try:
        data = orjson.dumps(schema)
    except TypeError:  # orjson.JSONEncodeError
        path = cycle_path(schema)
        if path is not None:
            raise cycle_error(path) from None
        return True
    return maybe_hidden_json(data)


# A backslash, then `b`, `f` or `u00`: an escape that may stand for a control character (the
# pattern's literal first byte lets the regex engine skip ahead at memchr speed).
_find_control_escape: Final = re.compile(rb"\\(?:[bf]|u00)").search


def maybe_hidden_json(data: bytes) -> bool:
    """Whether JSON text as orjson (or RFC 8785) writes it may hold a string with a control or
    invisible character: `False` proves there is none.

    Args:
        data: compact JSON bytes whose strings escape C0 controls as `\\u00XX`, `\\b` or
            `\\f` (the short forms of tab, LF and CR are harmless) and write every other
            character raw: orjson's output and `canonical_json`'s alike.

    Returns:
        `True` when the text holds one of those escapes (or `\\\\` followed by `b`, `f` or
        `u00`: a false alarm that only costs the walk), DEL, or a non-ASCII character that is
        invisible or a C1 control.

    Total: a few C passes over `data`: each backslash is found at memchr speed, and only the
    bytes after it are looked at.
    """
    # `find`, not `in`: CPython 3.11's bytes `in` formats a TypeError first (proxy/_message.py).
    if data.find(b"\x7f") != -1:
        return True
    if data.find(b"\\") != -1 and _find_control_escape(data) is not None:
        return True
    # Non-ASCII (an em dash, an accent) is common and harmless: look for the characters.
    return not data.isascii() and has_hidden_utf8(data)


_SCHEMA: Final = 0  # stack entry: a (sub)schema position
_DATA: Final = 1  # stack entry: a value inside enum/const/default/examples


def _walk(root: Any, root_node: _Node, plain: bool) -> Iterator[ModelText]:
    # Stack entries: (mode, value, node of the value's own path). Only containers are pushed
    # in schema mode; data values are pushed whole (strings included) in data mode.
    stack: list[tuple[int, Any, _Node]] = [(_SCHEMA, root, root_node)]
    pop, push = stack.pop, stack.append
    prose, data_keywords = PROSE_KEYWORDS, DATA_KEYWORDS
    while stack:
        mode, value, node = pop()
        kind = type(value)
        if mode == _DATA:
            if kind is str:
                if plain or not _plain(value):
                    yield ModelText(value, node[0], node[1], False)
            elif kind is dict:
                for key in reversed(list(value)):
                    push((_DATA, value[key], (node, key)))
            elif kind is list:
                for index in range(len(value) - 1, -1, -1):
                    push((_DATA, value[index], (node, index)))
            continue
        if kind is list:  # prefixItems, allOf, items as an array, ...
            for index in range(len(value) - 1, -1, -1):
                item = value[index]
                if type(item) is dict or type(item) is list:
                    push((_SCHEMA, item, (node, index)))
            continue
        if kind is not dict:
            continue
        pending: list[tuple[int, Any, _Node]] = []
        for key, member in value.items():
            member_kind = type(member)
            if key in prose:
                if member_kind is str and (plain or not _plain(member)):
                    yield ModelText(member, node, key, False)
            elif key in data_keywords:
                pending.append((_DATA, member, (node, key)))
            elif key == _PROPERTIES and member_kind is dict:
                properties = (node, key)
                for name, subschema in member.items():
                    if type(name) is str and (plain or not _plain(name)):
                        yield ModelText(name, properties, name, True)
                    if type(subschema) is dict or type(subschema) is list:
                        pending.append((_SCHEMA, subschema, (properties, name)))
            elif member_kind is dict or member_kind is list:
                pending.append((_SCHEMA, member, (node, key)))
        if pending:
            pending.reverse()
            stack.extend(pending)
