"""The generated models' two fast paths give pydantic's own answers, at every spec version.

- `model_validate` / `model_validate_json` are the compiled validator's methods, called without
  pydantic's Python wrapper: the oracle is pydantic's unchanged `BaseModel` classmethods.
- `AsDict`'s compiled check keeps a plainly fitting JSON object (`inputSchema`, `outputSchema`, a
  result's `_meta`) as it is: the oracle is the same model validated with the exact validator in
  its place (pydantic's typed dict), on real and mutated tools, and `jsonschema` on the official
  schema for every value JSON can spell.
"""

from __future__ import annotations

import collections
import json
from typing import Any

import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for
from hypothesis import given
from hypothesis import strategies as st
from pydantic_core import SchemaValidator

from tests.conformance.examples import jsonschema_errors
from tests.corpus import all_tools, results
from tests.property.profiles import bounded
from tests.property.strategies import _slots, real_or_mutated, real_results, real_tools


class _Text(str):
    """A `str` subclass: pydantic's strict `str` takes it, the fast check leaves it to pydantic."""


def _outcome(validate: Any, *args: Any, **options: Any) -> Any:
    """What `validate(*args, **options)` gives: the wire dump, members set, extras, or errors."""
    try:
        model = validate(*args, **options)
    except pydantic.ValidationError as error:
        return ("error", [(e["type"], e["loc"]) for e in error.errors()])
    return (
        "ok",
        type(model).__name__,
        model.model_dump(mode="json", by_alias=True, exclude_unset=True),
        sorted(model.model_fields_set),
        model.model_extra,
    )


def _members(validate: Any, value: Any) -> Any:
    """What `validate(value)` gives, as the members of the model it builds, or the errors."""
    try:
        built = validate(value)
    except pydantic.ValidationError as error:
        return ("error", [(e["type"], e["loc"]) for e in error.errors()])
    if isinstance(built, pydantic.BaseModel):
        return ("ok", built.__dict__, built.model_extra, built.model_fields_set)
    return ("ok", *built)  # the exact validator's (members, extras, members set)


