"""Shared schema translation for the provider adapters (`_openai`, `_anthropic`, `_gemini`).

One walker copies a tool's `inputSchema` node by node with an explicit stack and hands each
keyword to the handler its provider's table names (keyword -> handler); each provider module
also keeps its rules as data (`Rule`: what, and the document it comes from). Every change is a
`SchemaNote`. Notes are bounded: at most `MAX_NOTES` are listed (one more counts the rest), and
a note's path is a `SchemaPath`, a linked list whose prefixes are shared with the walk and with
the other notes, so a note costs O(1) memory whatever its depth.

Also here: the root rules every provider shares (`object_root`), the one function every
description and title goes through on its way into a declaration (`clean_text`). The keyword
table (2020-12 handlers, draft-04/06/07 translations) is `_keywords`.

Spec: 2026-07-28 schema `Tool.inputSchema` ("Tool arguments are always JSON objects, so
`type: "object"` is required at the root. Beyond that, any JSON Schema 2020-12 keyword may
appear"), and server/tools "Tool" (`inputSchema` MUST be a valid JSON Schema object).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple, overload

from ..client import _wire as w
from ..client._errors import Error, PathItem, json_type_name
from ..client._jsonrules import Link, escape_token, is_index_token, link_keys, unescape_token
from ..client._model_view import refuse_cycle
from ..client._tool import Tool
from ..client._unicode import clean_model_text
from ._provider_names import ToolNameMap, standalone_name

JSONObject = dict[str, Any]

NoteAction = Literal["dropped", "added", "rewritten", "flagged"]
"""What an adapter did at a place in the schema: removed a keyword, added one, changed one, or
left something in place that the provider documents as unsupported."""

#: Notes listed per declaration; past it one note counts the rest.
MAX_NOTES: Final = 1_000


class SchemaPath(Sequence[PathItem]):
    """A path from the root of `inputSchema`: keys and indexes, as an immutable sequence.

    It compares, hashes and orders like the equal `tuple` (`SchemaPath(...) == ("a", 0)`), but
    holds a link to its parent place, shared with the walk that made it and with the other
    notes: holding a note costs O(1) memory, not O(depth). `tuple(path)` gives a plain tuple.
    """

    __slots__ = ("_link",)

    def __init__(self, link: Link = None) -> None:
        self._link = link

    def as_tuple(self) -> tuple[PathItem, ...]:
        """The keys from the root, as a new tuple (O(depth))."""
        return link_keys(self._link)

    def __len__(self) -> int:
        return len(self.as_tuple())

    @overload
    def __getitem__(self, index: int) -> PathItem: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[PathItem, ...]: ...
    def __getitem__(self, index: int | slice) -> PathItem | tuple[PathItem, ...]:
        if index == -1 and self._link is not None:
            return self._link[1]  # the last key, O(1)
        return self.as_tuple()[index]

    def __iter__(self) -> Iterator[PathItem]:
        return iter(self.as_tuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SchemaPath, tuple)):
            return self.as_tuple() == tuple(other)
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, (SchemaPath, tuple)):
            return self.as_tuple() < tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return repr(self.as_tuple())


ROOT: Final[Link] = None
"""The root place of a walk."""


class SchemaNote(NamedTuple):
    """One change an adapter made for a provider (or a warning about what it kept).

    Attributes:
        path: keys and indexes from the root of `inputSchema` to the keyword concerned, a
            `SchemaPath` (compares equal to the same keys as a tuple); for a schema reached
            through an inlined `$ref`, the path of the referring place. When `where` is
            `"tool"`, the path is into the tool object instead (e.g. `("description",)`).
        action: `"dropped"`, `"added"`, `"rewritten"` or `"flagged"` (kept, but the provider
            documents it as unsupported).
        detail: why, in one line for a person.
        where: `"inputSchema"` (the default) or `"tool"`.
    """

    path: Sequence[PathItem]
    action: NoteAction
    detail: str
    where: Literal["inputSchema", "tool"] = "inputSchema"

    @property
    def keyword(self) -> str | None:
        """The keyword (or property name) the note is about: the last key of `path`."""
        if len(self.path) == 0:
            return None
        last = self.path[-1]
        return last if isinstance(last, str) else None


class AdaptedTool(NamedTuple):
    """A provider declaration built from one MCP tool.

    Attributes:
        name: the name the model sees (route its calls back with `ToolNameMap.resolve`).
        declaration: the declaration, a JSON-ready dict. Its schema is a new tree of dicts,
            but leaf values (`enum` lists, `default`s, `examples`) are shared with `tool.raw`:
            treat it as read-only, or deep-copy it before changing it.
        notes: every change made for this provider, in walk order (at most `MAX_NOTES`, then
            one note counting the rest); empty when the schema went through as sent.
        strict: whether the declaration is an OpenAI strict-mode one (always `False` for the
            other providers).
    """

    name: str
    declaration: JSONObject
    notes: tuple[SchemaNote, ...]
    strict: bool = False


class Rule(NamedTuple):
    """One provider rule the adapter enforces, as data: what it says, and where it is written.

    Attributes:
        keyword: the keyword (or `"*"` for the whole schema, `"(root)"` for the root).
        rule: what the provider requires or refuses.
        source: the document the rule comes from (provider docs page, SDK type, or API error).
    """

    keyword: str
    rule: str
    source: str


class Notes:
    """The notes of one declaration, bounded in count (`MAX_NOTES` listed, the rest counted)."""

    __slots__ = ("items", "unlisted")

    def __init__(self) -> None:
        self.items: list[SchemaNote] = []
        self.unlisted = 0

    def add(
        self,
        path: Link,
        action: NoteAction,
        detail: str,
        where: Literal["inputSchema", "tool"] = "inputSchema",
    ) -> None:
        """Record a note (or count it, past the bound)."""
        if len(self.items) >= MAX_NOTES:
            self.unlisted += 1
            return
        self.items.append(SchemaNote(SchemaPath(path), action, detail, where))

    def at(self, path: Link, key: PathItem, action: NoteAction, detail: str) -> None:
        """Record a note about `key` inside the node at `path` (the child path is made only
        when the note is listed)."""
        if len(self.items) >= MAX_NOTES:
            self.unlisted += 1
            return
        self.items.append(SchemaNote(SchemaPath((path, key)), action, detail))

    def extend(self, other: Notes) -> None:
        """Append another walk's notes (within this list's bound)."""
        for note in other.items:
            if len(self.items) >= MAX_NOTES:
                self.unlisted += 1
            else:
                self.items.append(note)
        self.unlisted += other.unlisted

    def finish(self) -> tuple[SchemaNote, ...]:
        """The listed notes, plus one counting the unlisted ones when there are any."""
        if self.unlisted:
            extra = SchemaNote(
                SchemaPath(ROOT), "dropped", f"{self.unlisted} further changes not listed"
            )
            return (*self.items, extra)
        return tuple(self.items)


# -- text ---------------------------------------------------------------------------------------


def clean_text(text: str, notes: Notes, path: Link, where: str = "inputSchema") -> str:
    """The one door every description and title passes on its way into a declaration.

    Removes what `_unicode.clean_model_text` removes for `shape_for_llm` too (whole terminal
    escape sequences, C0/C1 controls except tab, LF and CR, and invisible characters) and
    notes how many, at `path`. Returns the cleaned text (the same object when nothing was
    removed).
    """
    cleaned, removed = clean_model_text(text)
    if removed:
        detail = f"{removed} hidden characters removed (invisible, control or escape)"
        notes.add(path, "rewritten", detail, "tool" if where == "tool" else "inputSchema")
    return cleaned


# -- tools and names ----------------------------------------------------------------------------


def check_tool(tool: object) -> Tool:
    """`tool` itself, or TypeError when it is not a `Tool` (a caller bug)."""
    if not isinstance(tool, Tool):
        raise TypeError(f"expected a Tool, got {type(tool).__name__}")
    return tool


def input_schema(tool: Tool) -> JSONObject:
    """`tool.input_schema`, once it is known to hold no reference cycle (the walks would not end).

    Raises:
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`), path from `("inputSchema",)`
            to the container met again, when a hand-built schema contains itself.
    """
    schema = tool.input_schema
    refuse_cycle(schema, (w.INPUT_SCHEMA,))
    return schema


def declared_name(tool: Tool, provider: str, names: ToolNameMap | None) -> str:
    """The name the provider's model sees: from `names` (the tool is added) or standalone."""
    if names is None:
        return standalone_name(provider, tool.server_id, tool.name)
    if not isinstance(names, ToolNameMap):
        raise TypeError(f"names must be a ToolNameMap or None, got {type(names).__name__}")
    if names.provider != provider:
        raise ValueError(f"names is a ToolNameMap for {names.provider!r}, not {provider!r}")
    return names.add(tool)


def tool_description(tool: Tool, notes: Notes) -> str | None:
    """The tool's description, cleaned (noted at `("description",)` of the tool), or None."""
    description = tool.description
    if description is None:
        return None
    return clean_text(description, notes, (ROOT, "description"), "tool")


def declaration_start(
    tool: Tool,
    provider: str,
    names: ToolNameMap | None,
    forbidden: Sequence[str],
    parameter_name: re.Pattern[str],
    notes: Notes,
) -> tuple[JSONObject, JSONObject]:
    """The part of a function declaration every name-checked provider shares.

    Returns `(root, declaration)`: the accepted `inputSchema` root (`object_root`, properties
    optional, top-level names outside `parameter_name` flagged) and `{"name"[, "description"]}`
    with the declared name (taken after the root, so a refused tool claims no name) and the
    cleaned description.

    Raises:
        Error: as `object_root` and `input_schema` (`invalid_tool`, a cycle).
        TypeError, ValueError: as `declared_name`.
    """
    root = object_root(input_schema(tool), forbidden, notes, need_properties=False)
    flag_parameter_names(root, parameter_name, provider, notes)
    declaration: JSONObject = {"name": declared_name(tool, provider, names)}
    description = tool_description(tool, notes)
    if description is not None:
        declaration["description"] = description
    return root, declaration


# -- the root -----------------------------------------------------------------------------------

_MERGEABLE: Final = frozenset({"allOf", "anyOf", "oneOf"})


def object_root(
    schema: JSONObject, forbidden: Sequence[str], notes: Notes, *, need_properties: bool
) -> JSONObject:
    """A shallow copy of `schema` whose root a provider accepts as a function's parameters.

    A missing root `type` becomes `"object"`; a type list holding `"object"` is narrowed;
    non-object `properties` becomes `{}`; a malformed `required` is cleaned; each keyword in
    `forbidden` is removed (inline `allOf`/`anyOf`/`oneOf` branches' properties merged in);
    `need_properties` adds `properties: {}` when absent.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` is present and
            admits no object (such a tool cannot take MCP arguments, which are an object).
    """
    out = dict(schema)
    if "type" not in out:
        out["type"] = "object"
        notes.add((ROOT, "type"), "added", 'root "type": "object" added')
    elif out["type"] != "object":
        kind = out["type"]
        if isinstance(kind, list) and "object" in kind:
            out["type"] = "object"
            notes.add((ROOT, "type"), "rewritten", 'root "type" narrowed to "object"')
        else:
            got = kind if isinstance(kind, str) and len(kind) <= 16 else json_type_name(kind)
            raise Error(
                "protocol",
                "invalid_tool",
                '$.inputSchema.type must be "object" (tool arguments are an object)',
                path=(w.INPUT_SCHEMA, "type"),
                details={"expected": "object", "got": got},
            )
    properties = out.get("properties")
    if "properties" in out and not isinstance(properties, dict):
        out["properties"] = {}
        detail = f"root properties was {json_type_name(properties)}"
        notes.add((ROOT, "properties"), "rewritten", detail)
    required = out.get("required")
    if "required" in out and not (
        isinstance(required, list) and all(isinstance(item, str) for item in required)
    ):
        if isinstance(required, list):
            out["required"] = [item for item in required if isinstance(item, str)]
            notes.add((ROOT, "required"), "rewritten", "non-string entries removed")
        else:
            del out["required"]
            detail = f"root required was {json_type_name(required)}"
            notes.add((ROOT, "required"), "dropped", detail)
    for keyword in forbidden:
        if keyword in out:
            _merge_root_branches(out, keyword, notes)
    if need_properties and "properties" not in out:
        # OpenAI: "object schema missing properties"; {} says "no named parameters".
        out["properties"] = {}
        notes.add((ROOT, "properties"), "added", "empty root properties added")
    return out


def flag_parameter_names(
    root: JSONObject, pattern: re.Pattern[str], provider: str, notes: Notes
) -> None:
    """Flag (keep) top-level property names outside the provider's documented rule."""
    props = root.get("properties")
    if isinstance(props, dict):
        here = (ROOT, "properties")
        for key in props:
            if not pattern.fullmatch(key):
                detail = (
                    f"parameter name outside {provider}'s documented rule (kept: the tool "
                    "needs it as is)"
                )
                notes.at(here, key, "flagged", detail)


