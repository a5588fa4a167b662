"""Adapters: MCP tools as OpenAI, Anthropic and Gemini declarations.

Oracles: the provider SDKs' own types (openai 3.57.0 `ChatCompletionFunctionTool`,
`responses.FunctionTool` and the `...Param` TypedDicts; anthropic 2.14.0 `ToolParam`;
google-genai 3.6.1 `types.FunctionDeclaration`, whose models forbid unknown keys). Expected
shapes are written from the providers' documented request formats and the MCP schema text
(2026-07-28 schema `Tool.inputSchema`: `type: "object"` is required at the root).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.llm import (
    AdaptedTool,
    SchemaNote,
    ToolNameMap,
    ToolRef,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from tests.corpus import all_tools, cases
from tests.llm.sdk_oracles import GROUP, sdk
from tests.property.profiles import bounded

# One worker imports the provider SDKs (tests/llm/sdk_oracles.py).
pytestmark = pytest.mark.xdist_group(GROUP)

NAME_RE = {
    "openai": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
}

WEATHER = {
    "name": "get_weather",
    "title": "Weather Information Provider",
    "description": "Get current weather information for a location",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name or zip code"}},
        "required": ["location"],
    },
}


def mk(schema: Any, name: str = "t", server_id: str = "srv", **extra: Any) -> Tool:
    return Tool.from_wire(server_id, {"name": name, "inputSchema": schema, **extra})


def gemini_params(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, list[SchemaNote]]:
    adapted = to_gemini_function(mk(schema))
    sdk().genai_types.FunctionDeclaration.model_validate(adapted.declaration)
    return adapted.declaration.get("parameters"), list(adapted.notes)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def validate_all(adapted: dict[str, AdaptedTool]) -> None:
    """Every declaration is accepted by its provider SDK's own types."""
    sdk().openai_chat.validate_python(adapted["chat"].declaration)
    sdk().ChatCompletionFunctionTool.model_validate(adapted["chat"].declaration)
    sdk().openai_responses.validate_python(adapted["responses"].declaration)
    sdk().FunctionTool.model_validate(adapted["responses"].declaration)
    sdk().anthropic.validate_python(adapted["anthropic"].declaration)
    sdk().genai_types.FunctionDeclaration.model_validate(adapted["gemini"].declaration)
    sdk().genai_types.FunctionDeclaration.model_validate(adapted["gemini_json"].declaration)


def adapt_all(tool: Tool, maps: dict[str, ToolNameMap] | None = None) -> dict[str, AdaptedTool]:
    maps = maps or {}
    return {
        "chat": to_openai_tool(tool, maps.get("openai")),
        "responses": to_openai_tool(tool, maps.get("openai"), api="responses"),
        "anthropic": to_anthropic_tool(tool, maps.get("anthropic")),
        "gemini": to_gemini_function(tool, maps.get("gemini")),
        "gemini_json": to_gemini_function(tool, maps.get("gemini"), schema="json_schema"),
    }


# -- shapes -----------------------------------------------------------------------------------


def test_openai_chat_completions_declaration_shape() -> None:
    """Spec-mandated (OpenAI Chat Completions `tools[]`: {"type": "function", "function":
    {name, description, parameters}}); 2026-07-28 server/tools example tool."""
    adapted = to_openai_tool(Tool.from_wire("weather", WEATHER))
    assert adapted == AdaptedTool(
        "get_weather",
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get current weather information for a location",
                "parameters": WEATHER["inputSchema"],
            },
        },
        (),
    )


def test_openai_responses_declaration_shape_is_not_strict() -> None:
    """Spec-mandated (OpenAI Responses `FunctionToolParam`: name, parameters and strict are
    required; flat shape)."""
    adapted = to_openai_tool(Tool.from_wire("weather", WEATHER), api="responses")
    assert adapted.declaration == {
        "type": "function",
        "name": "get_weather",
        "description": "Get current weather information for a location",
        "parameters": WEATHER["inputSchema"],
        "strict": False,
    }