def _exact(schema: Any) -> Any:
    """`schema` with every `AsDict` fast check replaced by its exact validator (the JSON branch)."""
    if isinstance(schema, list):
        return [_exact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    python = schema.get("python_schema")
    if schema.get("type") == "json-or-python" and isinstance(python, dict):
        function = python.get("function", {}).get("function")
        if getattr(function, "__name__", "") == "as_is_or_exact":
            return _exact(schema["json_schema"])
    return {key: _exact(value) for key, value in schema.items()}


_EXACT: dict[tuple[str, str], SchemaValidator] = {}


def _exact_validator(version: str, definition: str) -> SchemaValidator:
    """The members of `definition` validated with the exact validator in place of every fast
    check. Built from the model's inner `model-fields` schema: a `model` schema of a complete
    class would make pydantic-core reuse the class's own validator, fast checks and all."""
    key = (version, definition)
    if key not in _EXACT:
        model = getattr(module_for(version), definition)
        model.model_rebuild()
        schema = outer = model.__pydantic_core_schema__
        if outer["type"] == "definitions":  # the model's own schema, with the ones it refers to
            schema = outer["schema"]
        assert schema["type"] == "model", schema["type"]
        fields = _exact(schema["schema"])
        if outer is not schema:
            fields = {**outer, "schema": fields, "definitions": _exact(outer["definitions"])}
        _EXACT[key] = SchemaValidator(fields, schema.get("config"))
    return _EXACT[key]


CORPUS_TOOLS = [tool for _, _, tool in all_tools()][::7]
CORPUS_RESULTS = [capture.data for capture in results()][::5]

OPTIONS: list[dict[str, Any]] = [
    {},
    {"strict": False},
    {"strict": True},
    {"by_name": True},
    {"by_alias": True, "by_name": True},
    {"context": {"k": 1}},
    {"extra": "ignore"},
    {"extra": "forbid"},
]


@pytest.mark.parametrize("version", VERSIONS)
def test_model_validate_gives_pydantics_answer_with_every_option(version: str) -> None:
    """Oracle: pydantic's own `BaseModel.model_validate` / `model_validate_json`, the Python
    wrappers the generated models skip, on captured tools and results with each option."""
    module = module_for(version)
    for model, items in ((module.Tool, CORPUS_TOOLS), (module.CallToolResult, CORPUS_RESULTS)):
        pydantics = pydantic.BaseModel.model_validate.__func__  # type: ignore[attr-defined]
        pydantics_json = pydantic.BaseModel.model_validate_json.__func__  # type: ignore[attr-defined]
        for item in items:
            text = json.dumps(item)
            for options in OPTIONS:
                ours = _outcome(model.model_validate, item, **options)
                assert ours == _outcome(pydantics, model, item, **options), (model, options, item)
                ours = _outcome(model.model_validate_json, text, **options)
                assert ours == _outcome(pydantics_json, model, text, **options), (model, item)


def test_model_validate_is_the_compiled_validators_own_method() -> None:
    """conduit-defined: the speed of `model_validate` rests on it being the compiled validator's
    method, with no Python frame between (codegen/README.md, "Speed and size")."""
    for version in VERSIONS:
        tool = module_for(version).Tool
        assert tool.model_validate == tool.__pydantic_validator__.validate_python
        assert tool.model_validate_json == tool.__pydantic_validator__.validate_json


@st.composite
def _python_only(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one edit only Python can spell: a key that is not a `str` or is a `str`
    subclass, a `str` subclass for a string, a tuple for a list, a dict subclass for a dict."""
    slots = [(c, k) for c, k in _slots(value) if isinstance(c, dict)]
    if not slots:
        return value
    container, key = slots[draw(st.integers(0, len(slots) - 1))]
    inner = container[key]
    edits = ["int key", "subclass key"]
    if isinstance(inner, str):
        edits.append("subclass value")
    if isinstance(inner, list):
        edits.append("tuple")
    if isinstance(inner, dict):
        edits.append("dict subclass")
    edit = draw(st.sampled_from(edits))
    if edit == "int key":
        container[draw(st.integers(-2, 2))] = inner
    elif edit == "subclass key":
        container[_Text(key) if isinstance(key, str) else key] = container.pop(key)
    elif edit == "subclass value":
        container[key] = _Text(inner)
    elif edit == "tuple":
        container[key] = tuple(inner)
    else:
        container[key] = collections.OrderedDict(inner)
    return value


def _agree(version: str, definition: str, value: Any, *, wire: bool) -> None:
    model = getattr(module_for(version), definition)
    fast = _members(model.model_validate, value)
    exact = _members(_exact_validator(version, definition).validate_python, value)
    assert fast == exact, (version, definition, value)
    if wire:
        accepted = not jsonschema_errors(version, definition, value)
        assert (fast[0] == "ok") == accepted, (version, definition, value)


@bounded(150)
@given(st.sampled_from(VERSIONS), real_or_mutated(real_tools()), st.data())
def test_the_fast_check_of_a_tool_gives_the_exact_answer(
    version: str, tool: Any, data: st.DataObject
) -> None:
    """Oracles: the model with the exact validator in place of the fast check (same value or
    same errors), and `jsonschema` on the version's `Tool` definition for JSON values. Real and
    mutated captured tools, then the same with one Python-only edit."""
    _agree(version, "Tool", tool, wire=True)
    _agree(version, "Tool", data.draw(_python_only(tool)), wire=False)


@bounded(60)
@given(st.sampled_from(VERSIONS), real_or_mutated(real_results()), st.data())
def test_the_fast_check_of_a_result_gives_the_exact_answer(
    version: str, result: Any, data: st.DataObject
) -> None:
    """Oracles as above, on `CallToolResult` (its `_meta` is a checked JSON object)."""
    _agree(version, "CallToolResult", result, wire=True)
    _agree(version, "CallToolResult", data.draw(_python_only(result)), wire=False)


def _schemas() -> tuple[Any, ...]:
    """Every `inputSchema` and `outputSchema` of the real tools (the checked JSON objects)."""
    found = []
    for tool in real_tools():
        if isinstance(tool, dict):
            found.extend(tool[key] for key in ("inputSchema", "outputSchema") if key in tool)
    return tuple(found)


@bounded(200)
@given(
    st.sampled_from(VERSIONS),
    st.sampled_from(("inputSchema", "outputSchema")),
    real_or_mutated(_schemas()),
    st.data(),
)
def test_the_fast_check_of_a_schema_member_gives_the_exact_answer(
    version: str, member: str, schema: Any, data: st.DataObject
) -> None:
    """Oracles as above; every edit lands inside the checked JSON object (real input and
    output schemas, mutated, then with one Python-only edit), where the fast check decides."""
    tool = {"name": "t", "inputSchema": {"type": "object"}, member: schema}
    _agree(version, "Tool", tool, wire=True)
    _agree(version, "Tool", {**tool, member: data.draw(_python_only(schema))}, wire=False)
