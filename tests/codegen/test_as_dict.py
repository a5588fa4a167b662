"""The JSON objects a user fills by hand (`AsDict`): a plainly fitting dict is kept as it is, and
the fast check that lets it through never accepts what the exact validator refuses."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pydantic
import pydantic_core
import pytest
from conduit_mcp_wire import VERSIONS, module_for
from conduit_mcp_wire._base import AsDict

LATEST = module_for("2026-07-28")


class _Text(str):
    """A `str` subclass: pydantic's strict `str` takes it; the fast check leaves it to pydantic."""


def _targets() -> list[tuple[str, str, type[pydantic.BaseModel]]]:
    found = []
    for version in VERSIONS:
        module = module_for(version)
        for name in ("InputSchema", "OutputSchema", "ResultMetaObject"):
            model = getattr(module, name, None)
            if model is not None:
                found.append((version, name, model))
    return found


# Values chosen around each declared member's type (conduit-defined: the strict JSON types of the
# schema's members; each is decided by the JSON path, which never takes the fast check).
CANDIDATES: list[Any] = [
    {"type": "object"},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    {"type": "object", "properties": {"a": True}},
    {"type": "object", "properties": {"a": None}},
    {"type": "object", "properties": []},
    {"type": "object", "required": "a"},
    {"type": "object", "required": ["a", 1]},
    {"type": "object", "required": [None]},
    {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"},
    {"type": "object", "$schema": 7},
    {"type": "object", "$schema": None},
    {"type": "object", "additionalProperties": False, "x-vendor": [1, {"b": None}]},
    {"type": "array"},
    {"type": ["object"]},
    {"type": None},
    {"properties": {}},
    {},
    {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    {"io.modelcontextprotocol/serverInfo": None},
    {"com.example/k": 1},
]


@pytest.mark.parametrize(("version", "name", "model"), _targets(), ids=lambda v: str(v))
def test_python_path_agrees_with_the_exact_json_path(
    version: str, name: str, model: type[pydantic.BaseModel]
) -> None:
    """A dict read by `validate_python` (fast check, then the exact validator) is accepted or
    refused exactly as its JSON text read by `validate_json` (the exact validator alone)."""
    adapter: pydantic.TypeAdapter[dict[str, Any]] = pydantic.TypeAdapter(
        Annotated[dict[str, Any], AsDict(model)]
    )
    for value in CANDIDATES:
        try:
            from_json: Any = adapter.validate_json(json.dumps(value))
        except pydantic.ValidationError as error:
            from_json = [(e["type"], e["loc"]) for e in error.errors()]
        try:
            from_python: Any = adapter.validate_python(value)
        except pydantic.ValidationError as error:
            from_python = [(e["type"], e["loc"]) for e in error.errors()]
        assert from_python == from_json, (version, name, value)


# Python-only values (no JSON text spells them): keys that are not exact `str`, tuples for lists.
PYTHON_ONLY: list[Any] = [
    {"type": "object", 1: "x"},
    {"type": "object", _Text("k"): 1},
    {"type": "object", "properties": {1: {}}},
    {"type": "object", "properties": {"a": {2: "x"}}},
    {"type": "object", "properties": {"a": {_Text("t"): "x"}}},
    {"type": "object", "required": ("a",)},
    {"type": "object", "required": [_Text("a")]},
    {"type": _Text("object")},
    {"type": "object", "$schema": _Text("s")},
    {"io.modelcontextprotocol/serverInfo": 1, 2: 3},
]


@pytest.mark.parametrize(("version", "name", "model"), _targets(), ids=lambda v: str(v))
def test_python_only_values_agree_with_the_exact_validator(
    version: str, name: str, model: type[pydantic.BaseModel]
) -> None:
    """Values only Python can spell: the fast check keeps a value as it is only when the exact
    validator (the JSON branch of the member's core schema, run on the Python value) accepts it
    with the same members."""
    adapter: pydantic.TypeAdapter[dict[str, Any]] = pydantic.TypeAdapter(
        Annotated[dict[str, Any], AsDict(model)]
    )
    schema: Any = adapter.core_schema
    if schema["type"] != "json-or-python":
        pytest.skip(f"{name} at {version} has no fast path")
    exact = pydantic_core.SchemaValidator(schema["json_schema"])
    for value in PYTHON_ONLY + CANDIDATES:
        try:
            expected: Any = exact.validate_python(value)
        except pydantic.ValidationError as error:
            expected = [(e["type"], e["loc"]) for e in error.errors()]
        try:
            got: Any = adapter.validate_python(value)
        except pydantic.ValidationError as error:
            got = [(e["type"], e["loc"]) for e in error.errors()]
        assert got == expected, (version, name, value)


def test_a_fitting_dict_is_kept_as_it_is() -> None:
    raw: dict[str, Any] = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "outputSchema": {"type": "object"},
    }
    tool = LATEST.Tool.model_validate(raw)
    assert tool.input_schema is raw["inputSchema"]
    assert tool.output_schema is raw["outputSchema"]
    built = LATEST.Tool(name="t", input_schema=raw["inputSchema"])
    assert built.input_schema is raw["inputSchema"]
    # From JSON text there is no caller's dict: a new one, equal to the wire's.
    parsed = LATEST.Tool.model_validate_json(json.dumps(raw))
    assert parsed.input_schema == raw["inputSchema"]


def test_a_value_the_fast_check_leaves_is_decided_by_pydantic() -> None:
    """A `str` subclass is no exact `str`: the exact validator takes it (pydantic's strict `str`
    admits subclasses) and returns a new dict with the same members."""
    schema = {"type": "object", "$schema": _Text("https://json-schema.org/draft/2020-12/schema")}
    tool = LATEST.Tool.model_validate({"name": "t", "inputSchema": schema})
    assert tool.input_schema == schema and tool.input_schema is not schema
    with pytest.raises(pydantic.ValidationError) as caught:
        LATEST.Tool.model_validate({"name": "t", "inputSchema": {"type": "object", "$schema": 1}})
    assert [e["loc"] for e in caught.value.errors()] == [("inputSchema", "$schema")]


def test_model_validate_options_still_reach_pydantic() -> None:
    """Options keep pydantic's meaning on the generated models (strict by default, lax on
    request, attribute names on request)."""
    lax = LATEST.ToolAnnotations.model_validate({"readOnlyHint": "true"}, strict=False)
    assert lax.read_only_hint is True
    with pytest.raises(pydantic.ValidationError):
        LATEST.ToolAnnotations.model_validate({"readOnlyHint": "true"})
    by_name = LATEST.ToolAnnotations.model_validate({"read_only_hint": True}, by_name=True)
    assert by_name.read_only_hint is True
    # pydantic-core's refusal (`model_validate` is the compiled validator's own method).
    with pytest.raises(ValueError, match="cannot both be set to `False`"):
        LATEST.ToolAnnotations.model_validate({}, by_alias=False)
    assert LATEST.ToolAnnotations.model_validate_json('{"readOnlyHint": "true"}', strict=False)
    with pytest.raises(pydantic.ValidationError):
        LATEST.ToolAnnotations.model_validate_json('{"readOnlyHint": "true"}')