def test_anthropic_declaration_shape() -> None:
    """Spec-mandated (Claude docs "Specifying client tools": name, description,
    input_schema)."""
    adapted = to_anthropic_tool(Tool.from_wire("weather", WEATHER))
    assert adapted.declaration == {
        "name": "get_weather",
        "description": "Get current weather information for a location",
        "input_schema": WEATHER["inputSchema"],
    }
    assert adapted.notes == ()


def test_gemini_subset_declaration_shape() -> None:
    """Spec-mandated (google-genai FunctionDeclaration `parameters`: OpenAPI-3.0 Schema with
    `Type` enum names)."""
    adapted = to_gemini_function(Tool.from_wire("weather", WEATHER))
    assert adapted.declaration == {
        "name": "get_weather",
        "description": "Get current weather information for a location",
        "parameters": {
            "type": "OBJECT",
            "properties": {"location": {"type": "STRING", "description": "City name or zip code"}},
            "required": ["location"],
        },
    }
    assert adapted.notes == ()


def test_gemini_json_schema_declaration_passes_schema_through() -> None:
    """Spec-mandated (google-genai FunctionDeclaration `parameters_json_schema`, REST name
    `parametersJsonSchema`: "Describes the parameters to the function in JSON Schema
    format")."""
    adapted = to_gemini_function(Tool.from_wire("weather", WEATHER), schema="json_schema")
    assert adapted.declaration == {
        "name": "get_weather",
        "description": "Get current weather information for a location",
        "parametersJsonSchema": WEATHER["inputSchema"],
    }


def test_adapters_omit_missing_description() -> None:
    """conduit-defined: no `description` key when the tool has none (all three make it
    optional)."""
    tool = mk({"type": "object", "properties": {"a": {"type": "string"}}})
    adapted = adapt_all(tool)
    validate_all(adapted)
    assert "description" not in adapted["chat"].declaration["function"]
    assert "description" not in adapted["anthropic"].declaration
    assert "description" not in adapted["gemini"].declaration


def test_adapters_use_the_map_and_route_back() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": disambiguate by server prefix)."""
    maps = {p: ToolNameMap(p) for p in ("openai", "anthropic", "gemini")}
    tool = mk(obj(), name="admin.tools.list", server_id="ops")
    adapted = adapt_all(tool, maps)
    validate_all(adapted)
    assert adapted["chat"].name == "ops__admin_tools_list"
    assert adapted["chat"].declaration["function"]["name"] == "ops__admin_tools_list"
    assert adapted["anthropic"].declaration["name"] == "ops__admin_tools_list"
    assert adapted["gemini"].declaration["name"] == "ops__admin.tools.list"
    assert maps["openai"].resolve("ops__admin_tools_list") == ToolRef("ops", "admin.tools.list")
    assert maps["gemini"].resolve("ops__admin.tools.list") == ToolRef("ops", "admin.tools.list")


def test_adapters_without_map_keep_accepted_names_and_map_others() -> None:
    """conduit-defined: without a map, the tool's own name when the provider accepts it,
    else the charset-mapped name (no prefix)."""
    assert to_openai_tool(mk(obj(), name="get_x")).name == "get_x"
    assert to_openai_tool(mk(obj(), name="a.b")).name == "a_b"
    assert to_gemini_function(mk(obj(), name="a.b")).name == "a.b"
    assert to_anthropic_tool(mk(obj(), name="Create File")).name == "Create_File"


