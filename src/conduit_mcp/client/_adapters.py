"""Adapters: an MCP `Tool` as an OpenAI, Anthropic or Gemini tool declaration.

Each adapter reads `tool.raw` (`name`, `description`, `inputSchema`) and builds the provider's
declaration as plain JSON-ready dicts, ready for the provider SDK or its REST API. `tool.raw` is
never modified. Whatever an adapter had to change to make the provider accept the schema is
reported as `SchemaNote`s, never done silently.

Spec: 2026-07-28 schema `Tool.inputSchema` ("Tool arguments are always JSON objects, so
`type: "object"` is required at the root. Beyond that, any JSON Schema 2020-12 keyword may
appear"), and server/tools "Tool" (`inputSchema` MUST be a valid JSON Schema object).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final, Literal, NamedTuple, TypeAlias

import orjson

from . import _wire as w
from ._errors import Error, PathItem, json_type_name
from ._provider_names import ToolNameMap, standalone_name
from ._tool import Tool

JSONObject = dict[str, Any]

NoteAction = Literal["dropped", "added", "rewritten", "flagged"]
"""What an adapter did at a place in the schema: removed a keyword, added one, changed one, or
left something in place that the provider documents as unsupported."""


class SchemaNote(NamedTuple):
    """One change an adapter made to a tool's `inputSchema` for a provider (or a warning).

    Attributes:
        path: keys and indexes from the root of `inputSchema` to the keyword concerned (for a
            schema reached through `$ref`, the path of the referring place).
        action: `"dropped"`, `"added"`, `"rewritten"` or `"flagged"` (kept, but the provider
            documents it as unsupported).
        detail: one line for a person.
    """

    path: tuple[PathItem, ...]
    action: NoteAction
    detail: str


class AdaptedTool(NamedTuple):
    """A provider declaration built from one MCP tool.

    Attributes:
        name: the name the model sees (route its calls back with `ToolNameMap.resolve`).
        declaration: the declaration, a JSON-ready dict. For OpenAI and Anthropic its schema
            shares nested objects with `tool.raw` (only the root is copied): treat it as
            read-only, or deep-copy it before changing it.
        notes: every change made to the schema for this provider, in walk order; empty when the
            schema went through as sent.
    """

    name: str
    declaration: JSONObject
    notes: tuple[SchemaNote, ...]


# Root keywords each API refuses in a function's parameter schema. OpenAI: "schema must have
# type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level"
# (its invalid_function_parameters message); Anthropic: "input_schema does not support oneOf,
# allOf, or anyOf at the top level" (its invalid_request_error message); Gemini: "parameters
# schema should be of type OBJECT" (Vertex AI).
_ROOT_FORBIDDEN: Final[dict[str, tuple[str, ...]]] = {
    "openai": ("allOf", "anyOf", "oneOf", "not", "enum", "const"),
    "anthropic": ("allOf", "anyOf", "oneOf"),
    "gemini": ("allOf", "anyOf", "oneOf", "not", "enum", "const"),
}

# Parameter (top-level property) names the API documents. Anthropic: "Property keys should
# match pattern '^[a-zA-Z0-9_.-]{1,64}$'" (Messages API 400 message); Gemini:
# google-genai 3.6.1 FunctionDeclaration.parameters ("Parameter names must start with a letter
# or an underscore and must only contain chars a-z, A-Z, 0-9, or underscores with a maximum
# length of 64").
_PARAM_NAME: Final[dict[str, re.Pattern[str]]] = {
    "anthropic": re.compile(r"[a-zA-Z0-9_.-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}"),
}

_MERGEABLE: Final = frozenset({"allOf", "anyOf", "oneOf"})


def _check_tool(tool: object) -> Tool:
    if not isinstance(tool, Tool):
        raise TypeError(f"expected a Tool, got {type(tool).__name__}")
    return tool


def _declared_name(tool: Tool, provider: str, names: ToolNameMap | None) -> str:
    if names is None:
        return standalone_name(provider, tool.server_id, tool.name)
    if not isinstance(names, ToolNameMap):
        raise TypeError(f"names must be a ToolNameMap or None, got {type(names).__name__}")
    if names.provider != provider:
        raise ValueError(f"names is a ToolNameMap for {names.provider!r}, not {provider!r}")
    return names.add(tool)


def _object_root(schema: JSONObject, provider: str) -> tuple[JSONObject, list[SchemaNote]]:
    """A shallow copy of `schema` whose root the provider accepts as a function's parameters.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` is present and
            admits no object (such a tool cannot take MCP arguments, which are an object).
    """
    out = dict(schema)
    notes: list[SchemaNote] = []
    if "type" not in out:
        out["type"] = "object"
        notes.append(SchemaNote(("type",), "added", 'root "type": "object" added'))
    elif out["type"] != "object":
        kind = out["type"]
        if isinstance(kind, list) and "object" in kind:
            out["type"] = "object"
            notes.append(SchemaNote(("type",), "rewritten", 'root "type" narrowed to "object"'))
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
        notes.append(
            SchemaNote(
                ("properties",), "rewritten", f"root properties was {json_type_name(properties)}"
            )
        )
    required = out.get("required")
    if "required" in out and not (
        isinstance(required, list) and all(isinstance(item, str) for item in required)
    ):
        if isinstance(required, list):
            out["required"] = [item for item in required if isinstance(item, str)]
            notes.append(SchemaNote(("required",), "rewritten", "non-string entries removed"))
        else:
            del out["required"]
            notes.append(
                SchemaNote(
                    ("required",), "dropped", f"root required was {json_type_name(required)}"
                )
            )
    for keyword in _ROOT_FORBIDDEN[provider]:
        if keyword in out:
            _merge_root_branches(out, keyword, provider, notes)
    if "properties" not in out and provider == "openai":
        # OpenAI: "object schema missing properties"; {} says "no named parameters".
        out["properties"] = {}
        notes.append(SchemaNote(("properties",), "added", "empty root properties added"))
    pattern = _PARAM_NAME.get(provider)
    props = out.get("properties")
    if pattern is not None and isinstance(props, dict):
        for key in props:
            if not pattern.fullmatch(key):
                notes.append(
                    SchemaNote(
                        ("properties", key),
                        "flagged",
                        f"parameter name outside {provider}'s documented rule (kept: the tool "
                        "needs it as is)",
                    )
                )
    return out, notes


def _merge_root_branches(
    out: JSONObject, keyword: str, provider: str, notes: list[SchemaNote]
) -> None:
    """Remove a root keyword the provider refuses; fold object branches' properties in."""
    branches = out.pop(keyword)
    if keyword not in _MERGEABLE or not isinstance(branches, list):
        notes.append(SchemaNote((keyword,), "dropped", f"not accepted at the root by {provider}"))
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
    notes.append(
        SchemaNote(
            (keyword,),
            "dropped",
            f"not accepted at the root by {provider}; the properties of its inline branches were "
            "merged into the root"
            + (" (with their required lists)" if keyword == "allOf" else " (all optional)"),
        )
    )


