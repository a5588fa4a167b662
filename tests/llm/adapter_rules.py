"""Rule checkers written from each provider's documented limits, independent of the adapters.

Each checker walks a declaration's schema (explicit stack) and returns the places that break a
documented rule, as `(path, rule)` pairs; `[]` means the provider would accept it. Nothing here
imports conduit_mcp: the rules are transcribed from the sources named on each line.
"""

from __future__ import annotations

from typing import Any

Problem = tuple[tuple[Any, ...], str]

# JSON Schema 2020-12 keywords whose value is one sub-schema / a map / a list of sub-schemas.
_ONE = (
    "items",
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")


def _subschemas(node: dict[str, Any], path: tuple[Any, ...]) -> list[tuple[Any, tuple[Any, ...]]]:
    out: list[tuple[Any, tuple[Any, ...]]] = []
    for key in _ONE:
        if key in node:
            out.append((node[key], (*path, key)))
    for key in _MAP:
        if isinstance(node.get(key), dict):
            out.extend((v, (*path, key, k)) for k, v in node[key].items())
    for key in _LIST:
        if isinstance(node.get(key), list):
            out.extend((v, (*path, key, i)) for i, v in enumerate(node[key]))
    return out


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def openai_problems(parameters: dict[str, Any], *, strict: bool) -> list[Problem]:
    """OpenAI function parameters.

    Sources: API error invalid_function_parameters ("schema must have type 'object' and not
    have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level", "object schema missing
    properties", "array schema missing items"); guide "Structured Outputs" (strict:
    "additionalProperties: false must always be set in objects", "all fields or function
    parameters must be specified as required", supported keywords, 10 levels of nesting).
    """
    problems: list[Problem] = []
    if parameters.get("type") != "object":
        problems.append(((), "root type must be object"))
    for key in ("oneOf", "anyOf", "allOf", "enum", "const", "not"):
        if key in parameters:
            problems.append(((key,), "not allowed at the top level"))
    if not isinstance(parameters.get("properties"), dict):
        problems.append((("properties",), "object schema missing properties"))
    allowed = {
        "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
        "const", "$ref", "$defs", "description", "title", "pattern", "format", "multipleOf",
        "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "minItems", "maxItems",
    }  # fmt: skip
    stack: list[tuple[Any, tuple[Any, ...]]] = [(parameters, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            if strict and not (path and path[-1] == "additionalProperties" and node is False):
                problems.append((path, "strict: boolean schema"))
            continue
        if "array" in _types(node) and "items" not in node:
            problems.append((path, "array schema missing items"))
        if strict:
            for key in node:
                if key not in allowed:
                    problems.append(((*path, key), "strict: keyword not supported"))
            if "object" in _types(node):
                props = node.get("properties")
                if node.get("additionalProperties") is not False:
                    problems.append((path, "strict: additionalProperties must be false"))
                if not isinstance(props, dict) or sorted(node.get("required", [])) != sorted(props):
                    problems.append((path, "strict: every property must be required"))
            if sum(1 for k in path if k in ("properties", "items")) > 10:
                problems.append((path, "strict: more than 10 levels of nesting"))
        stack.extend(_subschemas(node, path))
    return problems


def anthropic_problems(input_schema: dict[str, Any]) -> list[Problem]:
    """Anthropic `input_schema`.

    Sources: Messages API errors ("input_schema does not support oneOf, allOf, or anyOf at the
    top level"; "JSON schema is invalid. It must match JSON Schema draft 2020-12", checked
    separately with jsonschema's meta-schema); tool use docs (`type: "object"` input schema).
    """
    problems: list[Problem] = []
    if input_schema.get("type") != "object":
        problems.append(((), "root type must be object"))
    for key in ("oneOf", "allOf", "anyOf"):
        if key in input_schema:
            problems.append(((key,), "not allowed at the top level"))
    stack: list[tuple[Any, tuple[Any, ...]]] = [(input_schema, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        # Draft-07 idioms the 2020-12 meta-schema lets through but means otherwise.
        if isinstance(node.get("items"), list):
            problems.append(((*path, "items"), "tuple items is not 2020-12"))
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(node.get(key), bool):
                problems.append(((*path, key), "boolean exclusive bound is draft-04"))
        for key in ("definitions", "dependencies", "additionalItems", "id"):
            if key == "id" and not isinstance(node.get(key), str):
                continue  # not draft-04's id: an unknown keyword
            if key == "definitions" and isinstance(node.get("$defs"), dict):
                continue  # next to $defs (names may clash): the meta-schema still allows it
            if key in node:
                problems.append(((*path, key), "draft-07 keyword"))
        stack.extend(_subschemas(node, path))
    return problems


_GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}
_GEMINI_FORMATS = {
    "STRING": {"enum", "date-time"},
    "NUMBER": {"float", "double"},
    "INTEGER": {"int32", "int64"},
}


def gemini_problems(parameters: dict[str, Any]) -> list[Problem]:
    """Gemini `FunctionDeclaration.parameters` (OpenAPI 3.0 Schema subset).

    Sources: Gemini API 400 messages "properties: only allowed for OBJECT type", "properties:
    should be non-empty for OBJECT type", "items: missing field", "enum: only allowed for STRING
    type", "only 'enum' and 'date-time' are supported for STRING type"; google-genai
    types.Schema (`type` a `Type` enum member; `required` names declared properties).
    """
    problems: list[Problem] = []
    if parameters.get("type") != "OBJECT":
        problems.append(((), "parameters schema should be of type OBJECT"))
    stack: list[tuple[Any, tuple[Any, ...]]] = [(parameters, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            problems.append((path, "not a schema object"))
            continue
        kind = node.get("type")
        if kind is not None and kind not in _GEMINI_TYPES:
            problems.append(((*path, "type"), "unknown type"))
        if ("properties" in node or "required" in node) and kind not in (None, "OBJECT"):
            problems.append((path, "properties/required only allowed for OBJECT type"))
        if "properties" in node and not node["properties"]:
            problems.append(((*path, "properties"), "should be non-empty for OBJECT type"))
        if isinstance(node.get("required"), list):
            declared = node.get("properties") or {}
            for name in node["required"]:
                if name not in declared:
                    problems.append(((*path, "required"), "required name not declared"))
        if kind == "ARRAY" and "items" not in node:
            problems.append((path, "items: missing field"))
        if "enum" in node:
            enum = node["enum"]
            if kind not in (None, "STRING"):
                problems.append(((*path, "enum"), "only allowed for STRING type"))
            if not enum or not all(isinstance(v, str) and v for v in enum):
                problems.append(((*path, "enum"), "members must be non-empty strings"))
        if "format" in node and node["format"] not in _GEMINI_FORMATS.get(kind, set()):
            problems.append(((*path, "format"), "format not supported for this type"))
        if isinstance(node.get("properties"), dict):
            stack.extend((v, (*path, "properties", k)) for k, v in node["properties"].items())
        if "items" in node:
            stack.append((node["items"], (*path, "items")))
        if isinstance(node.get("anyOf"), list):
            stack.extend((v, (*path, "anyOf", i)) for i, v in enumerate(node["anyOf"]))
    return problems