def test_adapters_reject_caller_bugs() -> None:
    """conduit-defined: wrong argument types or a map for another provider are caller bugs."""
    tool = mk(obj())
    with pytest.raises(TypeError):
        to_openai_tool({"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="anthropic"):
        to_openai_tool(tool, ToolNameMap("anthropic"))
    with pytest.raises(TypeError):
        to_anthropic_tool(tool, {})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        to_openai_tool(tool, api="assistants")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        to_gemini_function(tool, schema="openapi")  # type: ignore[arg-type]


# -- root adjustments -------------------------------------------------------------------------


def test_empty_input_schema_gets_object_root_for_each_provider() -> None:
    """Spec-mandated (2026-07-28 schema Tool.inputSchema: `type: "object"` is required at the
    root; OpenAI refuses a parameters schema whose type is not object)."""
    tool = mk({})
    adapted = adapt_all(tool)
    validate_all(adapted)
    assert adapted["chat"].declaration["function"]["parameters"] == {
        "type": "object",
        "properties": {},
    }
    assert adapted["chat"].notes == (
        SchemaNote(("type",), "added", 'root "type": "object" added'),
        SchemaNote(("properties",), "added", "empty root properties added"),
    )
    assert adapted["anthropic"].declaration["input_schema"] == {"type": "object"}
    assert "parameters" not in adapted["gemini"].declaration
    assert adapted["gemini_json"].declaration["parametersJsonSchema"] == {"type": "object"}
    assert tool.raw["inputSchema"] == {}


def test_properties_null_becomes_empty_object() -> None:
    """conduit-defined (case 05: `properties: null`): providers validate `properties` as an
    object; the raw schema keeps its null."""
    tool = mk({"type": "object", "properties": None})
    adapted = adapt_all(tool)
    validate_all(adapted)
    assert adapted["anthropic"].declaration["input_schema"] == {"type": "object", "properties": {}}
    assert adapted["anthropic"].notes[0].path == ("properties",)
    assert adapted["anthropic"].notes[0].action == "rewritten"
    assert tool.raw["inputSchema"] == {"type": "object", "properties": None}


def test_malformed_root_required_is_cleaned() -> None:
    """conduit-defined: OpenAI answers "None is not of type 'array'" for `required: null`."""
    adapted = to_openai_tool(mk({"type": "object", "properties": {}, "required": None}))
    assert "required" not in adapted.declaration["function"]["parameters"]
    assert adapted.notes[0] == SchemaNote(("required",), "dropped", "root required was null")
    adapted = to_openai_tool(mk({"type": "object", "properties": {}, "required": ["a", 1]}))
    assert adapted.declaration["function"]["parameters"]["required"] == ["a"]


def test_root_type_list_with_object_is_narrowed() -> None:
    """conduit-defined: `["object", "null"]` at the root admits the object MCP sends."""
    adapted = to_anthropic_tool(mk({"type": ["object", "null"], "properties": {}}))
    assert adapted.declaration["input_schema"]["type"] == "object"
    assert adapted.notes[0].action == "rewritten"


@pytest.mark.parametrize("root_type", ["string", ["string", "null"], 5, None])
def test_root_type_that_admits_no_object_is_invalid_tool(root_type: Any) -> None:
    """Spec-mandated (2026-07-28 schema Tool.inputSchema: `type: "object"` is required)."""
    tool = mk({"type": root_type})
    for adapt in (to_openai_tool, to_anthropic_tool, to_gemini_function):
        with pytest.raises(Error) as info:
            adapt(tool)
        assert (info.value.kind, info.value.reason, info.value.path) == (
            "protocol",
            "invalid_tool",
            ("inputSchema", "type"),
        )


def test_root_composition_is_merged_for_providers_that_refuse_it() -> None:
    """Spec-mandated (2026-07-28 example `tool-with-composition-input-schema`: root `oneOf`
    is valid MCP; OpenAI/Anthropic refuse oneOf/anyOf/allOf at the top level)."""
    schema = {
        "type": "object",
        "oneOf": [
            {"properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        ],
    }
    tool = mk(schema)
    before = copy.deepcopy(tool.raw)
    adapted = adapt_all(tool)
    validate_all(adapted)
    merged = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    }
    assert adapted["chat"].declaration["function"]["parameters"] == merged
    assert adapted["anthropic"].declaration["input_schema"] == merged
    assert adapted["gemini"].declaration["parameters"] == {
        "type": "OBJECT",
        "properties": {"id": {"type": "STRING"}, "name": {"type": "STRING"}},
    }
    assert [n.path for n in adapted["chat"].notes] == [("oneOf",)]
    assert tool.raw == before


def test_root_all_of_merges_required_too() -> None:
    """conduit-defined: allOf branches all apply, so their required lists are kept."""
    schema = {"allOf": [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {}}}]}
    params = to_openai_tool(mk(schema)).declaration["function"]["parameters"]
    assert params == {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]}


