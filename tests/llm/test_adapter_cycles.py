"""Cyclic Python values at the adapters and `iter_model_text`: the one cycle error, never a hang.

conduit-defined (CHANGELOG "one treatment everywhere"): no JSON parser makes a value that
contains itself, so only a hand-built `inputSchema` or arguments can; every entry point raises
`Error("protocol", "invalid_json")` with `details == {"expected": "a JSON value", "got":
"cycle"}` and the path to the place where a container on the current path is met again.
Expected paths below are worked out by hand from how each cycle is built (each schema holds
exactly one cycle, so that place is unique).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.client._model_view import cycle_path, iter_model_text
from conduit_mcp.llm import (
    from_openai_strict_arguments,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from tests.property.profiles import bounded

CYCLE = {"expected": "a JSON value", "got": "cycle"}

ENTRY_POINTS: dict[str, Callable[[Tool], object]] = {
    "openai": lambda tool: to_openai_tool(tool),
    "openai-strict": lambda tool: to_openai_tool(tool, strict=True),
    "openai-responses": lambda tool: to_openai_tool(tool, api="responses"),
    "anthropic": lambda tool: to_anthropic_tool(tool),
    "gemini": lambda tool: to_gemini_function(tool),
    "gemini-json-schema": lambda tool: to_gemini_function(tool, schema="json_schema"),
    "openai-strict-arguments": lambda tool: from_openai_strict_arguments(tool, {"p": None}),
    "iter_model_text": lambda tool: list(iter_model_text(tool.raw)),
    "iter_model_text-hidden": lambda tool: list(iter_model_text(tool.raw, plain=False)),
}


def at_root() -> tuple[dict[str, Any], tuple[Any, ...]]:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema  # the root met again at properties/self
    return schema, ("inputSchema", "properties", "self")


def in_properties() -> tuple[dict[str, Any], tuple[Any, ...]]:
    inner: dict[str, Any] = {"type": "object", "description": "a node", "properties": {}}
    inner["properties"]["child"] = inner  # properties/p met again at its properties/child
    schema = {"type": "object", "properties": {"p": inner, "q": {"type": "string"}}}
    return schema, ("inputSchema", "properties", "p", "properties", "child")


def in_defs_by_ref() -> tuple[dict[str, Any], tuple[Any, ...]]:
    node: dict[str, Any] = {"type": "object", "properties": {"value": {"type": "integer"}}}
    node["properties"]["next"] = {"anyOf": [node, {"type": "null"}]}
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/node"}},
        "required": ["p"],
        "$defs": {"node": node},
    }
    return schema, ("inputSchema", "$defs", "node", "properties", "next", "anyOf", 0)


def in_a_default() -> tuple[dict[str, Any], tuple[Any, ...]]:
    value: list[Any] = ["a"]
    value.append({"again": value})  # data, not a schema: shared into declarations as is
    schema = {"type": "object", "properties": {"p": {"type": "array", "default": value}}}
    return schema, ("inputSchema", "properties", "p", "default", 1, "again")


PLACES = {
    "root": at_root,
    "properties": in_properties,
    "defs-by-ref": in_defs_by_ref,
    "default": in_a_default,
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_cyclic_input_schema_is_the_one_cycle_error(entry: str, place: str) -> None:
    schema, path = PLACES[place]()
    tool = Tool.from_wire("srv", {"name": "t", "description": "d", "inputSchema": schema})
    with pytest.raises(Error) as info:
        ENTRY_POINTS[entry](tool)
    got = (info.value.kind, info.value.reason, info.value.path, dict(info.value.details))
    assert got == ("protocol", "invalid_json", path, CYCLE)


def test_cyclic_arguments_are_the_one_cycle_error() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object"}}},
    }
    tool = Tool.from_wire("srv", {"name": "t", "inputSchema": schema})
    arguments: dict[str, Any] = {"items": [{"n": 1}]}
    arguments["items"][0]["back"] = arguments["items"]  # the list met again inside its item
    with pytest.raises(Error) as info:
        from_openai_strict_arguments(tool, arguments)
    got = (info.value.kind, info.value.reason, info.value.path, dict(info.value.details))
    assert got == ("protocol", "invalid_json", ("arguments", "items", 0, "back"), CYCLE)
    assert arguments["items"][0]["back"] is arguments["items"]  # not mutated


def test_shared_acyclic_values_are_not_cycles() -> None:
    """A sub-schema used twice (a DAG) is no cycle: every entry point goes through."""
    shared = {"type": "string", "description": "shared", "enum": ["a", "b"]}
    schema = {"type": "object", "properties": {"a": shared, "b": shared, "c": [shared]}}
    tool = Tool.from_wire("srv", {"name": "t", "inputSchema": schema})
    for entry in ENTRY_POINTS.values():
        entry(tool)
    assert cycle_path(schema) is None
    declaration = to_anthropic_tool(tool).declaration["input_schema"]
    assert declaration["properties"]["a"] == declaration["properties"]["b"] == shared


# -- a cycle built into a random schema ----------------------------------------------------------

_LEAF = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "boolean", "null"])},
    optional={"description": st.text(max_size=5), "enum": st.lists(st.integers(), max_size=2)},
)
_NAMES = st.text(alphabet="abcxyz", min_size=1, max_size=3)


def _extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(_NAMES, children, min_size=1, max_size=3),
        ),
        st.builds(lambda item: {"type": "array", "items": item}, children),
        st.builds(lambda items: {"anyOf": items}, st.lists(children, min_size=1, max_size=3)),
        st.builds(
            lambda defs: {"$defs": defs, "$ref": "#/$defs/" + next(iter(defs))},
            st.dictionaries(_NAMES, children, min_size=1, max_size=2),
        ),
    )


_SCHEMAS = st.recursive(_LEAF, _extend, max_leaves=12)


def _containers(schema: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, container) for every dict and list of `schema`, the root first."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        found.append((path, node))
        members = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in members:
            if isinstance(child, (dict, list)):
                stack.append(((*path, key), child))
    return found


def _follow(root: Any, path: tuple[Any, ...]) -> list[Any]:
    """The containers from `root` along `path`, `root` included."""
    chain = [root]
    for key in path:
        chain.append(chain[-1][key])
    return chain


@given(
    body=_SCHEMAS,
    pick=st.integers(min_value=0),
    back=st.integers(min_value=0),
    entry=st.sampled_from(sorted(ENTRY_POINTS)),
)
@bounded(60)
def test_a_cycle_built_into_a_random_schema_is_found(
    body: dict[str, Any], pick: int, back: int, entry: str
) -> None:
    """A random schema, one dict inside it given a member pointing back at itself or one of
    its ancestors: the error's path, followed from the tool's `inputSchema`, ends at a
    container already on that path (checked by identity, independently of the finder)."""
    schema: dict[str, Any] = {"type": "object", "properties": {"p": body}}
    dicts = [(path, node) for path, node in _containers(schema) if isinstance(node, dict)]
    path, node = dicts[pick % len(dicts)]
    ancestors = _follow(schema, path)
    node["loop"] = ancestors[back % len(ancestors)]
    tool = Tool.from_wire("srv", {"name": "t", "inputSchema": schema})
    with pytest.raises(Error) as info:
        ENTRY_POINTS[entry](tool)
    error = info.value
    assert (error.kind, error.reason, dict(error.details)) == ("protocol", "invalid_json", CYCLE)
    assert error.path[0] == "inputSchema"
    chain = _follow(schema, tuple(error.path[1:]))
    assert any(chain[-1] is earlier for earlier in chain[:-1])
    # without the back-reference the same schema goes through
    del node["loop"]
    ENTRY_POINTS[entry](tool)


def test_shared_values_cost_one_visit_each() -> None:
    """A value shared twice at each of 200 levels (2**200 paths, 201 containers) is acyclic:
    the finder visits each container once, so it answers at all."""
    node: list[Any] = []
    for _ in range(200):
        node = [node, node]
    assert cycle_path(node) is None
    assert cycle_path({"a": node, "b": [node]}) is None


def test_a_deep_acyclic_schema_orjson_refuses_is_no_cycle() -> None:
    """1,000 levels (orjson stops at 255, so the Python finder decides): no cycle error, and
    the adapters translate it as before."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(1_000):
        schema = {"type": "object", "properties": {"p": schema}}
    tool = Tool.from_wire("srv", {"name": "t", "inputSchema": schema})
    for entry in ENTRY_POINTS.values():
        entry(tool)
    parameters = to_anthropic_tool(tool).declaration["input_schema"]
    for _ in range(1_000):
        parameters = parameters["properties"]["p"]
    assert parameters == {"type": "string"}
