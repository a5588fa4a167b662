"""Generated models: snake_case attributes, the wire's names as aliases (issue 15, item 11)."""

from __future__ import annotations

from typing import Any

import mcp_types
import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for

LATEST_MODULE = module_for("2026-07-28")

# Wire objects with every renamed member the client reads (2026-07-28 schema).
TOOL: dict[str, Any] = {
    "name": "get_weather",
    "title": "Weather",
    "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
    "_meta": {"com.example/k": 1},
}
RESULT: dict[str, Any] = {
    "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
    "structuredContent": {"t": 18},
    "isError": False,
    "resultType": "complete",
}


def _aliases(model: type[pydantic.BaseModel]) -> dict[str, str]:
    model.model_rebuild()
    return {name: field.alias or name for name, field in model.model_fields.items()}


def test_attributes_are_snake_case_and_read_the_wire_members() -> None:
    """conduit-defined, transcribed by hand from the wire names above (PEP 8 spelling)."""
    tool = LATEST_MODULE.Tool.model_validate(TOOL)
    # JSON objects a user fills by hand are the wire's dicts (wire names as keys), as in mcp_types.
    assert tool.input_schema == TOOL["inputSchema"]
    assert tool.output_schema == {"type": "object"}
    assert tool.annotations is not None
    assert (tool.annotations.read_only_hint, tool.annotations.open_world_hint) == (True, False)
    assert tool.meta == {"com.example/k": 1}
    result = LATEST_MODULE.CallToolResult.model_validate(RESULT)
    assert (result.is_error, result.structured_content, result.result_type) == (
        False,
        {"t": 18},
        "complete",
    )
    block = result.content[0]
    assert isinstance(block, LATEST_MODULE.ImageContent) and block.mime_type == "image/png"


@pytest.mark.parametrize(
    ("definition", "raw"), [("Tool", TOOL), ("CallToolResult", RESULT)], ids=["tool", "result"]
)
def test_construction_by_attribute_or_wire_name_builds_the_same_model(
    definition: str, raw: dict[str, Any]
) -> None:
    """The issue: construction by either name; `model_dump(by_alias=True)` gives the wire back."""
    model = getattr(LATEST_MODULE, definition)
    by_wire = model(**raw)
    by_attribute = model(**model.model_validate(raw).model_dump(exclude_unset=True))
    assert by_wire == by_attribute == model.model_validate(raw)
    for built in (by_wire, by_attribute):
        assert built.model_dump(mode="json", by_alias=True, exclude_unset=True) == raw


def test_keyword_construction_by_attribute_names_written_by_hand() -> None:
    """`Tool(name=..., input_schema=..., meta=...)` as a caller would write it."""
    tool = LATEST_MODULE.Tool(
        name="a",
        input_schema={"type": "object"},
        annotations={"read_only_hint": True},
        meta={"k": 1},
    )
    assert tool.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "name": "a",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
        "_meta": {"k": 1},
    }


def test_reading_a_wire_object_takes_wire_names_only() -> None:
    """A server's `is_error` is an unknown member (kept), not `isError`: wire names only."""
    result = LATEST_MODULE.CallToolResult.model_validate(
        {"content": [], "resultType": "complete", "is_error": True}
    )
    assert result.is_error is None
    assert result.model_extra == {"is_error": True}
    with pytest.raises(pydantic.ValidationError):
        LATEST_MODULE.Tool.model_validate({"name": "a", "input_schema": {"type": "object"}})
    with pytest.raises(pydantic.ValidationError):
        LATEST_MODULE.Tool.model_validate_json('{"name": "a", "input_schema": {"type": "object"}}')
    # The compiled validator (what a strict conformance check calls) reads wire names too.
    LATEST_MODULE.Tool.model_rebuild()
    with pytest.raises(pydantic.ValidationError):
        LATEST_MODULE.Tool.__pydantic_validator__.validate_python(
            {"name": "a", "input_schema": {"type": "object"}}, strict=True
        )
    # A block inside a result: the union root model reads wire names only as well.
    with pytest.raises(pydantic.ValidationError):
        LATEST_MODULE.CallToolResult.model_validate(
            {"content": [{"type": "image", "data": "", "mime_type": "x"}], "resultType": "complete"}
        )
    # A caller who wants the lenient reading asks for it.
    lenient = LATEST_MODULE.Tool.model_validate(
        {"name": "a", "input_schema": {"type": "object"}}, by_name=True
    )
    assert lenient.input_schema == {"type": "object"}


@pytest.mark.parametrize(
    "definition",
    [
        "Tool",
        "ToolAnnotations",
        "CallToolResult",
        "ListToolsResult",
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
    ],
)
def test_attribute_names_and_aliases_match_mcp_types(definition: str) -> None:
    """Like the ecosystem: mcp_types (what every Python MCP user has) names them the same."""
    ours = _aliases(getattr(LATEST_MODULE, definition))
    peer = _aliases(getattr(mcp_types, definition))
    # mcp_types keeps `Tool.execution` (removed in 2026-07-28) as a legacy field.
    shared = set(ours) & set(peer)
    assert shared == set(ours)
    assert {name: ours[name] for name in shared} == {name: peer[name] for name in shared}


@pytest.mark.parametrize("version", VERSIONS)
def test_no_generated_attribute_is_camel_case_or_prefixed(version: str) -> None:
    """No `inputSchema` attributes and no `field_` prefixes (`field_meta`) in any version."""
    module = module_for(version)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
            if value.__module__ != module.__name__ or issubclass(value, pydantic.RootModel):
                continue
            for name in _aliases(value):
                assert name == name.lower() and not name.startswith("field_"), (value, name)