def test_root_enum_const_not_are_dropped_for_openai_only() -> None:
    """Spec-mandated (OpenAI: not 'enum'/'const'/'not' at the top level); Anthropic documents
    only oneOf/allOf/anyOf."""
    schema = {"type": "object", "properties": {}, "not": {"required": ["x"]}}
    assert "not" not in to_openai_tool(mk(schema)).declaration["function"]["parameters"]
    assert to_anthropic_tool(mk(schema)).declaration["input_schema"]["not"] == {"required": ["x"]}


def test_parameter_names_outside_provider_rules_are_flagged_not_renamed() -> None:
    """Spec-mandated (Anthropic property keys `^[a-zA-Z0-9_.-]{1,64}$`; Gemini parameter
    names start with a letter or underscore, `[a-zA-Z0-9_]`)."""
    tool = mk(obj(**{"rule_name[]": {"type": "string"}, "a.b": {"type": "string"}}))
    anthropic = to_anthropic_tool(tool)
    assert anthropic.notes == (
        SchemaNote(
            ("properties", "rule_name[]"),
            "flagged",
            "parameter name outside anthropic's documented rule (kept: the tool needs it as is)",
        ),
    )
    gemini = to_gemini_function(tool)
    assert [n.path for n in gemini.notes if n.action == "flagged"] == [
        ("properties", "rule_name[]"),
        ("properties", "a.b"),
    ]
    assert set(gemini.declaration["parameters"]["properties"]) == {"rule_name[]", "a.b"}
    assert to_openai_tool(tool).notes == ()


# -- Gemini subset ----------------------------------------------------------------------------

