"""The three oracles of issue 12 over every corpus tool, every handed case and hypothesis schemas.

1. The provider SDKs' own request types (openai 3.57.0 `ChatCompletionFunctionToolParam` /
   `responses.FunctionToolParam`, anthropic 2.14.0 `ToolParam`, google-genai 3.6.1
   `types.FunctionDeclaration`, whose models forbid unknown keys) accept every declaration.
2. The rule checkers in `adapter_rules.py`, written from each provider's documented limits,
   find nothing.
3. OpenAI and Anthropic schemas pass jsonschema's 2020-12 meta-schema (`check_schema`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.llm import to_anthropic_tool, to_gemini_function, to_openai_tool
from tests.corpus import CASES, all_tools, cases
from tests.llm.adapter_rules import anthropic_problems, gemini_problems, openai_problems
from tests.llm.sdk_oracles import GROUP, sdk
from tests.property.profiles import bounded

# One worker imports the provider SDKs (tests/llm/sdk_oracles.py).
pytestmark = pytest.mark.xdist_group(GROUP)

META = jsonschema.Draft202012Validator


def check_all_oracles(tool: Tool) -> None:
    """Every adapter and mode, through the three oracles; `raw` unchanged."""
    before = copy.deepcopy(tool.raw)
    for strict in (False, True):
        chat = to_openai_tool(tool, strict=strict)
        sdk().openai_chat.validate_python(chat.declaration)
        sdk().ChatCompletionFunctionTool.model_validate(chat.declaration)
        params = chat.declaration["function"]["parameters"]
        assert openai_problems(params, strict=chat.strict) == []
        META.check_schema(params)
        if strict and not chat.strict:
            assert any(n.action == "flagged" and "strict" in n.detail for n in chat.notes)
        responses = to_openai_tool(tool, api="responses", strict=strict)
        sdk().openai_responses.validate_python(responses.declaration)
        sdk().FunctionTool.model_validate(responses.declaration)
        assert responses.declaration["strict"] is responses.strict
        assert responses.declaration["parameters"] == params
    anthropic = to_anthropic_tool(tool)
    sdk().anthropic.validate_python(anthropic.declaration)
    schema = anthropic.declaration["input_schema"]
    assert anthropic_problems(schema) == []
    META.check_schema(schema)
    gemini = to_gemini_function(tool)
    sdk().genai_types.FunctionDeclaration.model_validate(gemini.declaration)
    if "parameters" in gemini.declaration:
        assert gemini_problems(gemini.declaration["parameters"]) == []
    sdk().genai_types.FunctionDeclaration.model_validate(
        to_gemini_function(tool, schema="json_schema").declaration
    )
    json.dumps([chat.declaration, anthropic.declaration, gemini.declaration])
    assert tool.raw == before


@pytest.mark.slow  # the whole corpus through every adapter and mode
def test_every_corpus_tool_passes_the_three_oracles_for_every_adapter_and_mode() -> None:
    """Spec-mandated (provider SDK types; provider documented limits; JSON Schema 2020-12
    meta-schema) on every real tool in tests/fixtures/corpus."""
    tools = [Tool.from_wire(capture.source, raw) for capture, _i, raw in all_tools()]
    assert len(tools) > 1000
    strict_ok = 0
    for tool in tools:
        check_all_oracles(tool)
        strict_ok += to_openai_tool(tool, strict=True).strict
    assert strict_ok > 0  # strict mode converts real tools, not only the trivial ones


def _handed_tools() -> list[Tool]:
    out = []
    for _stem, case in cases():
        if case["kind"] == "tool" and case["expect"]["ok"]:
            out.append(Tool.from_wire("case", case["input"]))
    for path in sorted((CASES / "round2").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case["kind"] == "adapter":
            out.append(Tool.from_wire("srv", case["input"]))
    return out


@pytest.mark.parametrize("tool", _handed_tools(), ids=lambda t: t.name[:20])
def test_every_handed_case_passes_the_three_oracles(tool: Tool) -> None:
    """Spec-mandated (as above) on every handed tool case (tests/fixtures/cases and round2)."""
    try:
        check_all_oracles(tool)
    except Error as error:
        assert error.reason == "invalid_tool"


_scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=5)
_keywords = st.sampled_from(
    [
        "type", "properties", "items", "prefixItems", "additionalItems", "required", "enum",
        "const", "anyOf", "oneOf", "allOf", "not", "$ref", "$defs", "definitions", "id", "$id",
        "format", "nullable", "minimum", "exclusiveMinimum", "maxLength", "pattern",
        "description", "title", "default", "examples", "additionalProperties", "dependencies",
        "patternProperties", "x-mcp-header", "$schema",
    ]
)  # fmt: skip
_types = st.sampled_from(["object", "string", "integer", "number", "boolean", "array", "null"])
_schemas = st.recursive(
    _scalars | _types,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(_keywords | st.text(max_size=3), children, max_size=4)
    | st.fixed_dictionaries({"type": _types | st.lists(_types, max_size=3)})
    | st.fixed_dictionaries(
        {"$ref": st.sampled_from(["#", "#/$defs/a", "#/definitions/a", "#/properties", "x"])}
    ),
    max_leaves=25,
)


@bounded(150)
@given(st.dictionaries(_keywords, _schemas, max_size=5))
def test_hypothesis_schemas_pass_the_three_oracles(schema: dict[str, Any]) -> None:
    """conduit-defined (contract: any schema the adapters accept becomes a declaration every
    oracle accepts; the rest raise only `invalid_tool`)."""
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": schema})
    try:
        check_all_oracles(tool)
    except Error as error:
        assert error.reason == "invalid_tool"
