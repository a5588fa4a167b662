"""The generated models are the schema's mirror: on every corpus item, spec example and hand-made
edge input, per spec version, plain `model_validate` accepts exactly what the official
`schema.json` accepts (jsonschema is the oracle, the expected value is never written here), and
what it accepts comes back unchanged from `model_dump(by_alias=True, exclude_unset=True)`.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest
from conduit_mcp_wire import VERSIONS, module_for

from tests.conformance.examples import all_examples, jsonschema_errors, model_check
from tests.corpus import all_tools, results

TEXT = {"type": "text", "text": "hi"}
OBJECT = {"type": "object"}
LINK = {"type": "resource_link", "uri": "file:///a", "name": "a"}


def _resource(contents: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "resource", "resource": contents}]}


#: Hand-made inputs (definition, instance, what it probes). Whether each is valid is decided per
#: version by jsonschema, not here; several are valid in one version and invalid in another.
EDGES: list[tuple[str, Any, str]] = [
    # booleans: no coercion
    ("CallToolResult", {"content": [], "isError": "true"}, "isError as a string 'true'"),
    ("CallToolResult", {"content": [], "isError": "false"}, "isError as a string 'false'"),
    ("CallToolResult", {"content": [], "isError": 1}, "isError as 1"),
    ("CallToolResult", {"content": [], "isError": 0}, "isError as 0"),
    ("CallToolResult", {"content": [], "isError": True}, "isError true"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "annotations": {"readOnlyHint": "yes"}}, "hint"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "annotations": {"readOnlyHint": 1}}, "hint 1"),
    # null members
    ("CallToolResult", {"content": [], "isError": None}, "isError null"),
    ("CallToolResult", {"content": [], "_meta": None}, "_meta null"),
    ("CallToolResult", {"content": [], "structuredContent": None}, "structuredContent null"),
    ("CallToolResult", {"content": None}, "content null"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "description": None}, "description null"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "title": None}, "title null"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "annotations": None}, "annotations null"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "outputSchema": None}, "outputSchema null"),
    ("Tool", {"name": None, "inputSchema": OBJECT}, "name null"),
    ("Tool", {"name": "t", "inputSchema": {"type": "object", "required": None}}, "required null"),
    ("CallToolResult", {"content": [{"type": "text", "text": None}]}, "text null"),
    ("CallToolResult", {"content": [{**TEXT, "annotations": {"priority": None}}]}, "priority"),
    # numbers and strings
    ("Tool", {"name": 5, "inputSchema": OBJECT}, "name as a number"),
    ("CallToolResult", {"content": [{"type": "text", "text": 5}]}, "text as a number"),
    ("CallToolResult", {"content": [{**TEXT, "annotations": {"priority": 2}}]}, "priority > 1"),
    ("CallToolResult", {"content": [{**TEXT, "annotations": {"priority": 1}}]}, "priority int"),
    ("CallToolResult", {"content": [{**TEXT, "annotations": {"audience": ["robot"]}}]}, "role"),
    ("CallToolResult", {"content": [{**TEXT, "annotations": {"audience": ["user"]}}]}, "user"),
    # integers: JSON Schema's `integer` admits a number with a zero fraction
    ("CallToolResult", {"content": [{**LINK, "size": 1.0}]}, "size 1.0"),
    ("CallToolResult", {"content": [{**LINK, "size": 1.5}]}, "size 1.5"),
    ("CallToolResult", {"content": [{**LINK, "size": "1"}]}, "size as a string"),
    ("CallToolResult", {"content": [{**LINK, "size": True}]}, "size true"),
    # content blocks: unknown type, missing type, blocks of a later version
    ("CallToolResult", {"content": [{"type": "video", "url": "x"}]}, "unknown block type"),
    ("CallToolResult", {"content": [{"text": "no type"}]}, "block without type"),
    ("CallToolResult", {"content": [{"type": "text"}]}, "text block without text"),
    ("CallToolResult", {"content": [{"type": "audio", "data": "", "mimeType": "a"}]}, "audio"),
    (
        "CallToolResult",
        {"content": [{"type": "resource_link", "uri": "u", "name": "n"}]},
        "resource_link (2025-06-18 on)",
    ),
    ("CallToolResult", {"content": [{**TEXT, "x-extra": [1]}]}, "unknown member in a block"),
    ("CallToolResult", {"content": [TEXT], "structuredContent": [1]}, "array structuredContent"),
    ("CallToolResult", {"content": [TEXT], "structuredContent": {"a": 1}}, "object structured"),
    ("CallToolResult", {"content": [TEXT], "resultType": "complete"}, "resultType"),
    ("CallToolResult", {"content": [TEXT], "resultType": 1}, "resultType a number"),
    ("CallToolResult", {"content": {"type": "text", "text": "x"}}, "content not a list"),
    # open vs closed objects
    ("Tool", {"name": "t", "inputSchema": OBJECT, "x-vendor": {"a": None}}, "unknown top member"),
    ("Tool", {"name": "t", "inputSchema": {"type": "object", "x": 1}}, "unknown schema keyword"),
    ("Tool", {"name": "t", "inputSchema": {"type": "array"}}, "inputSchema not an object type"),
    ("Tool", {"name": "t", "inputSchema": {}}, "inputSchema without type"),
    ("Tool", {"name": "t", "inputSchema": {"type": "object", "properties": {"a": 1}}}, "prop"),
    ("Tool", {"name": "t", "inputSchema": {"type": "object", "required": "a"}}, "required str"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "_meta": {"k": None}}, "_meta member null"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "_meta": []}, "_meta an array"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "outputSchema": {"type": "string"}}, "output"),
    ("Tool", {"name": "t"}, "no inputSchema"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "icons": [{"src": "s"}]}, "icons"),
    ("Tool", {"name": "t", "inputSchema": OBJECT, "icons": [{"src": 1}]}, "icons src number"),
    # embedded resources: text or blob contents, open objects told apart by `text` / `blob`
    ("CallToolResult", _resource({"uri": "u", "text": "t"}), "text resource"),
    ("CallToolResult", _resource({"uri": "u", "blob": "YQ=="}), "blob resource"),
    ("CallToolResult", _resource({"uri": "u", "text": 5, "blob": "YQ=="}), "blob, text a number"),
    ("CallToolResult", _resource({"uri": "u", "text": "t", "blob": 5}), "text, blob a number"),
    ("CallToolResult", _resource({"uri": "u", "text": None, "blob": "YQ=="}), "blob, text null"),
    ("CallToolResult", _resource({"uri": "u"}), "resource without text or blob"),
    ("CallToolResult", _resource({"uri": "u", "text": 5}), "resource text a number"),
    ("CallToolResult", _resource({"text": "t"}), "resource without uri"),
    ("CallToolResult", _resource({"uri": "u", "blob": "YQ==", "mimeType": 1}), "blob mimeType"),
]

#: Hand-made inputs of unions only the latest versions define (checked where the version has
#: the definition): elicitation parameters (told apart by `mode`) and the primitive schemas of
#: a requested form (told apart by `type`, several open arms sharing `string` or `array`).
FORM = {"type": "object", "properties": {"n": {"type": "string"}}}
LATE_EDGES: list[tuple[str, Any, str]] = [
    ("ElicitRequestParams", {"message": "m", "requestedSchema": FORM}, "form without mode"),
    ("ElicitRequestParams", {"mode": "form", "message": "m", "requestedSchema": FORM}, "form"),
    ("ElicitRequestParams", {"mode": "url", "message": "m", "url": "https://x"}, "url"),
    ("ElicitRequestParams", {"mode": "url", "message": "m"}, "url without url"),
    ("ElicitRequestParams", {"mode": "url", "message": "m", "requestedSchema": FORM}, "url form"),
    ("ElicitRequestParams", {"mode": "x", "message": "m", "requestedSchema": FORM}, "mode x"),
    ("ElicitRequestParams", {"mode": None, "message": "m", "requestedSchema": FORM}, "mode null"),
    ("ElicitRequestParams", {"message": "m", "url": "https://x"}, "url without mode"),
    ("PrimitiveSchemaDefinition", {"type": "string"}, "string"),
    ("PrimitiveSchemaDefinition", {"type": "string", "enum": ["a"]}, "untitled enum"),
    ("PrimitiveSchemaDefinition", {"type": "string", "enum": [1]}, "enum of numbers"),
    ("PrimitiveSchemaDefinition", {"type": "string", "maxLength": "3"}, "maxLength a string"),
    ("PrimitiveSchemaDefinition", {"type": "string", "oneOf": [{"const": "a"}]}, "oneOf"),
    ("PrimitiveSchemaDefinition", {"type": "integer", "minimum": 1}, "integer"),
    ("PrimitiveSchemaDefinition", {"type": "number", "minimum": "1"}, "minimum a string"),
    ("PrimitiveSchemaDefinition", {"type": "boolean", "default": "yes"}, "boolean default"),
    (
        "PrimitiveSchemaDefinition",
        {"type": "array", "items": {"enum": ["a"], "type": "string"}},
        "",
    ),
    ("PrimitiveSchemaDefinition", {"type": "array"}, "array without items"),
    ("PrimitiveSchemaDefinition", {"type": "object"}, "object"),
    ("PrimitiveSchemaDefinition", {"type": 5}, "type a number"),
    ("PrimitiveSchemaDefinition", {}, "no type"),
    ("PrimitiveSchemaDefinition", [], "not an object"),
]

CORPUS: list[tuple[str, Any, str]] = [
    ("Tool", raw, f"{capture.file}[{i}]") for capture, i, raw in all_tools()
] + [("CallToolResult", capture.data, capture.file) for capture in results()]


def _disagreements(items: list[tuple[str, Any, str]], version: str) -> list[str]:
    found = []
    for definition, instance, what in items:
        schema_ok = not jsonschema_errors(version, definition, instance)
        errors, dumped = model_check(version, definition, instance)
        if schema_ok != (not errors):
            found.append(f"{what}: jsonschema {'accepts' if schema_ok else 'refuses'}, {errors}")
        elif not errors and dumped != instance:
            found.append(f"{what}: accepted but does not round-trip: {dumped}")
    return found


def test_there_are_enough_edge_inputs_and_they_split() -> None:
    """The edge inputs are not all valid or all invalid on any version (they probe both ways)."""
    assert len(EDGES) >= 45
    for version in VERSIONS:
        verdicts = collections.Counter(
            not jsonschema_errors(version, definition, instance)
            for definition, instance, _ in EDGES
        )
        assert verdicts[True] >= 5 and verdicts[False] >= 20, (version, verdicts)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_model_agrees_with_the_schema_on_every_edge_input(version: str) -> None:
    """Hand-made inputs: booleans as strings and numbers, null members, unknown and missing
    block types, open and closed objects."""
    assert _disagreements(EDGES, version) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_the_model_agrees_with_the_schema_on_the_late_unions(version: str) -> None:
    """Elicitation parameters and a form's primitive schemas, where the version defines them."""
    module = module_for(version)
    edges = [edge for edge in LATE_EDGES if hasattr(module, edge[0])]
    if not edges:
        pytest.skip(f"no elicitation unions at {version}")
    verdicts = collections.Counter(not jsonschema_errors(version, d, i) for d, i, _ in edges)
    assert verdicts[True] >= 5 and verdicts[False] >= 5, verdicts
    assert _disagreements(edges, version) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_the_model_agrees_with_the_schema_on_every_corpus_item(version: str) -> None:
    """Real input: 1,042 tools and 178 results, each against every version's schema."""
    assert _disagreements(CORPUS, version) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_the_model_agrees_with_the_schema_on_every_spec_example(version: str) -> None:
    """The spec's own examples of each version (valid ones; invalid ones would be caught too)."""
    examples = [(e.definition, e.instance, e.id) for e in all_examples() if e.version == version]
    assert _disagreements(examples, version) == []