SUBSET_TABLE: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("string", {"type": "string"}, {"type": "STRING"}),
    ("nullable list", {"type": ["string", "null"]}, {"type": "STRING", "nullable": True}),
    (
        "anyOf with null",
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        {"nullable": True, "type": "INTEGER"},
    ),
    (
        "oneOf",
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
    ),
    ("const", {"type": "string", "const": "x"}, {"type": "STRING", "enum": ["x"]}),
    ("enum without type", {"enum": ["a", "b"]}, {"type": "STRING", "enum": ["a", "b"]}),
    ("enum with null", {"enum": ["a", None]}, {"type": "STRING", "nullable": True, "enum": ["a"]}),
    ("integer enum", {"type": "integer", "enum": [1, 2]}, {"type": "INTEGER"}),
    ("uri format", {"type": "string", "format": "uri"}, {"type": "STRING"}),
    (
        "date-time format",
        {"type": "string", "format": "date-time"},
        {"type": "STRING", "format": "date-time"},
    ),
    (
        "int64 format",
        {"type": "integer", "format": "int64"},
        {"type": "INTEGER", "format": "int64"},
    ),
    (
        "bounds",
        {"type": "integer", "minimum": 1, "maximum": 5, "exclusiveMinimum": 0},
        {"type": "INTEGER", "minimum": 1, "maximum": 5},
    ),
    ("huge bound", {"type": "integer", "minimum": 10**400}, {"type": "INTEGER"}),
    ("nan bound", {"type": "number", "maximum": float("nan")}, {"type": "NUMBER"}),
    ("negative count", {"type": "string", "maxLength": -1}, {"type": "STRING"}),
    (
        "string limits",
        {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^a"},
        {"type": "STRING", "minLength": 1, "maxLength": 9, "pattern": "^a"},
    ),
    (
        "array",
        {"type": "array", "items": {"type": "number"}, "minItems": 1, "uniqueItems": True},
        {"type": "ARRAY", "items": {"type": "NUMBER"}, "minItems": 1},
    ),
    (
        "tuple items",
        {"type": "array", "items": [{"type": "string"}]},
        {"type": "ARRAY", "items": {}},
    ),
    (
        "additionalProperties",
        {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": False},
        {"type": "OBJECT", "properties": {"a": {"type": "BOOLEAN"}}},
    ),
    (
        "required filtered",
        {"type": "object", "properties": {"a": {}}, "required": ["a", "ghost"]},
        {"type": "OBJECT", "properties": {"a": {}}, "required": ["a"]},
    ),
    ("examples", {"type": "string", "examples": ["x", "y"]}, {"type": "STRING", "example": "x"}),
    (
        "type list split",
        {"type": ["string", "integer"], "maxLength": 3, "description": "d"},
        {"anyOf": [{"type": "STRING", "maxLength": 3}, {"type": "INTEGER"}], "description": "d"},
    ),
    (
        "allOf merged",
        {"allOf": [{"type": "object", "properties": {"a": {}}}, {"properties": {"b": {}}}]},
        {"type": "OBJECT", "properties": {"a": {}, "b": {}}},
    ),
    (
        "format-only anyOf",
        {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]},
        {"type": "STRING"},
    ),
    (
        "properties implies object",
        {"properties": {"a": {}}},
        {"type": "OBJECT", "properties": {"a": {}}},
    ),
    ("unknown keyword", {"type": "string", "x-mcp-header": "Region"}, {"type": "STRING"}),
    ("false schema", False, {}),
]


@pytest.mark.parametrize(
    ("label", "sub", "expected"), SUBSET_TABLE, ids=[r[0] for r in SUBSET_TABLE]
)
def test_gemini_subset_conversion_table(label: str, sub: Any, expected: dict[str, Any]) -> None:
    """Spec-mandated (google-genai 3.6.1 types.Schema fields; Gemini API: "only 'enum' and
    'date-time' are supported for STRING type", enum only on STRING; additionalProperties
    "only supported in Gemini Enterprise Agent Platform mode"). Results compared as the
    parameter `p` of an otherwise plain tool."""
    params, _notes = gemini_params(obj(p=sub))
    assert params is not None
    assert params["properties"]["p"] == expected


