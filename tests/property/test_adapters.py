"""Property tests: the OpenAI, Anthropic and Gemini adapters and `ToolNameMap`."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.llm import (
    ToolNameMap,
    from_openai_strict_arguments,
    provider_accepts_name,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from tests.property.profiles import bounded
from tests.property.strategies import json_values, real_or_mutated, real_tools, texts

ADAPTERS = (
    ("openai", lambda t, names: to_openai_tool(t, names)),
    ("openai", lambda t, names: to_openai_tool(t, names, api="responses")),
    ("openai", lambda t, names: to_openai_tool(t, names, strict=True)),
    ("anthropic", lambda t, names: to_anthropic_tool(t, names)),
    ("gemini", lambda t, names: to_gemini_function(t, names)),
    ("gemini", lambda t, names: to_gemini_function(t, names, schema="json_schema")),
)
tools = st.one_of(
    real_or_mutated(real_tools(), wire=True),
    st.builds(
        lambda name, schema: {"name": name, "inputSchema": schema},
        texts(wire=True, max_size=80),
        st.one_of(
            json_values(wire=True).filter(lambda v: isinstance(v, dict)),
            st.dictionaries(
                st.sampled_from(
                    ["type", "properties", "$ref", "$defs", "allOf", "anyOf", "required"]
                ),
                json_values(wire=True, max_leaves=6),
            ),
        ),
    ),
)


@bounded(50)
@given(raw=tools, server=st.sampled_from(["s", "my server", "工"]))
def test_adapters_raise_only_invalid_tool_and_give_names_the_provider_accepts(
    raw: Any, server: str
) -> None:
    """conduit-defined (adapter docstrings; provider name rules: OpenAI/Anthropic
    `^[a-zA-Z0-9_-]{1,64}$`, Gemini's): for any tool, each adapter returns a JSON-ready
    declaration named with a name its provider accepts, or raises `invalid_tool` at
    `inputSchema.type`; `tool.raw` is never mutated."""
    try:
        tool = Tool.from_wire(server, raw)
    except Error:
        return
    before = repr(raw)
    for provider, adapt in ADAPTERS:
        for names in (None, ToolNameMap(provider)):
            try:
                adapted = adapt(tool, names)
            except Error as exc:
                assert (exc.reason, exc.path) == ("invalid_tool", ("inputSchema", "type"))
                continue
            assert provider_accepts_name(provider, adapted.name)
            json.dumps(adapted.declaration)  # JSON-ready (raises on anything else)
            if names is not None:
                assert names.resolve(adapted.name) == (server, tool.name)
    assert repr(raw) == before


@bounded(60)
@given(
    provider=st.sampled_from(["openai", "anthropic", "gemini"]),
    pairs=st.lists(
        st.tuples(st.sampled_from(["a", "b", "a.b", "工"]), texts(wire=True, max_size=90)),
        max_size=12,
    ),
)
def test_tool_name_map_is_reversible_and_collision_free(
    provider: str, pairs: list[tuple[str, str]]
) -> None:
    """conduit-defined (`ToolNameMap`): every (server, tool) pair gets one provider-valid name,
    distinct pairs get distinct names, and `resolve` maps each name back."""
    names = ToolNameMap(provider)
    given_out: dict[tuple[str, str], str] = {}
    for server, name in pairs:
        mapped = names.add_name(server, name)
        assert given_out.setdefault((server, name), mapped) == mapped
        assert provider_accepts_name(provider, mapped)
    assert len(set(given_out.values())) == len(given_out)
    for pair, mapped in given_out.items():
        assert tuple(names.resolve(mapped)) == pair


@bounded(60)
@given(raw=tools, arguments=json_values(wire=True))
def test_strict_arguments_mapping_is_total_and_leaves_its_input_alone(
    raw: Any, arguments: Any
) -> None:
    """conduit-defined (`from_openai_strict_arguments` docstring): any arguments object and any
    tool give a new dict without raising; nothing passed is mutated; only keys are removed."""
    try:
        tool = Tool.from_wire("s", raw)
    except Error:
        return
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}
    before = repr(arguments)
    mapped = from_openai_strict_arguments(tool, arguments)
    assert isinstance(mapped, dict)
    assert set(mapped) <= set(arguments)
    assert repr(arguments) == before