def _merge_root_branches(out: JSONObject, keyword: str, notes: Notes) -> None:
    """Remove a root keyword the provider refuses; fold object branches' properties in."""
    branches = out.pop(keyword)
    if keyword not in _MERGEABLE or not isinstance(branches, list):
        notes.add((ROOT, keyword), "dropped", "not accepted at the root by this provider")
        return
    props = out.get("properties")
    merged: JSONObject = dict(props) if isinstance(props, dict) else {}
    required = list(out.get("required") or ())
    for branch in branches:
        if not isinstance(branch, dict):
            continue
        branch_props = branch.get("properties")
        if isinstance(branch_props, dict):
            for key, value in branch_props.items():
                merged.setdefault(key, value)
        branch_required = branch.get("required")
        if keyword == "allOf" and isinstance(branch_required, list):
            required.extend(r for r in branch_required if isinstance(r, str) and r not in required)
    out["properties"] = merged
    if required:
        out["required"] = required
    notes.add(
        (ROOT, keyword),
        "dropped",
        "not accepted at the root by this provider; the properties of its inline branches were "
        "merged into the root"
        + (" (with their required lists)" if keyword == "allOf" else " (all optional)"),
    )


# -- the JSON Schema walker ----------------------------------------------------------------------

Handler = Callable[["SchemaWalk", JSONObject, JSONObject, str, Any, Link], None]
"""A keyword handler: (walk, source node, destination node, keyword, value, node's path).
It writes what the provider should see into the destination (or nothing) and notes why."""