def to_openai_tool(
    tool: Tool,
    names: ToolNameMap | None = None,
    *,
    api: Literal["chat_completions", "responses"] = "chat_completions",
) -> AdaptedTool:
    """Build an OpenAI function tool from an MCP tool.

    The schema goes through as JSON Schema; only its root is adjusted where OpenAI refuses it
    (each change is a `SchemaNote`): a missing root `type` becomes `"object"`, missing or
    non-object root `properties` becomes `{}`, a malformed root `required` is cleaned, and root
    `allOf`/`anyOf`/`oneOf` (their inline branches' properties are merged into the root) and
    `not`/`enum`/`const` are removed. Non-strict mode: MCP schemas rarely meet strict mode's
    subset.

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"openai"` that names this model's tools (the tool is
            added to it). `None`: the tool's own name, mapped into OpenAI's charset only when it
            has to be (no server prefix, no collision handling).
        api: `"chat_completions"` gives `{"type": "function", "function": {"name",
            "description", "parameters"}}` (openai `ChatCompletionFunctionToolParam`);
            `"responses"` gives `{"type": "function", "name", "description", "parameters",
            "strict": false}` (openai `responses.FunctionToolParam`; strict is spelled out
            because the Responses API otherwise defaults to strict).

    Returns:
        `AdaptedTool`; `description` is omitted when the tool has none.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        TypeError, ValueError: `tool` is not a `Tool`, `names` is not a map for `"openai"`, or
            `api` is unknown (caller bugs).

    Total: only the root of the schema is read; depth and size do not matter.

    Provider rules: OpenAI API reference "FunctionDefinition" (name `^[a-zA-Z0-9_-]{1,64}$`;
    `parameters` "described as a JSON Schema object").
    """
    tool = _check_tool(tool)
    if api not in ("chat_completions", "responses"):
        raise ValueError(f"unknown OpenAI api {api!r}")
    parameters, notes = _object_root(tool.input_schema, "openai")
    name = _declared_name(tool, "openai", names)  # after the schema: no name for a refused tool
    description = tool.description
    function: JSONObject = {"name": name}
    if description is not None:
        function["description"] = description
    function["parameters"] = parameters
    if api == "responses":
        declaration = {"type": "function", **function, "strict": False}
    else:
        declaration = {"type": "function", "function": function}
    return AdaptedTool(name, declaration, tuple(notes))


