"""codegen/postprocess.py: each step does its one job and refuses output it does not expect."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import postprocess  # noqa: E402

DCG_LIKE = """from __future__ import annotations

from typing import Annotated, Any

from conduit_mcp_wire._base import WireModel
from pydantic import ConfigDict, Field
from typing_extensions import TypeAliasType


class Thing(WireModel):
    count: int
    note: str | None = None
    meta: Annotated[dict[str, Any] | None, Field(alias='_meta')] = None
    anything: Any | None = None
    input_schema: Annotated[InputSchema, Field(alias='inputSchema')]


Model = TypeAliasType("Model", Any)
"""


def test_every_step_on_a_small_module() -> None:
    """Placeholder dropped; `X | None = None` marked NOT_NULL (not `Any`); JSON objects typed as
    dicts with AsDict; `int` is JSONInteger; the answers appended with their imports."""
    out = postprocess.postprocess(DCG_LIKE, "t", "\n\nToolsCallResult = Tag('x')\n")
    flat = re.sub(r"\s*\n\s*", "", out)  # black's line breaks out of the way
    assert 'Model = TypeAliasType("Model", Any)' not in out
    assert "note: Annotated[str | None, NOT_NULL] = None" in flat
    assert "Field(alias='_meta'), NOT_NULL]" in flat
    assert "anything: Any | None = None" in flat
    assert "Annotated[dict[str, Any], Field(alias='inputSchema'), AsDict(InputSchema)]" in flat
    assert "count: JSONInteger" in flat
    imported = {
        node.module: [alias.name for alias in node.names]
        for node in ast.parse(out).body
        if isinstance(node, ast.ImportFrom)
    }
    assert imported["pydantic"] == ["ConfigDict", "Discriminator", "Field", "Tag"]
    assert imported["conduit_mcp_wire._base"] == [
        "NOT_NULL",
        "AsDict",
        "JSONInteger",
        "WireModel",
        "result_type_tag",
    ]


def test_a_module_without_the_placeholder_is_refused() -> None:
    """dcg changed its output: stop, do not skip."""
    with pytest.raises(postprocess.PostprocessError, match="placeholder"):
        postprocess.drop_root_placeholder("x = 1\n", "t")


def test_an_optional_member_that_admits_null_is_found() -> None:
    """generate.py refuses to run while one exists (NOT_NULL would refuse its null)."""
    schema = {
        "$defs": {
            "A": {"properties": {"x": {"type": ["string", "null"]}}, "required": []},
            "B": {"properties": {"y": {"type": ["integer", "null"]}}, "required": ["y"]},
        }
    }
    assert postprocess.nullable_optional_members(schema) == ["/$defs/A/properties/x"]


@pytest.mark.parametrize("version", VERSIONS)
def test_not_null_members_take_absent_and_refuse_null(version: str) -> None:
    """Tool.description: absent reads None (and stays absent on the way out), null is refused."""
    tool = module_for(version).Tool
    raw = {"name": "t", "inputSchema": {"type": "object"}}
    parsed = tool.model_validate(raw)
    assert parsed.description is None
    assert parsed.model_dump(by_alias=True, exclude_unset=True) == raw
    with pytest.raises(pydantic.ValidationError):
        tool.model_validate({**raw, "description": None})


def test_a_json_object_entry_in_range_that_types_nothing_stops_the_pass() -> None:
    """Issue 31: a `JSON_OBJECTS` entry in range that matches no member names itself (SEP-3279
    would drop `outputSchema`: the entry's `until` is then a decision, not a silent skip)."""
    with pytest.raises(postprocess.PostprocessError) as info:
        postprocess.type_json_objects(
            DCG_LIKE, "v2029_04_16", frozenset({"InputSchema", "OutputSchema"})
        )
    assert str(info.value) == (
        "codegen/postprocess.py: JSON_OBJECTS OutputSchema (since 2025-06-18) types no member"
        " at v2029_04_16; set its `until`, or name the model that replaces it"
    )
    out = postprocess.type_json_objects(DCG_LIKE, "t", frozenset({"InputSchema"}))
    assert "AsDict(InputSchema)" in out