def test_gemini_subset_notes_name_each_dropped_keyword_path() -> None:
    """conduit-defined: every dropped or rewritten keyword is reported with its path."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri"},
            "tags": {"type": "array", "items": {"type": "string", "x-extra": 1}},
        },
        "additionalProperties": False,
    }
    _params, notes = gemini_params(schema)
    assert {(n.path, n.action) for n in notes} == {
        (("$schema",), "dropped"),
        (("additionalProperties",), "dropped"),
        (("properties", "url", "format"), "dropped"),
        (("properties", "tags", "items", "x-extra"), "dropped"),
    }


def test_gemini_subset_inlines_local_refs_and_stops_at_recursion() -> None:
    """conduit-defined (google-genai process_schema also inlines $defs): local `$ref`s are
    inlined with sibling keywords winning; a recursive one is dropped with a note."""
    schema = {
        "type": "object",
        "properties": {
            "parent": {"$ref": "#/$defs/Node", "description": "the parent"},
            "legacy": {"$ref": "#/definitions/Leaf"},
            "remote": {"$ref": "https://example.com/schema.json"},
        },
        "$defs": {
            "Node": {
                "type": "object",
                "description": "a node",
                "properties": {"child": {"$ref": "#/$defs/Node"}},
            }
        },
        "definitions": {"Leaf": {"type": "integer"}},
    }
    params, notes = gemini_params(schema)
    assert params == {
        "type": "OBJECT",
        "properties": {
            "parent": {
                "type": "OBJECT",
                "description": "the parent",
                "properties": {"child": {}},
            },
            "legacy": {"type": "INTEGER"},
            "remote": {},
        },
    }
    assert sorted((n.path, n.detail) for n in notes) == [
        (
            ("properties", "parent", "properties", "child", "$ref"),
            "recursive reference not inlined",
        ),
        (("properties", "remote", "$ref"), "only local references (#...) are inlined"),
    ]


def test_gemini_subset_bounds_exponential_reference_graphs() -> None:
    """conduit-defined: inlining stops after a node budget instead of blowing up."""
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(40)
    }
    defs["d40"] = {"type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    adapted = to_gemini_function(mk(schema))
    assert any(n.detail == "inlining budget exhausted" for n in adapted.notes)


def test_gemini_parameterless_tool_omits_parameters() -> None:
    """Spec-mandated (google-genai FunctionDeclaration.parameters: "For function with no
    parameters, this can be left unset"; MCP's recommended no-parameter schema)."""
    adapted = to_gemini_function(mk({"type": "object", "additionalProperties": False}))
    assert adapted.declaration == {"name": "t"}
    sdk().genai_types.FunctionDeclaration.model_validate(adapted.declaration)


# -- corpus, cases, safety ----------------------------------------------------------------------


def test_every_captured_tool_adapts_to_declarations_the_sdks_accept() -> None:
    """Spec-mandated (provider SDK types as oracle) on every real tool in the corpus, through
    one name map per provider; names follow the providers' rules and route back; `raw` is
    never changed."""
    tools = [Tool.from_wire(capture.source, raw) for capture, _i, raw in all_tools()]
    maps = {p: ToolNameMap.from_tools(p, tools) for p in ("openai", "anthropic", "gemini")}
    assert len(tools) > 1000
    for tool in tools:
        before = copy.deepcopy(tool.raw)
        adapted = adapt_all(tool, maps)
        validate_all(adapted)
        for key, provider in (("chat", "openai"), ("anthropic", "anthropic"), ("gemini", "gemini")):
            assert NAME_RE[provider].fullmatch(adapted[key].name)
            assert maps[provider].resolve(adapted[key].name) == (tool.server_id, tool.name)
        assert tool.raw == before


def test_cases_that_parse_adapt_or_raise_only_error() -> None:
    """conduit-defined: every fixture case that is a Tool adapts, or raises only `Error`."""
    for _stem, case in cases():
        if case["kind"] != "tool" or not case["expect"]["ok"]:
            continue
        tool = Tool.from_wire("case", case["input"])
        before = copy.deepcopy(tool.raw)
        try:
            validate_all(adapt_all(tool))
        except Error:
            pass
        assert tool.raw == before


def test_declaration_root_is_a_copy_not_raw() -> None:
    """conduit-defined: only nested objects are shared; the root is copied, so adding keys to
    the declaration's schema cannot reach `raw`."""
    tool = Tool.from_wire("weather", WEATHER)
    params = to_openai_tool(tool).declaration["function"]["parameters"]
    assert params is not tool.raw["inputSchema"]
    params["extra"] = 1
    assert "extra" not in tool.raw["inputSchema"]


def _nest(keyword: str, depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        if keyword == "properties":
            node = {"type": "object", "properties": {"a": node}}
        elif keyword == "items":
            node = {"type": "array", "items": node}
        elif keyword == "anyOf":
            node = {"anyOf": [node, {"type": "integer"}]}
        elif keyword == "oneOf":
            node = {"oneOf": [node]}
        elif keyword == "allOf":
            node = {"allOf": [node]}
    return obj(x=node)


@pytest.mark.slow  # 10,000 levels through every adapter
@pytest.mark.parametrize("keyword", ["properties", "items", "anyOf", "oneOf", "allOf", "$ref"])
def test_adapters_survive_10000_levels(keyword: str) -> None:
    """conduit-defined (contract: no RecursionError on deep input)."""
    if keyword == "$ref":
        defs: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(10_000)}
        defs["d10000"] = {"type": "string"}
        schema: dict[str, Any] = {**obj(x={"$ref": "#/$defs/d0"}), "$defs": defs}
    else:
        schema = _nest(keyword, 10_000)
    tool = mk(schema)
    for adapt in (to_openai_tool, to_anthropic_tool, to_gemini_function):
        assert isinstance(adapt(tool), AdaptedTool)
    notes = to_gemini_function(tool).notes
    assert len(notes) <= 1_001


_scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=5)
_keywords = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "required",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "format",
        "nullable",
        "minimum",
        "maxLength",
        "description",
        "default",
        "examples",
        "additionalProperties",
        "not",
        "x-mcp-header",
    ]
)
_type_values = st.sampled_from(
    ["object", "string", "integer", "number", "boolean", "array", "null", "bogus"]
)
_schemas = st.recursive(
    _scalars | _type_values,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(_keywords | st.text(max_size=3), children, max_size=4)
    | st.fixed_dictionaries({"type": _type_values | st.lists(_type_values, max_size=3)})
    | st.fixed_dictionaries({"$ref": st.sampled_from(["#", "#/$defs/a", "#/properties", "x"])}),
    max_leaves=25,
)