def to_anthropic_tool(tool: Tool, names: ToolNameMap | None = None) -> AdaptedTool:
    """Build an Anthropic (Messages API) client tool from an MCP tool.

    The schema goes through as JSON Schema; only its root is adjusted where the API refuses it
    (each change is a `SchemaNote`): a missing root `type` becomes `"object"`, a non-object root
    `properties` becomes `{}`, a malformed root `required` is cleaned, and root
    `allOf`/`anyOf`/`oneOf` are removed (their inline branches' properties merged into the
    root). Parameter names outside `^[a-zA-Z0-9_.-]{1,64}$` are flagged, not renamed.

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"anthropic"` (the tool is added to it), or `None` for the
            tool's own name, mapped into the charset only when it has to be.

    Returns:
        `AdaptedTool` whose declaration is `{"name", "description", "input_schema"}` (anthropic
        `ToolParam`); `description` is omitted when the tool has none.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        TypeError, ValueError: `tool` is not a `Tool` or `names` is not a map for
            `"anthropic"` (caller bugs).

    Total: only the root of the schema is read.

    Provider rules: Claude docs, tool use "Specifying client tools" (name
    `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` "A JSON Schema object defining the expected
    parameters").
    """
    tool = _check_tool(tool)
    input_schema, notes = _object_root(tool.input_schema, "anthropic")
    name = _declared_name(tool, "anthropic", names)
    declaration: JSONObject = {"name": name}
    description = tool.description
    if description is not None:
        declaration["description"] = description
    declaration["input_schema"] = input_schema
    return AdaptedTool(name, declaration, tuple(notes))


def to_gemini_function(
    tool: Tool,
    names: ToolNameMap | None = None,
    *,
    schema: Literal["subset", "json_schema"] = "subset",
) -> AdaptedTool:
    """Build a Gemini `FunctionDeclaration` (as a dict) from an MCP tool.

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"gemini"` (the tool is added to it), or `None` for the
            tool's own name, mapped into the charset only when it has to be.
        schema: `"subset"` converts `inputSchema` to Gemini's OpenAPI-3.0 `Schema` subset in
            `parameters` (see below); `"json_schema"` passes it as JSON Schema in
            `parametersJsonSchema`, with only the root adjusted as for OpenAI.

    Returns:
        `AdaptedTool` whose declaration is `{"name", "description", "parameters"}` or
        `{"name", "description", "parametersJsonSchema"}` (google-genai
        `types.FunctionDeclaration`, REST field names). With `"subset"`, `parameters` is
        omitted when the tool takes no named parameters (Gemini rejects an OBJECT schema with
        empty `properties`; "For function with no parameters, this can be left unset").

    The subset conversion builds a new schema (the input is never modified) and notes every
    keyword it drops or rewrites: local `$ref`s are inlined (recursive ones dropped), `allOf`
    branches merged, `oneOf` becomes `anyOf`, a `type` list becomes `nullable` plus one type or
    an `anyOf` per type, `const` becomes a one-value `enum`, enums of non-strings and `format`s
    Gemini refuses ("only 'enum' and 'date-time' are supported for STRING type") are dropped,
    `required` keeps only declared properties, `examples[0]` becomes `example`, and
    `additionalProperties` ("only supported in Gemini Enterprise Agent Platform mode, not in
    Gemini Developer API mode", google-genai 3.6.1 `_transformers`) and every keyword outside
    google-genai `types.Schema` are dropped.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        TypeError, ValueError: `tool` is not a `Tool`, `names` is not a map for `"gemini"`, or
            `schema` is unknown (caller bugs).

    Total: the subset conversion walks the schema with an explicit stack (any depth), in time
    linear in the schema's size plus what `$ref` inlining adds: inlining stops once 10,000
    schema nodes have been converted, once 1 MiB of referenced definitions (serialized) has
    been inlined, and at 64 references nested inside one another (further `$ref`s are dropped
    with a note), so reference graphs cannot blow up in nodes or in bytes. At most 1,000 notes
    are listed (then one note counts the rest), since each note's path costs its depth.

    Provider rules: google-genai 3.6.1 `types.FunctionDeclaration` and `types.Schema` ("a
    select subset of an OpenAPI 3.0 schema object").
    """
    tool = _check_tool(tool)
    if schema not in ("subset", "json_schema"):
        raise ValueError(f"unknown Gemini schema mode {schema!r}")
    root, notes = _object_root(tool.input_schema, "gemini")
    name = _declared_name(tool, "gemini", names)
    declaration: JSONObject = {"name": name}
    description = tool.description
    if description is not None:
        declaration["description"] = description
    if schema == "json_schema":
        declaration["parametersJsonSchema"] = root
        return AdaptedTool(name, declaration, tuple(notes))
    converted = _GeminiSubset(root, notes).run()
    if converted.get("properties"):
        declaration["parameters"] = converted
    else:
        notes.append(
            SchemaNote(("properties",), "dropped", "no named parameters: parameters omitted")
        )
    return AdaptedTool(name, declaration, tuple(notes))


