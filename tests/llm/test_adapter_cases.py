"""Round-2 handed cases of kind `adapter` (tests/fixtures/cases/round2, provenance in its README),
plus the 2020-12 translation, strict mode and its argument mapping, with hand-worked values."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from conduit_mcp.client import Tool
from conduit_mcp.llm import (
    SchemaNote,
    from_openai_strict_arguments,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from tests.corpus import CASES

ROUND2 = CASES / "round2"


def case(stem: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROUND2 / f"{stem}.json").read_text(encoding="utf-8"))
    assert data["kind"] == "adapter"
    return data


def actions(notes: tuple[SchemaNote, ...]) -> set[tuple[tuple[Any, ...], str]]:
    return {(tuple(n.path), n.action) for n in notes}


def test_case_41_gemini_keeps_properties_and_required_only_on_object() -> None:
    """Handed case 41 (Gemini: "only allowed for OBJECT type")."""
    adapted = to_gemini_function(
        Tool.from_wire("srv", case("41-adapter-gemini-properties-on-string")["input"])
    )
    params = adapted.declaration["parameters"]
    assert params["properties"]["payload"] == {
        "type": "STRING",
        "description": "JSON text of the record",
    }
    assert params["required"] == ["key", "payload"]
    assert {
        (("properties", "payload", "properties"), "dropped"),
        (("properties", "payload", "required"), "dropped"),
    } <= actions(adapted.notes)


def test_case_43_gemini_gives_every_array_items() -> None:
    """Handed case 43 (Gemini 400 "items: missing field")."""
    adapted = to_gemini_function(
        Tool.from_wire("srv", case("43-adapter-gemini-array-without-items")["input"])
    )
    props = adapted.declaration["parameters"]["properties"]
    assert props["nodes"] == {"type": "ARRAY", "description": "node ids", "items": {}}
    assert props["edges"] == {"type": "ARRAY", "nullable": True, "items": {}}
    assert {
        (("properties", "nodes", "items"), "added"),
        (("properties", "edges", "items"), "added"),
    } <= actions(adapted.notes)


def test_case_44_openai_gives_every_nested_array_items() -> None:
    """Handed case 44 (OpenAI "array schema missing items", strict off)."""
    adapted = to_openai_tool(
        Tool.from_wire("srv", case("44-adapter-openai-array-without-items")["input"])
    )
    props = adapted.declaration["function"]["parameters"]["properties"]
    assert props["words"] == {"type": "array", "description": "words to tag", "items": {}}
    assert props["opts"]["properties"]["extra"] == {"type": "array", "items": {}}
    assert actions(adapted.notes) == {
        (("properties", "words", "items"), "added"),
        (("properties", "opts", "properties", "extra", "items"), "added"),
    }


def test_gemini_enum_loses_empty_members_and_then_itself() -> None:
    """Spec-mandated (Gemini: enum members must be non-empty strings)."""
    tool = Tool.from_wire(
        "s",
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "enum": ["", "x"]},
                    "b": {"type": "string", "enum": [""]},
                    "c": {"type": "object", "properties": {}},
                },
            },
        },
    )
    props = to_gemini_function(tool).declaration["parameters"]["properties"]
    assert props == {
        "a": {"type": "STRING", "enum": ["x"]},
        "b": {"type": "STRING"},
        "c": {"type": "OBJECT"},
    }


DRAFT07 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "definitions": {"Point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
    "properties": {
        "at": {"$ref": "#/definitions/Point"},
        "pair": {
            "type": "array",
            "items": [{"type": "string"}],
            "additionalItems": False,
        },
        "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "m": {"type": "number", "maximum": 9, "exclusiveMaximum": False},
        "card": {"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
        "legacy": {"id": "http://example.com/legacy", "type": "string"},
    },
}


def test_anthropic_translates_draft07_idioms_to_2020_12() -> None:
    """Spec-mandated (JSON Schema 2020-12 Core "prefixItems"/"items"; Validation 6.2.5
    exclusiveMinimum a number; 2019-09 notes: definitions -> $defs, dependencies split;
    draft-06: id -> $id). Expected values worked out by hand from those texts."""
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": DRAFT07})
    schema = to_anthropic_tool(tool).declaration["input_schema"]
    assert schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "Point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}
        },
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
            "n": {"type": "number", "exclusiveMinimum": 0},
            "m": {"type": "number", "maximum": 9},
            "card": {
                "type": "object",
                "dependentRequired": {"a": ["b"]},
                "dependentSchemas": {"c": {"required": ["d"]}},
            },
            "legacy": {"$id": "http://example.com/legacy", "type": "string"},
        },
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    # Same meaning: draft-07 and the translation agree on these instances.
    old = jsonschema.Draft7Validator(DRAFT07)
    new = jsonschema.Draft202012Validator(schema)
    for instance in (
        {"at": [1, 2]},
        {"at": [1, "x"]},
        {"pair": ["a"]},
        {"pair": ["a", "b"]},
        {"card": {"a": 1}},
        {"card": {"a": 1, "b": 2}},
        {"card": {"c": 1}},
    ):
        assert old.is_valid(instance) == new.is_valid(instance), instance
    # The boolean exclusive bound is draft-04's; compare that property under draft-04.
    old_n = jsonschema.Draft4Validator(DRAFT07["properties"]["n"])
    new_n = jsonschema.Draft202012Validator(schema["properties"]["n"])
    for number in (-1, 0, 0.5):
        assert old_n.is_valid(number) == new_n.is_valid(number), number


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City"},
        "units": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1},
    },
    "required": ["city"],
}


def test_openai_strict_mode_closes_objects_and_makes_optional_nullable() -> None:
    """Spec-mandated (OpenAI guide "Structured Outputs": additionalProperties false, all
    fields required, optional emulated with null; `default` not supported)."""
    tool = Tool.from_wire("s", {"name": "w", "inputSchema": WEATHER})
    adapted = to_openai_tool(tool, strict=True)
    assert adapted.strict
    assert adapted.declaration["function"]["strict"] is True
    assert adapted.declaration["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City"},
            "units": {"type": ["string", "null"], "enum": ["c", "f", None]},
            "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 7},
        },
        "required": ["city", "units", "days"],
        "additionalProperties": False,
    }
    assert (("properties", "days", "default"), "dropped") in actions(adapted.notes)
    responses = to_openai_tool(tool, api="responses", strict=True)
    assert responses.declaration["strict"] is True


def test_openai_strict_mode_falls_back_with_a_reason() -> None:
    """conduit-defined (documented fallback): a free-form map has no strict form; the plain
    declaration is returned with strict off and a flagged note at the place."""
    schema = {"type": "object", "properties": {"tags": {"type": "object"}}}
    adapted = to_openai_tool(Tool.from_wire("s", {"name": "m", "inputSchema": schema}), strict=True)
    assert not adapted.strict
    assert "strict" not in adapted.declaration["function"]
    flagged = [n for n in adapted.notes if n.action == "flagged"]
    assert [tuple(n.path) for n in flagged] == [("properties", "tags")]
    assert "strict mode not possible" in flagged[0].detail


def test_strict_arguments_map_back_to_the_tool_schema() -> None:
    """Spec-mandated (2026-07-28 server/tools: arguments validate against inputSchema): nulls of
    originally optional properties are dropped, at any depth; required nulls stay."""
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "limit": {"type": "integer"},
            "filter": {"$ref": "#/$defs/Filter"},
            "rows": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
        },
        "required": ["q"],
        "$defs": {
            "Filter": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "op": {"type": ["string", "null"]}},
                "required": ["field", "op"],
            }
        },
    }
    tool = Tool.from_wire("s", {"name": "f", "inputSchema": schema})
    args = {
        "q": "x",
        "limit": None,
        "filter": {"field": "a", "op": None},
        "rows": [{"field": "b", "op": None}],
    }
    mapped = from_openai_strict_arguments(tool, args)
    assert mapped == {
        "q": "x",
        "filter": {"field": "a", "op": None},
        "rows": [{"field": "b", "op": None}],
    }
    assert args["limit"] is None  # input untouched
    jsonschema.Draft202012Validator(schema).validate(mapped)
    optional = {**schema, "$defs": {"Filter": {**schema["$defs"]["Filter"], "required": ["field"]}}}
    tool = Tool.from_wire("s", {"name": "f", "inputSchema": optional})
    assert from_openai_strict_arguments(tool, args) == {
        "q": "x",
        "filter": {"field": "a"},
        "rows": [{"field": "b"}],
    }


def test_descriptions_are_cleaned_with_a_note() -> None:
    """conduit-defined (issue 12 item 4): invisible characters leave every description."""
    raw = {
        "name": "t",
        "description": "Adds\u200b numbers\U000e0041",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number", "description": "first\u202e"}},
        },
    }
    tool = Tool.from_wire("s", raw)
    for adapted, props in (
        (to_openai_tool(tool), lambda d: d["function"]["parameters"]["properties"]),
        (to_anthropic_tool(tool), lambda d: d["input_schema"]["properties"]),
        (to_gemini_function(tool), lambda d: d["parameters"]["properties"]),
    ):
        declaration = adapted.declaration
        described = declaration.get("function", declaration)["description"]
        assert described == "Adds numbers"
        assert props(declaration)["a"]["description"] == "first"
        assert (
            SchemaNote(
                ("description",),
                "rewritten",
                "2 hidden characters removed (invisible, control or escape)",
                "tool",
            )
            in adapted.notes
        )
        assert (("properties", "a", "description"), "rewritten") in actions(adapted.notes)


@pytest.mark.parametrize("depth", [900])
def test_note_paths_share_their_prefixes(depth: int) -> None:
    """conduit-defined (issue 12: notes bounded in memory): notes deep in a schema hold links,
    not copies; they still compare equal to tuples."""
    node: dict[str, Any] = {"type": "array"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node, "b": {"type": "array"}}}
    adapted = to_openai_tool(Tool.from_wire("s", {"name": "t", "inputSchema": node}))
    assert len(adapted.notes) == depth + 1
    deepest = adapted.notes[-1].path
    assert len(deepest) == 2 * depth + 1
    assert tuple(deepest) == ("properties", "a") * depth + ("items",)


def test_gemini_ref_inlining_stops_before_the_declaration_gets_too_deep() -> None:
    """conduit-defined (found with the issue-12 memory case): chained `$ref`s through nested
    definitions made a declaration 15,000 levels deep, which `json.dumps` cannot send;
    inlining stops 200 keys below the root, with a note."""
    defs: dict[str, Any] = {}
    for i in range(10):
        node: dict[str, Any] = {
            "type": "object",
            "properties": {"n": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for _ in range(50):
            node = {"type": "object", "properties": {"a": node}}
        defs[f"d{i}"] = node
    defs["d10"] = {"type": "string"}
    schema = {"type": "object", "properties": {"r": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    adapted = to_gemini_function(Tool.from_wire("s", {"name": "t", "inputSchema": schema}))
    json.dumps(adapted.declaration)
    stops = [
        n for n in adapted.notes if n.detail == "inlining would nest the declaration too deeply"
    ]
    assert len(stops) == 1 and 200 < len(stops[0].path) <= 210