@bounded(200)
@given(st.dictionaries(_keywords, _schemas, max_size=5), st.text(max_size=10))
def test_adapters_on_arbitrary_schemas_raise_only_error_and_leave_raw_alone(
    schema: dict[str, Any], name: str
) -> None:
    """conduit-defined (contract: bad input never crashes, nothing passed is mutated); every
    declaration an adapter returns is still accepted by the SDK types."""
    tool = mk(schema, name=name)
    before = copy.deepcopy(tool.raw)
    try:
        adapted = adapt_all(tool, {p: ToolNameMap(p) for p in ("openai", "anthropic", "gemini")})
    except Error as error:
        assert error.reason == "invalid_tool"
    else:
        validate_all(adapted)
    assert tool.raw == before


def test_gemini_ref_inlining_is_bounded_in_bytes_not_only_nodes() -> None:
    """conduit-defined (found by a hostile-input review): 13 definitions that each reference
    the next twice, ending in a 100 KB string, made a 500 MB declaration under the node budget
    alone; the byte budget (1 MiB of inlined definitions) keeps it near 1 MB."""
    defs: dict[str, object] = {
        f"d{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/$defs/d{i + 1}"},
                "b": {"$ref": f"#/$defs/d{i + 1}"},
            },
        }
        for i in range(13)
    }
    defs["d13"] = {"type": "string", "description": "x" * 100_000}
    schema = {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    adapted = to_gemini_function(Tool.from_wire("s", {"name": "t", "inputSchema": schema}))
    assert len(json.dumps(adapted.declaration)) < 2 * 1024 * 1024
    assert any(n.detail == "inlining size budget exhausted" for n in adapted.notes)


def test_a_ref_through_a_key_of_unicode_digits_is_rewritten_not_a_crash() -> None:
    """Spec-mandated: RFC 6901 section 4 (an array index is ASCII digits): the key `"¹"`, for
    which `str.isdigit` is true and `int` raises, is a key on the path of a rewritten `$ref`."""
    raw = {
        "name": "a",
        "inputSchema": {
            "type": "object",
            "definitions": {"x": {"type": "string"}},
            "properties": {"¹": {"$ref": "#/definitions/x"}, "b": {"$ref": "#/properties/¹"}},
        },
    }
    for adapt in (to_openai_tool, to_anthropic_tool):
        out = json.dumps(adapt(Tool.from_wire("srv", raw)).declaration, ensure_ascii=False)
        assert '"$ref": "#/$defs/x"' in out and '"$ref": "#/properties/¹"' in out