# -- Gemini subset ------------------------------------------------------------------------------

_GEMINI_TYPES: Final = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}

# Formats the Gemini API takes (google-genai types.Schema.format; the API answers "only 'enum'
# and 'date-time' are supported for STRING type" for others).
_GEMINI_FORMATS: Final = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}

# Keywords that belong to one JSON type, for splitting `type: [a, b]` into anyOf branches
# (as google-genai's own Schema.from_json_schema does).
_TYPE_KEYWORDS: Final = {
    "string": ("enum", "const", "format", "minLength", "maxLength", "pattern"),
    "number": ("enum", "const", "format", "minimum", "maximum"),
    "integer": ("enum", "const", "format", "minimum", "maximum"),
    "object": ("properties", "required", "minProperties", "maxProperties"),
    "array": ("items", "minItems", "maxItems"),
    "boolean": (),
}

_COUNTS: Final = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_BOUNDS: Final = ("minimum", "maximum")
_TEXTS: Final = ("description", "title", "pattern")
# A branch with none of these only narrows its parent's type (converts to an empty schema).
_SHAPE_KEYWORDS: Final = frozenset(
    {"type", "$ref", "properties", "items", "enum", "const", "anyOf", "oneOf", "allOf"}
)

_REF_BUDGET: Final = 10_000  # schema nodes converted before $ref inlining stops
# Serialized bytes of $ref targets inlined per conversion: a node budget alone lets a chain of
# definitions that each reference the next twice multiply a long string (101 KB -> 500 MB).
_INLINE_BYTES: Final = 1 << 20
_MAX_ALLOF_ROUNDS: Final = 32  # allOf directly inside allOf, merged level by level
_MAX_REF_CHAIN: Final = 64  # $refs expanded inside one another on one branch
_MAX_NOTES: Final = 1_000  # listed per conversion; each path costs O(depth) to build

# A path as a linked list (parent, key), materialized only when a note needs it: building a
# tuple per node would cost O(depth) each, O(n * depth) in all.
_Link: TypeAlias = "tuple[_Link, PathItem] | None"
_Put = Callable[[str, Any], None]


def _materialize(link: _Link) -> tuple[PathItem, ...]:
    keys: list[PathItem] = []
    while link is not None:
        link, key = link
        keys.append(key)
    keys.reverse()
    return tuple(keys)