Fixer = Callable[["SchemaWalk", JSONObject, JSONObject, Link], None]
"""A node rule run after a node's keywords: (walk, source node, destination node, path)."""

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"


class SchemaWalk:
    """One copy of a JSON Schema through a keyword -> handler table (explicit stack).

    Each source object node becomes a new destination dict; each keyword goes to
    `handlers.get(keyword, default)`; then every fixer runs on the node. Sub-schemas are pushed
    on the stack by `schema`/`schema_map`/`schema_list`, so depth never recurses. Cost: linear
    in the schema's size (a `$ref` is copied, never followed).
    """

    __slots__ = ("default", "fixers", "handlers", "moved", "notes", "refs", "stack", "state")

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        fixers: Sequence[Fixer],
        notes: Notes,
        default: Handler | None = None,
    ) -> None:
        self.handlers = handlers
        self.fixers = fixers
        self.notes = notes
        self.default = default or copy_keyword
        self.stack: list[tuple[JSONObject, JSONObject, Link]] = []
        # (source path of a node, old keyword) -> new keyword, for rewriting local $refs
        self.moved: dict[tuple[tuple[PathItem, ...], str], str] = {}
        self.refs: list[JSONObject] = []  # destination nodes holding a local "$ref"
        self.state: dict[str, Any] = {}  # provider-specific per-walk data

    def run(self, root: JSONObject) -> JSONObject:
        """Translate `root` (already root-adjusted); returns the new schema."""
        out: JSONObject = {}
        self.stack.append((root, out, ROOT))
        while self.stack:
            source, dst, path = self.stack.pop()
            self.node(source, dst, path)
        if self.moved and self.refs:
            self.rewrite_refs()
        return out

    def node(self, source: JSONObject, dst: JSONObject, path: Link) -> None:
        """Translate one object node into `dst`."""
        handlers = self.handlers
        for key, value in source.items():
            if not isinstance(key, str):  # pragma: no cover - JSON keys are strings
                continue
            handlers.get(key, self.default)(self, source, dst, key, value, path)
        for fixer in self.fixers:
            fixer(self, source, dst, path)

    # -- sub-schemas ---------------------------------------------------------------------------

    def sub(self, value: object, path: Link) -> object:
        """The destination for one sub-schema at `path`: a new dict (queued), or a boolean
        schema as is; `None` (noted) for anything else."""
        if isinstance(value, dict):
            child: JSONObject = {}
            self.stack.append((value, child, path))
            return child
        if isinstance(value, bool):
            return value
        self.notes.add(path, "dropped", f"{json_type_name(value)}, not a schema")
        return None

    def schema(
        self, dst: JSONObject, key: str, value: object, path: Link, *, source_key: str = ""
    ) -> None:
        """`dst[key]` = the translation of the sub-schema `value` (dropped if not a schema)."""
        child = self.sub(value, (path, source_key or key))
        if child is not None:
            dst[key] = child

    def schema_map(
        self, dst: JSONObject, key: str, value: object, path: Link, *, source_key: str = ""
    ) -> None:
        """`dst[key]` = a map of names to translated sub-schemas (`source_key`: the keyword's
        name in the source, when it is renamed)."""
        here = (path, source_key or key)
        if not isinstance(value, dict):
            self.notes.add(here, "dropped", f"{json_type_name(value)}, not an object of schemas")
            return
        out: JSONObject = {}
        for name, sub in value.items():
            child = self.sub(sub, (here, name))
            if child is not None:
                out[name] = child
        dst[key] = out

    def schema_list(
        self, dst: JSONObject, key: str, value: object, path: Link, *, source_key: str = ""
    ) -> None:
        """`dst[key]` = a non-empty list of translated sub-schemas (dropped when empty)."""
        here = (path, source_key or key)
        if not isinstance(value, list) or not value:
            what = "empty list" if isinstance(value, list) else json_type_name(value)
            self.notes.add(here, "dropped", f"{what}, not a non-empty list of schemas")
            return
        out: list[object] = []
        for index, sub in enumerate(value):
            child = self.sub(sub, (here, index))
            if child is not None:
                out.append(child)
        if out:
            dst[key] = out

    def move(self, path: Link, old: str, new: str) -> None:
        """Record that keyword `old` of the node at `path` now lives at `new` (for $refs)."""
        if len(self.moved) < MAX_NOTES:  # each entry holds a path tuple: keep the map bounded
            self.moved[(link_keys(path), old)] = new

    def rewrite_refs(self) -> None:
        """Point local `$ref`s at keywords that moved (`definitions` -> `$defs`, ...)."""
        for dst in self.refs:
            ref = dst["$ref"]
            parts = ref[2:].split("/") if ref.startswith("#/") else []
            if len(parts) > 64:
                continue
            prefix: list[PathItem] = []
            changed = False
            for index, raw in enumerate(parts):
                key = unescape_token(raw)
                new = self.moved.get((tuple(prefix), key))
                if new is not None:
                    parts[index] = escape_token(new)
                    changed = True
                prefix.append(int(key) if is_index_token(key) else key)
            if changed:
                dst["$ref"] = "#/" + "/".join(parts)


# -- the walker's default handler -----------------------------------------------------------------


def copy_keyword(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    """Keep a keyword as is (annotations, `const`, `default`, unknown keywords)."""
    dst[key] = value
