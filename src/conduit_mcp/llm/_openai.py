"""OpenAI: MCP tools as function tools (plain or strict mode), and tool results as messages.

Rules are data (`RULES`, each with its source); keywords go through handler tables
(`HANDLERS` for plain mode, `STRICT_HANDLERS` for strict mode) shared with `_translate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from ..client._errors import Error
from ..client._jsonrules import MISSING, Link, fragment_tokens, link_depth, resolve_tokens
from ..client._model_view import refuse_cycle
from ..client._result import ToolResult
from ..client._tool import Tool
from . import _keywords as k
from . import _translate as t
from ._messages import (
    EMPTY_RESULT,
    ERROR_PREFIX,
    AdaptedResult,
    blocks,
    check_shaped,
    placeholder,
)
from ._provider_names import ToolNameMap
from ._translate import JSONObject, SchemaWalk

#: Root keywords refused: "schema must have type 'object' and not have
#: 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level" (invalid_function_parameters).
ROOT_FORBIDDEN: Final = ("allOf", "anyOf", "oneOf", "not", "enum", "const")

#: Strict mode limits (OpenAI guide "Structured Outputs", "Supported schemas" / "Limitations").
STRICT_MAX_NESTING: Final = 10
STRICT_MAX_PROPERTIES: Final = 5_000
STRICT_MAX_ENUM_VALUES: Final = 1_000
STRICT_MAX_STRING_CHARS: Final = 120_000
#: String formats strict mode takes ("Supported properties", string).
STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

RULES: Final = (
    t.Rule(
        "(root)",
        "type object; no oneOf/anyOf/allOf/enum/const/not at the top level; properties present",
        "OpenAI API error invalid_function_parameters ('object schema missing properties')",
    ),
    t.Rule(
        "items",
        "every array schema has items, strict or not",
        "OpenAI API error invalid_function_parameters ('array schema missing items')",
    ),
    t.Rule(
        "$ref",
        "$ref/$defs are accepted (recursion included): kept, not inlined",
        "OpenAI guide Structured Outputs, 'Recursive schemas are supported'",
    ),
    t.Rule(
        "additionalProperties",
        "strict: false on every object; every property listed in required",
        "OpenAI guide Structured Outputs, 'additionalProperties: false must always be set' and "
        "'All fields must be required'",
    ),
    t.Rule(
        "required",
        "strict: optional fields are emulated with a union with null",
        "OpenAI guide Structured Outputs, 'emulate an optional parameter ... with null'",
    ),
    t.Rule(
        "*",
        "strict: only type, properties, required, additionalProperties, items, anyOf, enum, "
        "const, $ref, $defs, description, title, pattern, format (listed ones), multipleOf, "
        "(exclusive) minimum/maximum, minItems, maxItems",
        "OpenAI guide Structured Outputs, 'Supported properties'",
    ),
    t.Rule(
        "*",
        "strict: at most 10 levels of nesting, 5000 properties, 1000 enum values, 120,000 "
        "characters of names and enum/const values",
        "OpenAI guide Structured Outputs, 'Limitations' / 'Objects have limitations on nesting "
        "depth and size'",
    ),
    *k.JSON_SCHEMA_RULES,
)


def _array_items(walk: SchemaWalk, src: JSONObject, dst: JSONObject, path: Link) -> None:
    """Every array schema has `items` (OpenAI refuses it otherwise, strict or not)."""
    kind = dst.get("type")
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and "items" not in dst:
        dst["items"] = {}
        walk.notes.at(path, "items", "added", "OpenAI requires items on every array ({}: any)")


#: Plain mode: the 2020-12 translation plus the items rule.
HANDLERS: Final[Mapping[str, t.Handler]] = k.JSON_SCHEMA_HANDLERS
FIXERS: Final = (_array_items,)


# -- strict mode ---------------------------------------------------------------------------------


class _NoStrictForm(Exception):
    """Raised inside the strict walk: the schema has no strict-mode equivalent (why)."""

    def __init__(self, path: Link, why: str) -> None:
        super().__init__(why)
        self.path = path
        self.why = why


class _StrictWalk(SchemaWalk):
    __slots__ = ()

    def sub(self, value: object, path: Link) -> object:
        if isinstance(value, bool):
            raise _NoStrictForm(path, "a boolean schema has no strict-mode form")
        return super().sub(value, path)


def _cannot(why: str) -> t.Handler:
    def handler(
        walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
    ) -> None:
        raise _NoStrictForm((path, key), why)

    return handler


def _strict_one_of(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if "anyOf" in src:
        raise _NoStrictForm((path, key), "oneOf next to anyOf has no strict-mode form")
    walk.schema_list(dst, "anyOf", value, path, source_key=key)
    walk.notes.at(path, key, "rewritten", "oneOf as anyOf (strict mode has no oneOf)")


def _strict_additional(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if value is not False:
        raise _NoStrictForm((path, key), "an open object (a map) has no strict-mode form")
    dst[key] = False


def _strict_format(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str) and value in STRICT_FORMATS:
        dst[key] = value
    else:
        walk.notes.at(path, key, "dropped", "format not supported in strict mode")


def _strict_enum(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(value, list) or not value:
        raise _NoStrictForm((path, key), "enum is not a non-empty list")
    _count(walk, (path, key), "enum", len(value), STRICT_MAX_ENUM_VALUES)
    chars = sum(len(v) for v in value if isinstance(v, str))
    _count(walk, (path, key), "chars", chars, STRICT_MAX_STRING_CHARS)
    dst[key] = value


def _strict_const(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str):
        _count(walk, (path, key), "chars", len(value), STRICT_MAX_STRING_CHARS)
    dst[key] = value


def _count(walk: SchemaWalk, path: Link, what: str, n: int, limit: int) -> None:
    total = walk.state.get(what, 0) + n
    walk.state[what] = total
    if total > limit:
        raise _NoStrictForm(path, f"over strict mode's limit of {limit} ({what})")


def _strict_definitions(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(src.get("$defs"), dict):
        raise _NoStrictForm((path, key), "definitions next to $defs has no strict form")
    HANDLERS[key](walk, src, dst, key, value, path)


def _strict_items(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, list):
        raise _NoStrictForm((path, key), "tuples (items as a list) have no strict form")
    HANDLERS[key](walk, src, dst, key, value, path)


_STRICT_KEEP: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "pattern",
        "multipleOf",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
_STRICT_CANNOT: Final = {
    "allOf": "allOf has no strict-mode form",
    "not": "not has no strict-mode form",
    "if": "if/then/else has no strict-mode form",
    "then": "if/then/else has no strict-mode form",
    "else": "if/then/else has no strict-mode form",
    "patternProperties": "patternProperties has no strict-mode form",
    "propertyNames": "propertyNames has no strict-mode form",
    "dependentSchemas": "dependentSchemas has no strict-mode form",
    "dependencies": "dependencies has no strict-mode form",
    "unevaluatedProperties": "unevaluatedProperties has no strict-mode form",
    "unevaluatedItems": "unevaluatedItems has no strict-mode form",
    "prefixItems": "tuples (prefixItems) have no strict-mode form",
    "contains": "contains has no strict-mode form",
    "$dynamicRef": "$dynamicRef has no strict-mode form",
}

#: Strict mode: the kept keywords as in plain mode, the refused ones stop the conversion, the
#: rest (validation-only or unknown keywords) are removed with a note.
STRICT_HANDLERS: Final[Mapping[str, t.Handler]] = {
    **{key: HANDLERS[key] for key in _STRICT_KEEP},
    **{key: _cannot(why) for key, why in _STRICT_CANNOT.items()},
    "oneOf": _strict_one_of,
    "definitions": _strict_definitions,
    "items": _strict_items,
    "additionalProperties": _strict_additional,
    "format": _strict_format,
    "enum": _strict_enum,
    "const": _strict_const,
}
_strict_drop = k.drop_keyword("not supported in strict mode")


def _nesting(path: Link) -> int:
    """Levels of nesting above a place (more than the limit when the path is long at all)."""
    if link_depth(path, 4 * STRICT_MAX_NESTING) > 4 * STRICT_MAX_NESTING:
        return STRICT_MAX_NESTING + 1
    depth = 0
    while path is not None:
        path, key = path
        if key in ("properties", "items", "$defs", "definitions", "anyOf", "oneOf"):
            depth += 1
    return depth


def _strict_node(walk: SchemaWalk, src: JSONObject, dst: JSONObject, path: Link) -> None:
    """Strict rules of one node: typed, arrays with items, closed objects with every property
    required (the optional ones made nullable), and within the size limits."""
    if _nesting(path) > STRICT_MAX_NESTING:
        raise _NoStrictForm(path, f"nested deeper than strict mode's {STRICT_MAX_NESTING} levels")
    kind = dst.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if not kinds and not ({"$ref", "anyOf", "enum", "const"} & dst.keys()):
        if "properties" in dst:
            dst["type"] = "object"
            kinds = ["object"]
            walk.notes.at(path, "type", "added", 'strict mode: "type": "object" added')
        else:
            raise _NoStrictForm(path, "a schema without a type (any value) has no strict form")
    if "array" in kinds and "items" not in dst:
        raise _NoStrictForm(path, "an array without items (any items) has no strict form")
    if "object" in kinds:
        _strict_object(walk, src, dst, path)
    if id(dst) in walk.state.get("nullable", ()):
        _make_nullable(dst)


def _strict_object(walk: SchemaWalk, src: JSONObject, dst: JSONObject, path: Link) -> None:
    props = dst.get("properties")
    if not isinstance(props, dict):
        raise _NoStrictForm(path, "an object without properties (a map) has no strict form")
    _count(walk, (path, "properties"), "properties", len(props), STRICT_MAX_PROPERTIES)
    _count(walk, (path, "properties"), "chars", sum(map(len, props)), STRICT_MAX_STRING_CHARS)
    if dst.get("additionalProperties") is not False:
        dst["additionalProperties"] = False
        walk.notes.at(path, "additionalProperties", "added", "strict mode closes every object")
    required = dst.get("required")
    listed = set(required) if isinstance(required, list) else set()
    nullable: set[int] = walk.state.setdefault("nullable", set())
    here = (path, "properties")
    for name, child in props.items():
        if name not in listed:
            if isinstance(child, dict):
                nullable.add(id(child))  # made nullable when the child's node is walked
            walk.notes.at(here, name, "rewritten", "optional: required and nullable in strict")
    dst["required"] = list(props)


def _make_nullable(dst: JSONObject) -> None:
    """Let `dst` also admit null (the strict-mode spelling of an optional property)."""
    kind = dst.get("type")
    if isinstance(kind, str) and "anyOf" not in dst and "$ref" not in dst:
        if kind != "null":
            dst["type"] = [kind, "null"]
        if isinstance(dst.get("enum"), list) and None not in dst["enum"]:
            dst["enum"] = [*dst["enum"], None]
        return
    if isinstance(kind, list) and "anyOf" not in dst and "$ref" not in dst:
        if "null" not in kind:
            dst["type"] = [*kind, "null"]
        if isinstance(dst.get("enum"), list) and None not in dst["enum"]:
            dst["enum"] = [*dst["enum"], None]
        return
    if isinstance(dst.get("anyOf"), list) and "$ref" not in dst and len(dst) <= 3:
        dst["anyOf"] = [*dst["anyOf"], {"type": "null"}]
        return
    inner = {k: v for k, v in dst.items() if k not in ("description", "title")}
    for key in inner:
        del dst[key]
    dst["anyOf"] = [inner, {"type": "null"}]


def _strict_parameters(root: JSONObject, notes: t.Notes) -> tuple[JSONObject | None, Link, str]:
    """The strict-mode schema, or None with the place and the reason it has none."""
    walk = _StrictWalk(STRICT_HANDLERS, (_strict_node,), notes, default=_strict_drop)
    try:
        return walk.run(root), t.ROOT, ""
    except _NoStrictForm as failure:
        return None, failure.path, failure.why


# -- declarations --------------------------------------------------------------------------------


def to_openai_tool(
    tool: Tool,
    names: ToolNameMap | None = None,
    *,
    api: Literal["chat_completions", "responses"] = "chat_completions",
    strict: bool = False,
) -> t.AdaptedTool:
    """Build an OpenAI function tool from an MCP tool.

    The whole schema is walked (explicit stack) and copied into one OpenAI accepts; each
    change is a `SchemaNote`:

    - root: a missing `type` becomes `"object"`, missing or non-object `properties` becomes
      `{}`, a malformed `required` is cleaned, root `allOf`/`anyOf`/`oneOf` are removed (their
      inline branches' properties merged into the root) and root `not`/`enum`/`const` dropped;
    - every array schema gets `items` (`{}`: any value) when it has none;
    - the schema is valid JSON Schema 2020-12: draft-04/06/07 idioms are translated (tuple
      `items` -> `prefixItems` with `additionalItems` as `items`, boolean
      `exclusiveMinimum`/`exclusiveMaximum`, `definitions` -> `$defs` with local `$ref`s
      rewritten, `id` -> `$id`, `dependencies` split), and keyword values of the wrong shape
      are dropped; `$ref`/`$defs` are kept (OpenAI resolves them);
    - descriptions and titles are cleaned of invisible characters (noted).

    Strict mode (`strict=True`, OpenAI guide "Structured Outputs"): every object gets
    `additionalProperties: false` and lists every property in `required`; a property that was
    optional becomes nullable (`type: [T, "null"]`, or an `anyOf` with `{"type": "null"}`) —
    map the model's arguments back with `from_openai_strict_arguments` before `tools/call`;
    `oneOf` becomes `anyOf`; keywords strict mode does not support are removed (noted).
    When the schema has no strict form (a free-form object or map, an untyped or boolean
    schema, `allOf`/`not`/`if`/`patternProperties`/tuples, more than 10 levels, 5,000
    properties, 1,000 enum values or 120,000 characters), the fallback is the plain
    declaration with strict off, and a `"flagged"` note at the place says why;
    `AdaptedTool.strict` tells which one you got.

    Args:
        tool: the MCP tool.
        names: the `ToolNameMap` for `"openai"` that names this model's tools (the tool is
            added to it). `None`: the tool's own name, mapped into OpenAI's charset only when it
            has to be (no server prefix, no collision handling).
        api: `"chat_completions"` gives `{"type": "function", "function": {"name",
            "description", "parameters"[, "strict": true]}}` (openai
            `ChatCompletionFunctionToolParam`); `"responses"` gives `{"type": "function",
            "name", "description", "parameters", "strict"}` (openai
            `responses.FunctionToolParam`; strict is spelled out because the Responses API
            otherwise defaults to strict).
        strict: ask for a strict-mode declaration (see above).

    Returns:
        `AdaptedTool`; `description` is omitted when the tool has none.

    Raises:
        Error: `invalid_tool` at `("inputSchema", "type")` when the root `type` admits no
            object.
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`) when a hand-built
            `inputSchema` contains itself, path from `("inputSchema",)` to the container met
            again (checked before the walk, which would never end).
        TypeError, ValueError: `tool` is not a `Tool`, `names` is not a map for `"openai"`,
            `api` is unknown or `strict` is not a bool (caller bugs).

    Total: explicit stack, linear in the schema's size; `$ref`s are copied, never followed.
    At most 1,000 notes are listed (then one counts the rest); each costs O(1) memory.

    Spec: 2026-07-28 schema `Tool.inputSchema` (MUST be a JSON Schema object with root type
    object). Provider rules: `RULES` in this module (OpenAI API reference
    "FunctionDefinition", guide "Structured Outputs").
    """
    tool = t.check_tool(tool)
    if api not in ("chat_completions", "responses"):
        raise ValueError(f"unknown OpenAI api {api!r}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool, got {type(strict).__name__}")
    notes = t.Notes()
    root = t.object_root(t.input_schema(tool), ROOT_FORBIDDEN, notes, need_properties=True)
    name = t.declared_name(tool, "openai", names)  # after the root: no name for a refused tool
    description = t.tool_description(tool, notes)
    parameters: JSONObject | None = None
    if strict:
        strict_notes = t.Notes()
        parameters, where, why = _strict_parameters(root, strict_notes)
        if parameters is not None:
            notes.extend(strict_notes)
        else:
            notes.add(where, "flagged", f"strict mode not possible: {why}; sent with strict off")
    is_strict = parameters is not None
    if parameters is None:
        parameters = SchemaWalk(HANDLERS, FIXERS, notes).run(root)
    function: JSONObject = {"name": name}
    if description is not None:
        function["description"] = description
    function["parameters"] = parameters
    if api == "responses":
        declaration = {"type": "function", **function, "strict": is_strict}
    else:
        if is_strict:
            function["strict"] = True
        declaration = {"type": "function", "function": function}
    return t.AdaptedTool(name, declaration, notes.finish(), is_strict)


# -- strict-mode arguments back to the tool's schema ----------------------------------------------

_MAX_REF_HOPS: Final = 64
_RENAMED: Final = {"definitions": "$defs"}  # the strict schema holds draft-07's under $defs


def _resolve(root: object, schema: object) -> object:
    """Follow local `$ref`s (a bounded number of hops) to the schema that applies."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(schema, dict):
            return schema
        ref = schema.get("$ref")
        tokens = fragment_tokens(ref) if isinstance(ref, str) else None
        if tokens is None:
            return schema
        node = resolve_tokens(root, tokens, _RENAMED)
        if node is MISSING:
            return None
        schema = node
    return None


def _branch(root: object, schema: object, value: object) -> object:
    """The branch of an `anyOf`/`oneOf` that describes `value`'s container type, if any."""
    schema = _resolve(root, schema)
    if not isinstance(schema, dict) or "properties" in schema or "items" in schema:
        return schema
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in branches:
                branch = _resolve(root, branch)
                if not isinstance(branch, dict):
                    continue
                if isinstance(value, dict) and isinstance(branch.get("properties"), dict):
                    return branch
                if isinstance(value, list) and "items" in branch:
                    return branch
    return schema


def from_openai_strict_arguments(tool: Tool, arguments: Mapping[str, Any]) -> JSONObject:
    """Map arguments a model produced under a strict-mode declaration back to the tool's schema.

    Strict mode makes every property required and the optional ones nullable, so the model
    sends `null` for an optional property it means to leave out. This returns a new arguments
    object (the input is not mutated; leaf values are shared) in which, at every object the
    tool's own `inputSchema` describes, a `null` value of a property that schema does not list
    in `required` is removed, so the call validates against the real `inputSchema`. Other
    values, including `null` for required properties, are kept as sent.

    Args:
        tool: the MCP tool the declaration was built from.
        arguments: the parsed `arguments` of the model's function call (a JSON object).

    Returns:
        A new dict, ready to send as `tools/call` `arguments`.

    Raises:
        TypeError: `tool` is not a `Tool` or `arguments` is not a mapping (caller bugs).
        Error: `cycle_error` (kind `"protocol"`, `"invalid_json"`) when a hand-built
            `inputSchema` or `arguments` contains itself, path from `("inputSchema",)` or
            `("arguments",)` to the container met again.

    Total: explicit stack over the arguments, each value visited once; `$ref`s in the schema
    are followed locally (at most 64 hops per place).

    Spec: 2026-07-28 server/tools "Calling Tools" (arguments are validated against
    `inputSchema`); OpenAI guide "Structured Outputs" ("emulate an optional parameter ... with
    null").
    """
    tool = t.check_tool(tool)
    if not isinstance(arguments, Mapping):
        raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
    source = t.input_schema(tool)
    refuse_cycle(arguments, ("arguments",))  # the walk below follows the arguments
    try:  # the root as declared (branches of a root oneOf merged, as in the declaration)
        root: JSONObject = t.object_root(source, ROOT_FORBIDDEN, t.Notes(), need_properties=True)
    except Error:
        root = source
    out: JSONObject = {}
    stack: list[tuple[object, object, dict[str, Any] | list[Any]]] = [(arguments, root, out)]
    while stack:
        value, schema, dst = stack.pop()
        schema = _branch(source, schema, value)
        if isinstance(value, Mapping) and isinstance(dst, dict):
            props = schema.get("properties") if isinstance(schema, dict) else None
            props = props if isinstance(props, dict) else {}
            required = schema.get("required") if isinstance(schema, dict) else None
            listed = (
                {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
            )
            for key, item in value.items():
                if item is None and key in props and key not in listed:
                    continue
                dst[key] = _container(item, props.get(key), stack)
        elif isinstance(value, list) and isinstance(dst, list):
            items = schema.get("items") if isinstance(schema, dict) else None
            prefix = schema.get("prefixItems") if isinstance(schema, dict) else None
            if isinstance(items, list):  # draft-07 tuple
                prefix, items = items, schema.get("additionalItems")  # type: ignore[attr-defined]
            for index, item in enumerate(value):
                sub: object = items
                if isinstance(prefix, list) and index < len(prefix):
                    sub = prefix[index]
                dst.append(_container(item, sub, stack))
    return out


def _container(
    item: object, schema: object, stack: list[tuple[object, object, dict[str, Any] | list[Any]]]
) -> object:
    """A new container for `item` (queued to fill), or `item` itself when it is a leaf."""
    if isinstance(item, Mapping):
        new: dict[str, Any] = {}
        stack.append((item, schema, new))
        return new
    if isinstance(item, list):
        items: list[Any] = []
        stack.append((item, schema, items))
        return items
    return item


# -- results -------------------------------------------------------------------------------------


def to_openai_tool_message(
    result: ToolResult,
    *,
    call_id: str,
    api: Literal["chat_completions", "responses"] = "chat_completions",
) -> AdaptedResult:
    """A shaped tool result as the OpenAI message that answers the model's function call.

    - `"chat_completions"`: `{"role": "tool", "tool_call_id": call_id, "content": [text
      parts]}` (openai `ChatCompletionToolMessageParam`). A tool message takes text only, so
      every image or audio block becomes a text placeholder (noted).
    - `"responses"`: `{"type": "function_call_output", "call_id": call_id, "output": [items]}`
      (openai `ResponseInputItemParam.FunctionCallOutput`): text as `input_text`, images as
      `input_image` with a base64 `data:` URL; audio becomes a placeholder (noted).

    An `isError` result starts with the text `[the tool reported an error]` (OpenAI has no
    error flag on tool output); an empty result is one text saying so.

    Args:
        result: a shaped `ToolResult` (from `shape_for_llm`).
        call_id: the `id` of the model's tool call (Chat Completions) or its `call_id`
            (Responses).
        api: `"chat_completions"` or `"responses"`.

    Returns:
        `AdaptedResult(message, notes, provenance)`.

    Raises:
        TypeError: `result` is not a `ToolResult` or `call_id` is not a `str` (caller bugs).
        ValueError: `result` is not shaped (no provenance), `call_id` is empty, or `api` is
            unknown.

    Spec: 2026-07-28 server/tools "Tool Result" and "Error Handling" (clients SHOULD provide
    tool execution errors to the model).
    """
    result, provenance = check_shaped(result, "call_id", call_id)
    if api not in ("chat_completions", "responses"):
        raise ValueError(f"unknown OpenAI api {api!r}")
    notes: list[str] = []
    parts: list[JSONObject] = []
    text_type = "text" if api == "chat_completions" else "input_text"
    if result.is_error is True:
        parts.append({"type": text_type, "text": ERROR_PREFIX})
    for index, block in enumerate(blocks(result)):
        if block.kind == "text":
            if block.text:
                parts.append({"type": text_type, "text": block.text})
        elif api == "responses" and block.kind == "image":
            url = f"data:{block.mime_type};base64,{block.data}"
            parts.append({"type": "input_image", "image_url": url})
        else:
            where = "a Chat Completions tool message" if api == "chat_completions" else "output"
            notes.append(f"content[{index}]: {block.kind} replaced by a placeholder ({where})")
            parts.append({"type": text_type, "text": placeholder(block, "OpenAI")})
    if not parts:
        parts.append({"type": text_type, "text": EMPTY_RESULT})
    message: JSONObject
    if api == "chat_completions":
        message = {"role": "tool", "tool_call_id": call_id, "content": parts}
    else:
        message = {"type": "function_call_output", "call_id": call_id, "output": parts}
    return AdaptedResult(message, tuple(notes), provenance)