def _is_finite_number(value: object) -> bool:
    # Gemini's bounds are floats: 10**400 or NaN would not survive the SDK's validation.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class _GeminiSubset:
    """One conversion of a JSON Schema to google-genai's `Schema` subset (explicit stack)."""

    __slots__ = ("count", "inlined", "notes", "root", "sizes", "stack", "unlisted")

    def __init__(self, root: JSONObject, notes: list[SchemaNote]) -> None:
        self.root = root
        self.notes = notes
        self.count = 0
        self.unlisted = 0
        self.inlined = 0  # bytes of $ref targets inlined so far
        self.sizes: dict[str, int] = {}
        # (source node, destination dict, path, $refs being expanded, merge-only)
        self.stack: list[tuple[object, JSONObject, _Link, tuple[str, ...], bool]] = []

    def note(self, link: _Link, key: PathItem, action: NoteAction, detail: str) -> None:
        if len(self.notes) >= _MAX_NOTES:
            self.unlisted += 1
            return
        self.notes.append(SchemaNote(_materialize((link, key)), action, detail))

    def run(self) -> JSONObject:
        out: JSONObject = {}
        self.stack.append((self.root, out, None, (), False))
        while self.stack:
            self.convert(*self.stack.pop())
        if self.unlisted:
            detail = f"{self.unlisted} further changes not listed"
            self.notes.append(SchemaNote((), "dropped", detail))
        return out

    # -- references and allOf ---------------------------------------------------------------

    def pointer(self, ref: str) -> object:
        """Resolve a local JSON pointer (`#`, `#/$defs/X`, ...) against the root, or `None`."""
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        node: object = self.root
        for raw in ref[2:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                node = node.get(part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def size_of(self, ref: str, target: JSONObject) -> int:
        """Serialized size of a `$ref` target, once per reference (too deep to serialize:
        over the budget)."""
        size = self.sizes.get(ref)
        if size is None:
            try:
                size = len(orjson.dumps(target))
            except (orjson.JSONEncodeError, TypeError):
                size = _INLINE_BYTES + 1
            self.sizes[ref] = size
        return size

    def deref(
        self, node: JSONObject, link: _Link, chain: tuple[str, ...]
    ) -> tuple[JSONObject, tuple[str, ...]]:
        """Inline `$ref` (siblings win over the target's keywords), following chains."""
        while "$ref" in node:
            ref = node["$ref"]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            problem = None
            target: object = None
            if not isinstance(ref, str) or not ref.startswith("#"):
                problem = "only local references (#...) are inlined"
            elif ref in chain:
                problem = "recursive reference not inlined"
            elif len(chain) >= _MAX_REF_CHAIN:
                problem = "references nested too deeply"
            elif self.count > _REF_BUDGET:
                problem = "inlining budget exhausted"
            else:
                target = self.pointer(ref)
                if isinstance(target, dict):
                    size = self.size_of(ref, target)
                    if self.inlined + size > _INLINE_BYTES:
                        problem, target = "inlining size budget exhausted", None
                    else:
                        self.inlined += size
            if not isinstance(target, dict) or not isinstance(ref, str):
                self.note(link, "$ref", "dropped", problem or "does not resolve to a schema")
                return siblings, chain
            node = {**target, **siblings}
            chain = (*chain, ref)
        return node, chain

    def merge_all_of(
        self, node: JSONObject, link: _Link, chain: tuple[str, ...]
    ) -> tuple[JSONObject, tuple[str, ...]]:
        rounds = 0
        while "allOf" in node:
            node = dict(node)
            branches = node.pop("allOf")
            rounds += 1
            if rounds > _MAX_ALLOF_ROUNDS:
                self.note(link, "allOf", "dropped", "allOf nested too deeply")
                continue
            if not isinstance(branches, list):
                self.note(link, "allOf", "dropped", "not a list of schemas")
                continue
            for index, branch in enumerate(branches):
                if isinstance(branch, dict) and "$ref" in branch:
                    branch, chain = self.deref(branch, (link, "allOf"), chain)
                if not isinstance(branch, dict):
                    if branch is not True:
                        self.note((link, "allOf"), index, "dropped", "not an object schema")
                    continue
                for key, value in branch.items():
                    mine = node.get(key)
                    if key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
                        node[key] = {**value, **mine}
                    elif key == "required" and isinstance(mine, list) and isinstance(value, list):
                        node[key] = mine + [r for r in value if r not in mine]
                    elif key not in node:
                        node[key] = value
            self.note(link, "allOf", "rewritten", "branches merged into one schema")
        return node, chain

    # -- one node ---------------------------------------------------------------------------

    def convert(
        self,
        source: object,
        dst: JSONObject,
        link: _Link,
        chain: tuple[str, ...],
        merge: bool,
    ) -> None:
        self.count += 1
        if not isinstance(source, dict):
            if source is not True:
                what = "false schema" if source is False else json_type_name(source)
                if link is not None:
                    parent, key = link
                    self.note(parent, key, "dropped", f"{what} is not expressible; any value")
            return
        node: JSONObject = source
        if "$ref" in node:
            node, chain = self.deref(node, link, chain)
        if "allOf" in node:
            node, chain = self.merge_all_of(node, link, chain)

        def put(key: str, value: Any) -> None:
            if not (merge and key in dst):
                dst[key] = value

        nullable = node.get("nullable") is True
        gemini_type, json_types = self.type_of(node, link)
        if "null" in json_types:
            nullable = True
        real = [t for t in json_types if t != "null"]
        if len(real) > 1:
            self.split_types(node, real, put, link, chain)
            if nullable:
                put("nullable", True)
            return

        enum, enum_nullable = self.enum_of(node, gemini_type, link)
        nullable = nullable or enum_nullable
        if gemini_type is None:
            if isinstance(node.get("properties"), dict):
                gemini_type = "OBJECT"
            elif "items" in node:
                gemini_type = "ARRAY"
            elif enum is not None:
                gemini_type = "STRING"
        if gemini_type is not None:
            put("type", gemini_type)
        if nullable:
            put("nullable", True)
        if enum is not None:
            put("enum", enum)

        for key, value in node.items():
            if key in _TEXTS:
                if isinstance(value, str):
                    put(key, value)
                else:
                    self.note(link, key, "dropped", f"{json_type_name(value)}, not a string")
            elif key in _COUNTS:
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    put(key, value)
                else:
                    self.note(link, key, "dropped", "not a non-negative integer")
            elif key in _BOUNDS:
                if _is_finite_number(value):
                    put(key, value)
                else:
                    self.note(link, key, "dropped", "not a finite number")
            elif key == "format":
                allowed = _GEMINI_FORMATS.get(gemini_type or "", frozenset())
                if isinstance(value, str) and value in allowed:
                    put(key, value)
                else:
                    self.note(link, key, "dropped", "format not supported by Gemini for this type")
            elif key == "default":
                put(key, value)
            elif key == "example":
                put(key, value)
            elif key == "examples":
                if isinstance(value, list) and value and "example" not in node:
                    put("example", value[0])
                    self.note(link, key, "rewritten", "first example kept as example")
                else:
                    self.note(link, key, "dropped", "not supported by Gemini")
            elif key == "items":
                if isinstance(value, dict) or value is True:
                    items: JSONObject = {}
                    put(key, items)
                    self.stack.append((value, items, (link, key), chain, False))
                else:
                    self.note(link, key, "dropped", "only a single items schema is supported")
            elif key == "properties":
                self.properties(value, put, link, chain)
            elif key == "required":
                self.required(node, value, put, link)
            elif key in ("anyOf", "oneOf"):
                pass  # below, once this node's own keywords are in place
            elif key in ("type", "nullable", "enum", "const", "$defs", "definitions"):
                pass  # handled above, or consumed by $ref inlining
            else:
                self.note(link, key, "dropped", "not supported by Gemini")
        self.alternatives(node, dst, put, link, chain)

    def type_of(self, node: JSONObject, link: _Link) -> tuple[str | None, list[str]]:
        """The Gemini type of a single-typed node, and the node's JSON types as listed."""
        if "type" not in node:
            return None, []
        value = node["type"]
        listed = value if isinstance(value, list) else [value]
        kinds: list[str] = []
        for item in listed:
            if item == "null" or (isinstance(item, str) and item in _GEMINI_TYPES):
                if item not in kinds:
                    kinds.append(item)
            else:
                self.note(link, "type", "dropped", f"unknown type ({json_type_name(item)})")
        real = [k for k in kinds if k != "null"]
        if isinstance(value, list) and len(kinds) > 1:
            self.note(link, "type", "rewritten", "type list as nullable and/or anyOf")
        return (_GEMINI_TYPES[real[0]] if len(real) == 1 else None), kinds

    def split_types(
        self,
        node: JSONObject,
        kinds: list[str],
        put: _Put,
        link: _Link,
        chain: tuple[str, ...],
    ) -> None:
        """`type: [a, b]` as `anyOf: [{a, a's keywords}, {b, b's keywords}]`."""
        branches: list[JSONObject] = []
        used: set[str] = {"type", "nullable", "description", "title", "default", "example"}
        for kind in kinds:
            source = {"type": kind}
            for key in _TYPE_KEYWORDS[kind]:
                if key in node:
                    source[key] = node[key]
                    used.add(key)
            branch: JSONObject = {}
            branches.append(branch)
            self.stack.append((source, branch, link, chain, False))
        put("anyOf", branches)
        for key in ("description", "title", "default", "example"):
            if key in node:
                put(key, node[key])
        for key in node:
            if key not in used:
                self.note(link, key, "dropped", "not expressible next to a list of types")

    def enum_of(
        self, node: JSONObject, gemini_type: str | None, link: _Link
    ) -> tuple[list[str] | None, bool]:
        """Gemini's `enum` (strings on a STRING schema only) from `enum`/`const`; and nullable."""
        values: list[Any]
        if "enum" in node:
            key = "enum"
            raw = node["enum"]
            if not isinstance(raw, list):
                self.note(link, key, "dropped", "not a list")
                return None, False
            values = raw
            if "const" in node:
                self.note(link, "const", "dropped", "enum present")
        elif "const" in node:
            key = "const"
            values = [node["const"]]
        else:
            return None, False
        nullable = any(v is None for v in values)
        strings = [v for v in values if v is not None]
        if not strings:
            return None, nullable
        if not all(isinstance(v, str) for v in strings):
            self.note(link, key, "dropped", "Gemini takes only string enum values")
            return None, nullable
        if gemini_type not in (None, "STRING"):
            self.note(link, key, "dropped", "Gemini takes enum only on STRING schemas")
            return None, nullable
        if key == "const":
            self.note(link, key, "rewritten", "const as a one-value enum")
        return strings, nullable

    def properties(self, value: object, put: _Put, link: _Link, chain: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            self.note(link, "properties", "dropped", f"{json_type_name(value)}, not an object")
            return
        here = (link, "properties")
        props: JSONObject = {}
        for name, sub in value.items():
            if isinstance(sub, dict) or isinstance(sub, bool):
                child: JSONObject = {}
                props[name] = child
                self.stack.append((sub, child, (here, name), chain, False))
            else:
                self.note(here, name, "dropped", f"{json_type_name(sub)}, not a schema")
        put("properties", props)

    def required(self, node: JSONObject, value: object, put: _Put, link: _Link) -> None:
        props = node.get("properties")
        declared = props if isinstance(props, dict) else {}
        if not isinstance(value, list):
            self.note(link, "required", "dropped", f"{json_type_name(value)}, not a list")
            return
        kept = [
            n for n in value if isinstance(n, str) and isinstance(declared.get(n), (dict, bool))
        ]
        if len(kept) != len(value):
            self.note(link, "required", "rewritten", "names without a property schema removed")
        if kept:
            put("required", kept)

    def alternatives(
        self, node: JSONObject, dst: JSONObject, put: _Put, link: _Link, chain: tuple[str, ...]
    ) -> None:
        """`anyOf` (and `oneOf`, as anyOf): null branches become nullable; one branch is inlined."""
        keyword = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else None
        if keyword is None:
            return
        if keyword == "anyOf" and "oneOf" in node:
            self.note(link, "oneOf", "dropped", "anyOf present")
        branches = node[keyword]
        if not isinstance(branches, list):
            self.note(link, keyword, "dropped", "not a list of schemas")
            return
        here = (link, keyword)
        kept: list[tuple[int, object]] = []
        for index, branch in enumerate(branches):
            if isinstance(branch, dict) and branch.get("type") == "null" and len(branch) <= 2:
                put("nullable", True)
            else:
                kept.append((index, branch))
        if (
            kept
            and "type" in node
            and all(
                isinstance(branch, dict) and not _SHAPE_KEYWORDS.intersection(branch)
                for _index, branch in kept
            )
        ):
            # e.g. {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
            self.note(link, keyword, "dropped", "branches only constrain this type further")
            return
        if keyword == "oneOf" and len(kept) > 1:
            self.note(link, keyword, "rewritten", "oneOf as anyOf (exclusivity not expressible)")
        if len(kept) == 1:
            index, branch = kept[0]
            self.stack.append((branch, dst, (here, index), chain, True))
        elif kept:
            converted: list[JSONObject] = []
            for index, branch in kept:
                child: JSONObject = {}
                converted.append(child)
                self.stack.append((branch, child, (here, index), chain, False))
            put("anyOf", converted)
