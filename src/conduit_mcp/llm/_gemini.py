"""Gemini: MCP tools as `FunctionDeclaration`s, and tool results as `FunctionResponse`s.

The subset conversion turns JSON Schema into google-genai's `Schema` (an OpenAPI 3.0 subset)
with an explicit stack; keywords go through `HANDLERS` (keyword -> handler) and the subset's
rules are data (`RULES`, each with its source).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import orjson

from ..client._errors import PathItem, json_type_name
from ..client._jsonrules import MISSING, Link, fragment_tokens, link_depth, resolve_tokens
from ..client._result import ToolResult
from ..client._tool import Tool
from . import _keywords as k
from . import _translate as t
from ._messages import (
    EMPTY_RESULT,
    AdaptedResult,
    blocks,
    check_shaped,
    placeholder,
)
from ._provider_names import ToolNameMap
from ._translate import JSONObject, NoteAction

#: "parameters schema should be of type OBJECT" (Vertex AI); no composition at the root.
ROOT_FORBIDDEN: Final = ("allOf", "anyOf", "oneOf", "not", "enum", "const")

#: google-genai 3.6.1 FunctionDeclaration.parameters: "Parameter names must start with a letter
#: or an underscore and must only contain chars a-z, A-Z, 0-9, or underscores with a maximum
#: length of 64".
PARAMETER_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")

#: MIME types a FunctionResponse part takes inline (Gemini API docs, function calling
#: "Multimodal function responses": images png, jpeg, webp).
INLINE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp"})

RULES: Final = (
    t.Rule(
        "*",
        "only the fields of types.Schema (an OpenAPI 3.0 subset); others dropped",
        "google-genai 3.6.1 types.Schema ('a select subset of an OpenAPI 3.0 schema object')",
    ),
    t.Rule(
        "properties",
        "properties and required only on OBJECT",
        "Gemini API 400 'properties: only allowed for OBJECT type'",
    ),
    t.Rule(
        "properties",
        "an OBJECT's properties, when present, are non-empty",
        "Gemini API 400 'properties: should be non-empty for OBJECT type'",
    ),
    t.Rule("items", "every ARRAY has items", "Gemini API 400 'items: missing field'"),
    t.Rule(
        "enum",
        "enum only on STRING, with non-empty string members",
        "Gemini API 400 'enum: only allowed for STRING type'; 'cannot be empty'",
    ),
    t.Rule(
        "format",
        "STRING takes only enum and date-time; NUMBER float/double; INTEGER int32/int64",
        "Gemini API 400 \"only 'enum' and 'date-time' are supported for STRING type\"",
    ),
    t.Rule(
        "additionalProperties",
        "not in the Gemini Developer API",
        "google-genai 3.6.1 _transformers ('only supported in Gemini Enterprise Agent Platform "
        "mode')",
    ),
    t.Rule(
        "(root)",
        "no parameters when the function takes none",
        "google-genai FunctionDeclaration.parameters ('For function with no parameters, this "
        "can be left unset')",
    ),
    t.Rule(
        "response",
        "function output under 'output', an error under 'error'; media as inline parts",
        "google-genai types.FunctionResponse.response and .parts",
    ),
)


def to_gemini_function(
    tool: Tool,
    names: ToolNameMap | None = None,
    *,
    schema: Literal["subset", "json_schema"] = "subset",
) -> t.AdaptedTool:
    """Build a Gemini `FunctionDeclaration` (as a dict) from an MCP tool.

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"gemini"` (the tool is added to it), or `None` for the
            tool's own name, mapped into the charset only when it has to be.
        schema: `"subset"` converts `inputSchema` to Gemini's OpenAPI-3.0 `Schema` subset in
            `parameters` (see below); `"json_schema"` passes it as JSON Schema 2020-12 in
            `parametersJsonSchema`, translated as for Anthropic (root adjusted, draft-04/06/07
            idioms translated, descriptions cleaned; `$ref`s kept).

    Returns:
        `AdaptedTool` whose declaration is `{"name", "description", "parameters"}` or
        `{"name", "description", "parametersJsonSchema"}` (google-genai
        `types.FunctionDeclaration`, REST field names). With `"subset"`, `parameters` is
        omitted when the tool takes no named parameters.

    The subset conversion builds a new schema (the input is never modified) and notes every
    keyword it drops, adds or rewrites (`RULES`): local `$ref`s are inlined (recursive ones
    dropped), `allOf` branches merged, `oneOf` becomes `anyOf`, a `type` list becomes
    `nullable` plus one type or an `anyOf` per type, `const` becomes a one-value `enum`;
    `properties`/`required` are kept only on OBJECT (and empty `properties` dropped), every
    ARRAY gets `items` (`{}` when it has none, or only tuple items), `enum` is kept only on
    STRING with non-empty string members (none left: no enum), `format`s Gemini refuses are
    dropped, `required` keeps only declared properties, `examples[0]` becomes `example`, and
    every keyword outside google-genai `types.Schema` is dropped. Descriptions and titles are
    cleaned of invisible characters.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`) when a hand-built
            `inputSchema` contains itself, path from `("inputSchema",)` to the container met
            again (checked before the walk, which would never end).
        TypeError, ValueError: `tool` is not a `Tool`, `names` is not a map for `"gemini"`, or
            `schema` is unknown (caller bugs).

    Total: explicit stack (any depth), linear in the schema's size plus what `$ref` inlining
    adds: inlining stops once 10,000 schema nodes have been converted, once 1 MiB of
    referenced definitions (serialized) has been inlined, at 64 references nested inside
    one another, and below 200 keys from the root (further `$ref`s are dropped with a note),
    so a declaration is never much deeper than the schema sent. At most 1,000 notes are listed
    (then one note counts the rest); each note costs O(1) memory (paths are shared).

    Spec: 2026-07-28 schema `Tool.inputSchema`. Provider rules: `RULES` (google-genai 3.6.1
    `types.FunctionDeclaration` and `types.Schema`).
    """
    tool = t.check_tool(tool)
    if schema not in ("subset", "json_schema"):
        raise ValueError(f"unknown Gemini schema mode {schema!r}")
    notes = t.Notes()
    root, declaration = t.declaration_start(
        tool, "gemini", names, ROOT_FORBIDDEN, PARAMETER_NAME, notes
    )
    name: str = declaration["name"]
    if schema == "json_schema":
        walk = t.SchemaWalk(k.JSON_SCHEMA_HANDLERS, (), notes)
        declaration["parametersJsonSchema"] = walk.run(root)
        return t.AdaptedTool(name, declaration, notes.finish())
    converted = _GeminiSubset(root, notes).run()
    if converted.get("properties"):
        declaration["parameters"] = converted
    else:
        notes.add((t.ROOT, "properties"), "dropped", "no named parameters: parameters omitted")
    return t.AdaptedTool(name, declaration, notes.finish())


def to_gemini_function_response(result: ToolResult, *, name: str) -> AdaptedResult:
    """A shaped tool result as a Gemini `FunctionResponse` (REST field names).

    `{"name": name, "response": {"output": text}}` (or `{"error": text}` for an `isError`
    result: google-genai `FunctionResponse.response`, "Use 'output' key to specify function
    output and 'error' key to specify error details"); the text is the result's text blocks
    joined with newlines. Images of a type Gemini takes inline (PNG, JPEG, WebP) go in
    `parts` as `{"inlineData": {"mimeType", "data", "displayName"}}` and are named in the text
    as `[image: <displayName>]`; other media become text placeholders (noted).

    Args:
        result: a shaped `ToolResult` (from `shape_for_llm`).
        name: the function name the model called (the declared name).

    Returns:
        `AdaptedResult(message, notes, provenance)`; `message` is the `functionResponse`
        value (wrap it as `{"functionResponse": message}` in a content part).

    Raises:
        TypeError: `result` is not a `ToolResult` or `name` is not a `str`.
        ValueError: `result` is not shaped, or `name` is empty.

    Spec: 2026-07-28 server/tools "Tool Result" and "Error Handling".
    """
    result, provenance = check_shaped(result, "name", name)
    notes: list[str] = []
    texts: list[str] = []
    parts: list[JSONObject] = []
    for index, block in enumerate(blocks(result)):
        if block.kind == "text":
            texts.append(block.text)
        elif block.kind == "image" and block.mime_type in INLINE_TYPES:
            label = f"image_{len(parts) + 1}.{block.mime_type.split('/', 1)[1]}"
            texts.append(f"[image: {label}]")
            inline = {"mimeType": block.mime_type, "data": block.data, "displayName": label}
            parts.append({"inlineData": inline})
        else:
            notes.append(f"content[{index}]: {block.kind} replaced by a placeholder")
            texts.append(placeholder(block, "Gemini"))
    text = "\n".join(texts) if texts else EMPTY_RESULT
    key = "error" if result.is_error is True else "output"
    message: JSONObject = {"name": name, "response": {key: text}}
    if parts:
        message["parts"] = parts
    return AdaptedResult(message, tuple(notes), provenance)


# -- the subset ----------------------------------------------------------------------------------

_GEMINI_TYPES: Final = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}

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
# Inlining stops below this many keys from the root: references must not make a declaration far
# deeper than the schema sent (Python's json and orjson stop near 1,000 and 255 levels, so a
# 15,000-level declaration could not even be sent).
_MAX_INLINE_PATH: Final = 200

_Put = Callable[[str, Any], None]
# (source node, destination dict, path, $refs being expanded, merge-only)
_Entry = tuple[object, JSONObject, Link, tuple[str, ...], bool]


class _Node:
    """What a keyword handler sees of the node being converted."""

    __slots__ = ("chain", "dst", "gemini_type", "node", "path", "put")

    def __init__(
        self,
        node: JSONObject,
        dst: JSONObject,
        put: _Put,
        path: Link,
        chain: tuple[str, ...],
        gemini_type: str | None,
    ) -> None:
        self.node = node
        self.dst = dst
        self.put = put
        self.path = path
        self.chain = chain
        self.gemini_type = gemini_type


_Handler = Callable[["_GeminiSubset", _Node, str, Any], None]


class _GeminiSubset:
    """One conversion of a JSON Schema to google-genai's `Schema` subset (explicit stack)."""

    __slots__ = ("arrays", "count", "inlined", "notes", "root", "sizes", "stack")

    def __init__(self, root: JSONObject, notes: t.Notes) -> None:
        self.root = root
        self.notes = notes
        self.count = 0
        self.inlined = 0  # bytes of $ref targets inlined so far
        self.sizes: dict[str, int] = {}
        self.stack: list[_Entry] = []
        self.arrays: list[tuple[JSONObject, Link]] = []  # ARRAY nodes, checked at the end

    def note(self, path: Link, key: PathItem, action: NoteAction, detail: str) -> None:
        self.notes.at(path, key, action, detail)

    def run(self) -> JSONObject:
        out: JSONObject = {}
        self.stack.append((self.root, out, t.ROOT, (), False))
        while self.stack:
            self.convert(*self.stack.pop())
        for dst, path in self.arrays:
            # After the whole walk: an inlined anyOf branch may have brought items.
            if dst.get("type") == "ARRAY" and "items" not in dst:
                dst["items"] = {}
                self.note(path, "items", "added", "Gemini requires items on every ARRAY ({}: any)")
        return out

    # -- references and allOf ---------------------------------------------------------------

    def pointer(self, ref: str) -> object:
        """Resolve a local JSON pointer (`#`, `#/$defs/X`, ...) against the root, or `None`."""
        tokens = fragment_tokens(ref)
        node = MISSING if tokens is None else resolve_tokens(self.root, tokens)
        return None if node is MISSING else node

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
        self, node: JSONObject, path: Link, chain: tuple[str, ...]
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
            elif link_depth(path, _MAX_INLINE_PATH) > _MAX_INLINE_PATH:
                problem = "inlining would nest the declaration too deeply"
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
                self.note(path, "$ref", "dropped", problem or "does not resolve to a schema")
                return siblings, chain
            node = {**target, **siblings}
            chain = (*chain, ref)
        return node, chain

    def merge_all_of(
        self, node: JSONObject, path: Link, chain: tuple[str, ...]
    ) -> tuple[JSONObject, tuple[str, ...]]:
        rounds = 0
        while "allOf" in node:
            node = dict(node)
            branches = node.pop("allOf")
            rounds += 1
            if rounds > _MAX_ALLOF_ROUNDS:
                self.note(path, "allOf", "dropped", "allOf nested too deeply")
                continue
            if not isinstance(branches, list):
                self.note(path, "allOf", "dropped", "not a list of schemas")
                continue
            here = (path, "allOf")
            for index, branch in enumerate(branches):
                if isinstance(branch, dict) and "$ref" in branch:
                    branch, chain = self.deref(branch, here, chain)
                if not isinstance(branch, dict):
                    if branch is not True:
                        self.note(here, index, "dropped", "not an object schema")
                    continue
                for key, value in branch.items():
                    mine = node.get(key)
                    if key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
                        node[key] = {**value, **mine}
                    elif key == "required" and isinstance(mine, list) and isinstance(value, list):
                        node[key] = mine + [r for r in value if r not in mine]
                    elif key not in node:
                        node[key] = value
            self.note(path, "allOf", "rewritten", "branches merged into one schema")
        return node, chain

    # -- one node ---------------------------------------------------------------------------

    def convert(
        self,
        source: object,
        dst: JSONObject,
        path: Link,
        chain: tuple[str, ...],
        merge: bool,
    ) -> None:
        self.count += 1
        if not isinstance(source, dict):
            if source is not True and path is not t.ROOT:
                what = "false schema" if source is False else json_type_name(source)
                self.notes.add(path, "dropped", f"{what} is not expressible; any value")
            return
        node: JSONObject = source
        if "$ref" in node:
            node, chain = self.deref(node, path, chain)
        if "allOf" in node:
            node, chain = self.merge_all_of(node, path, chain)

        def put(key: str, value: Any) -> None:
            if not (merge and key in dst):
                dst[key] = value

        nullable = node.get("nullable") is True
        gemini_type, json_types = self.type_of(node, path)
        if "null" in json_types:
            nullable = True
        real = [kind for kind in json_types if kind != "null"]
        if len(real) > 1:
            self.split_types(node, real, put, path, chain)
            if nullable:
                put("nullable", True)
            return

        enum, enum_nullable = self.enum_of(node, gemini_type, path)
        nullable = nullable or enum_nullable
        if gemini_type is None:
            if isinstance(node.get("properties"), dict):
                gemini_type = "OBJECT"
            elif "items" in node or "prefixItems" in node:
                gemini_type = "ARRAY"
            elif enum is not None:
                gemini_type = "STRING"
        if gemini_type is not None:
            put("type", gemini_type)
        if nullable:
            put("nullable", True)
        if enum is not None:
            put("enum", enum)
        if gemini_type == "ARRAY":
            self.arrays.append((dst, path))

        here = _Node(node, dst, put, path, chain, gemini_type)
        for key, value in node.items():
            HANDLERS.get(key, _unsupported)(self, here, key, value)
        self.alternatives(node, dst, put, path, chain)

    def type_of(self, node: JSONObject, path: Link) -> tuple[str | None, list[str]]:
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
                self.note(path, "type", "dropped", f"unknown type ({json_type_name(item)})")
        real = [k for k in kinds if k != "null"]
        if isinstance(value, list) and len(kinds) > 1:
            self.note(path, "type", "rewritten", "type list as nullable and/or anyOf")
        return (_GEMINI_TYPES[real[0]] if len(real) == 1 else None), kinds

    def split_types(
        self,
        node: JSONObject,
        kinds: list[str],
        put: _Put,
        path: Link,
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
            self.stack.append((source, branch, path, chain, False))
        put("anyOf", branches)
        for key in ("description", "title"):
            if isinstance(node.get(key), str):
                put(key, t.clean_text(node[key], self.notes, (path, key)))
        for key in ("default", "example"):
            if key in node:
                put(key, node[key])
        for key in node:
            if key not in used:
                self.note(path, key, "dropped", "not expressible next to a list of types")

    def enum_of(
        self, node: JSONObject, gemini_type: str | None, path: Link
    ) -> tuple[list[str] | None, bool]:
        """Gemini's `enum` (non-empty strings on a STRING schema only) from `enum`/`const`;
        and whether null was a member."""
        values: list[Any]
        if "enum" in node:
            key = "enum"
            raw = node["enum"]
            if not isinstance(raw, list):
                self.note(path, key, "dropped", "not a list")
                return None, False
            values = raw
            if "const" in node:
                self.note(path, "const", "dropped", "enum present")
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
            self.note(path, key, "dropped", "Gemini takes only string enum values")
            return None, nullable
        if gemini_type not in (None, "STRING"):
            self.note(path, key, "dropped", "Gemini takes enum only on STRING schemas")
            return None, nullable
        if "" in strings:
            strings = [v for v in strings if v != ""]
            if not strings:
                self.note(path, key, "dropped", "Gemini refuses an empty string member")
                return None, nullable
            self.note(path, key, "rewritten", "empty string member removed (Gemini refuses it)")
        if key == "const":
            self.note(path, key, "rewritten", "const as a one-value enum")
        return strings, nullable

    def alternatives(
        self, node: JSONObject, dst: JSONObject, put: _Put, path: Link, chain: tuple[str, ...]
    ) -> None:
        """`anyOf` (and `oneOf`, as anyOf): null branches become nullable; one branch is inlined."""
        keyword = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else None
        if keyword is None:
            return
        if keyword == "anyOf" and "oneOf" in node:
            self.note(path, "oneOf", "dropped", "anyOf present")
        branches = node[keyword]
        if not isinstance(branches, list):
            self.note(path, keyword, "dropped", "not a list of schemas")
            return
        here = (path, keyword)
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
            self.note(path, keyword, "dropped", "branches only constrain this type further")
            return
        if keyword == "oneOf" and len(kept) > 1:
            self.note(path, keyword, "rewritten", "oneOf as anyOf (exclusivity not expressible)")
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


# -- keyword handlers ----------------------------------------------------------------------------


def _unsupported(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    walk.note(n.path, key, "dropped", "not supported by Gemini")


def _handled(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    """Consumed before the keyword loop (type, enum, ...) or by `$ref` inlining ($defs)."""


def _text(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if isinstance(value, str):
        n.put(key, t.clean_text(value, walk.notes, (n.path, key)))
    else:
        walk.note(n.path, key, "dropped", f"{json_type_name(value)}, not a string")


def _pattern(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if isinstance(value, str):
        n.put(key, value)
    else:
        walk.note(n.path, key, "dropped", f"{json_type_name(value)}, not a string")


def _count(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        n.put(key, value)
    else:
        walk.note(n.path, key, "dropped", "not a non-negative integer")


def _bound(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    # Gemini's bounds are floats: 10**400 or NaN would not survive the SDK's validation.
    if k.is_finite_number(value):
        n.put(key, value)
    else:
        walk.note(n.path, key, "dropped", "not a finite number")


def _format(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    allowed = _GEMINI_FORMATS.get(n.gemini_type or "", frozenset())
    if isinstance(value, str) and value in allowed:
        n.put(key, value)
    else:
        walk.note(n.path, key, "dropped", "format not supported by Gemini for this type")


def _keep(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    n.put(key, value)


def _examples(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if isinstance(value, list) and value and "example" not in n.node:
        n.put("example", value[0])
        walk.note(n.path, key, "rewritten", "first example kept as example")
    else:
        walk.note(n.path, key, "dropped", "not supported by Gemini")


def _items(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if n.gemini_type not in (None, "ARRAY"):
        walk.note(n.path, key, "dropped", "items only on ARRAY (constrains nothing here)")
    elif isinstance(value, dict) or value is True:
        items: JSONObject = {}
        n.put(key, items)
        walk.stack.append((value, items, (n.path, key), n.chain, False))
    else:
        walk.note(n.path, key, "dropped", "only a single items schema is supported")


def _properties(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if n.gemini_type not in (None, "OBJECT"):
        walk.note(n.path, key, "dropped", "properties only on OBJECT (constrains nothing here)")
        return
    if not isinstance(value, dict):
        walk.note(n.path, key, "dropped", f"{json_type_name(value)}, not an object")
        return
    here = (n.path, key)
    props: JSONObject = {}
    for name, sub in value.items():
        if isinstance(sub, (dict, bool)):
            child: JSONObject = {}
            props[name] = child
            walk.stack.append((sub, child, (here, name), n.chain, False))
        else:
            walk.note(here, name, "dropped", f"{json_type_name(sub)}, not a schema")
    if props or n.path is t.ROOT:  # the root's emptiness is handled by the caller
        n.put(key, props)
    else:
        walk.note(n.path, key, "dropped", "Gemini refuses empty properties on an OBJECT")


def _required(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    if n.gemini_type not in (None, "OBJECT"):
        walk.note(n.path, key, "dropped", "required only on OBJECT (constrains nothing here)")
        return
    props = n.node.get("properties")
    declared = props if isinstance(props, dict) else {}
    if not isinstance(value, list):
        walk.note(n.path, key, "dropped", f"{json_type_name(value)}, not a list")
        return
    kept = [
        name
        for name in dict.fromkeys(v for v in value if isinstance(v, str))
        if isinstance(declared.get(name), (dict, bool))
    ]
    if len(kept) != len(value):
        walk.note(n.path, key, "rewritten", "names without a property schema removed")
    if kept:
        n.put(key, kept)


def _tuple(walk: _GeminiSubset, n: _Node, key: str, value: Any) -> None:
    walk.note(n.path, key, "dropped", "tuples are not expressible; items added as any value")


#: JSON Schema keyword -> what the subset does with it (anything else: dropped, noted).
HANDLERS: Final[Mapping[str, _Handler]] = {
    "description": _text,
    "title": _text,
    "pattern": _pattern,
    "minLength": _count,
    "maxLength": _count,
    "minItems": _count,
    "maxItems": _count,
    "minProperties": _count,
    "maxProperties": _count,
    "minimum": _bound,
    "maximum": _bound,
    "format": _format,
    "default": _keep,
    "example": _keep,
    "examples": _examples,
    "items": _items,
    "prefixItems": _tuple,
    "properties": _properties,
    "required": _required,
    # below, once this node's own keywords are in place (alternatives)
    "anyOf": _handled,
    "oneOf": _handled,
    # handled before the loop, or consumed by $ref inlining
    "type": _handled,
    "nullable": _handled,
    "enum": _handled,
    "const": _handled,
    "$defs": _handled,
    "definitions": _handled,
}
