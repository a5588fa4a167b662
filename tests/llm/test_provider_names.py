"""Provider tool-name rules and `ToolNameMap` (reversible MCP name <-> provider name).

Rules as the providers state them (regexes below are written from their text, not imported):
OpenAI FunctionDefinition.name "a-z, A-Z, 0-9, or contain underscores and dashes, with a
maximum length of 64"; Claude docs tool `name` "^[a-zA-Z0-9_-]{1,64}$"; Gemini
FunctionDeclaration.name "Must start with a letter or an underscore ... underscores, dots ...
and dashes", 64 (Vertex AI v1) / 128 with colons (google-genai 3.6.1): the stricter one.
Hash suffixes in expected values are computed here with `hashlib` from the documented recipe
(SHA-256 of server id, NUL, tool name; first 8 hex digits).
"""

from __future__ import annotations

import hashlib
import pickle
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool
from conduit_mcp.llm import (
    ANTHROPIC_NAME_RULE,
    GEMINI_NAME_RULE,
    OPENAI_NAME_RULE,
    ToolNameMap,
    ToolRef,
    provider_accepts_name,
)
from tests.corpus import all_tools
from tests.property.profiles import bounded

PROVIDERS = ("openai", "anthropic", "gemini")

# Independent statements of each rule (see the module docstring).
RULE_RE = {
    "openai": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
}


def h8(server_id: str, name: str) -> str:
    """The documented short hash suffix."""
    return hashlib.sha256(f"{server_id}\x00{name}".encode()).hexdigest()[:8]


def tool(server_id: str, name: str) -> Tool:
    return Tool.from_wire(server_id, {"name": name, "inputSchema": {"type": "object"}})


# -- rules ---------------------------------------------------------------------------------------

ACCEPT_TABLE = [
    # name, openai, anthropic, gemini
    ("get_weather", True, True, True),
    ("getUser", True, True, True),
    ("DATA_EXPORT_v2", True, True, True),
    ("admin.tools.list", False, False, True),
    ("a" * 64, True, True, True),
    ("a" * 65, False, False, False),
    ("a" * 128, False, False, False),
    ("", False, False, False),
    ("1abc", True, True, False),
    ("-x", True, True, False),
    (".x", False, False, False),
    ("_x", True, True, True),
    ("with space", False, False, False),
    ("ns:tool", False, False, False),
    ("café", False, False, False),
    ("tool\n", False, False, False),
    ("x/y", False, False, False),
    ("ｔｏｏｌ", False, False, False),
]


@pytest.mark.parametrize(("name", "openai", "anthropic", "gemini"), ACCEPT_TABLE)
def test_provider_accepts_name_follows_each_provider_rule(
    name: str, openai: bool, anthropic: bool, gemini: bool
) -> None:
    """Spec-mandated (provider docs: OpenAI FunctionDefinition.name, Claude tool name,
    Gemini FunctionDeclaration.name): the literal table above."""
    assert provider_accepts_name("openai", name) is openai
    assert provider_accepts_name("anthropic", name) is anthropic
    assert provider_accepts_name("gemini", name) is gemini


@pytest.mark.parametrize("value", [None, 5, b"tool", ["tool"]])
def test_provider_accepts_name_says_no_to_non_strings(value: object) -> None:
    """conduit-defined: a value that is not a str is not a name; no exception."""
    for provider in PROVIDERS:
        assert provider_accepts_name(provider, value) is False


def test_provider_accepts_name_rejects_unknown_provider_as_caller_bug() -> None:
    """conduit-defined: an unknown provider is a caller bug (ValueError)."""
    with pytest.raises(ValueError, match="unknown provider"):
        provider_accepts_name("mistral", "tool")


def test_rule_constants_spell_the_documented_patterns() -> None:
    """Spec-mandated (provider docs, as in the module docstring): the anchored patterns."""
    assert OPENAI_NAME_RULE.pattern == "^[a-zA-Z0-9_-]{1,64}$"
    assert ANTHROPIC_NAME_RULE.pattern == "^[a-zA-Z0-9_-]{1,64}$"
    assert GEMINI_NAME_RULE.pattern == "^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$"
    assert [r.max_length for r in (OPENAI_NAME_RULE, ANTHROPIC_NAME_RULE, GEMINI_NAME_RULE)] == [
        64,
        64,
        64,
    ]
    assert all(rule.source for rule in (OPENAI_NAME_RULE, ANTHROPIC_NAME_RULE, GEMINI_NAME_RULE))


@bounded(200)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=70) | st.from_regex(r"[\w.:-]{0,70}")
)
def test_provider_accepts_name_matches_independent_regex(name: str) -> None:
    """Spec-mandated (provider docs): acceptance equals the literal rule regexes."""
    for provider in PROVIDERS:
        assert provider_accepts_name(provider, name) is bool(RULE_RE[provider].fullmatch(name))


# -- ToolNameMap: literal mappings ---------------------------------------------------------------


def test_map_prefixes_server_id_and_routes_back() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": aggregating clients SHOULD
    disambiguate, e.g. by prefixing a server identifier)."""
    names = ToolNameMap("openai")
    assert names.add(tool("weather", "get_forecast")) == "weather__get_forecast"
    assert names.resolve("weather__get_forecast") == ToolRef("weather", "get_forecast")
    assert names.resolve("weather__get_forecast") == ("weather", "get_forecast")


def test_map_gives_same_tool_name_on_two_servers_distinct_names() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names" note: two servers each exposing a
    `search` tool)."""
    names = ToolNameMap.from_tools("anthropic", [tool("s1", "search"), tool("s2", "search")])
    assert names.name_for("s1", "search") == "s1__search"
    assert names.name_for("s2", "search") == "s2__search"
    assert names.resolve("s2__search") == ToolRef("s2", "search")


def test_map_maps_dots_for_openai_and_keeps_them_for_gemini() -> None:
    """Spec-mandated (OpenAI name charset has no dot; Gemini's has)."""
    assert ToolNameMap("openai").add(tool("srv", "admin.tools.list")) == "srv__admin_tools_list"
    assert ToolNameMap("anthropic").add(tool("srv", "admin.tools.list")) == "srv__admin_tools_list"
    assert ToolNameMap("gemini").add(tool("srv", "admin.tools.list")) == "srv__admin.tools.list"


@pytest.mark.parametrize("order", [0, 1])
def test_map_collision_after_mapping_gives_the_mapped_one_a_hash_in_any_order(order: int) -> None:
    """conduit-defined (issue: "a collision after mapping gets a short hash suffix"): `a_b` is
    written out verbatim and keeps `srv__a_b`; `a.b` gets the hash, whatever the order."""
    pair = [tool("srv", "a.b"), tool("srv", "a_b")]
    names = ToolNameMap.from_tools("openai", pair if order == 0 else pair[::-1])
    assert names.name_for("srv", "a_b") == "srv__a_b"
    assert names.name_for("srv", "a.b") == f"srv__a_b_{h8('srv', 'a.b')}"
    assert names.resolve(f"srv__a_b_{h8('srv', 'a.b')}") == ToolRef("srv", "a.b")


def test_map_collision_of_two_mapped_names_hashes_both() -> None:
    """conduit-defined: neither `a.b` nor `a b` is verbatim, so both get a hash suffix."""
    names = ToolNameMap.from_tools("openai", [tool("srv", "a b"), tool("srv", "a.b")])
    assert names.name_for("srv", "a b") == f"srv__a_b_{h8('srv', 'a b')}"
    assert names.name_for("srv", "a.b") == f"srv__a_b_{h8('srv', 'a.b')}"


def test_map_add_is_first_come_and_never_renames() -> None:
    """conduit-defined: incremental `add` keeps names already given."""
    names = ToolNameMap("openai")
    assert names.add(tool("srv", "a.b")) == "srv__a_b"
    assert names.add(tool("srv", "a_b")) == f"srv__a_b_{h8('srv', 'a_b')}"
    assert names.add(tool("srv", "a.b")) == "srv__a_b"
    assert len(names) == 2


def test_map_without_prefix_hashes_every_tool_of_a_cross_server_collision() -> None:
    """conduit-defined: with `server_prefix=False`, two verbatim `search` tools both get hashes
    (neither wins: order must not matter)."""
    names = ToolNameMap.from_tools(
        "openai",
        [tool("s2", "search"), tool("s1", "search"), tool("s1", "other")],
        server_prefix=False,
    )
    assert names.name_for("s1", "search") == f"search_{h8('s1', 'search')}"
    assert names.name_for("s2", "search") == f"search_{h8('s2', 'search')}"
    assert names.name_for("s1", "other") == "other"


def test_map_cuts_long_names_with_hash_to_the_provider_limit() -> None:
    """Spec-mandated (OpenAI/Anthropic/Gemini: at most 64 characters); the cut is
    conduit-defined: first 55 characters, `_`, 8 hex digits."""
    name = "agency-hosting_listAvailablePHPVersionsForAnOrderV1"  # 51 characters, from the corpus
    full = f"hostinger-api-mcp__{name}"
    expected = f"{full[:55]}_{h8('hostinger-api-mcp', name)}"
    for provider in PROVIDERS:
        mapped = ToolNameMap(provider).add(tool("hostinger-api-mcp", name))
        assert mapped == expected
        assert len(mapped) == 64


def test_map_handles_128_character_mcp_name() -> None:
    """Spec-mandated (2026-07-28 server/tools "Tool Names": up to 128 characters) and the
    providers' 64."""
    name = "x" * 128
    mapped = ToolNameMap("openai", server_prefix=False).add(tool("s", name))
    assert mapped == f"{'x' * 55}_{h8('s', name)}"


@pytest.mark.parametrize(
    ("provider", "server_id", "name", "expected"),
    [
        ("openai", "srv", "café", "srv__cafe"),
        ("openai", "srv", "Create File Share", "srv__Create_File_Share"),
        ("openai", "my.server", "x", "my_server__x"),
        ("gemini", "my.server", "x", "my.server__x"),
        ("openai", "srv", "天气", f"srv____{h8('srv', '天气')}"),
        ("openai", "srv", "", f"srv___{h8('srv', '')}"),
        ("gemini", "9srv", "x", "_9srv__x"),
        ("anthropic", "srv", "a/b:c", "srv__a_b_c"),
    ],
)
def test_map_maps_unicode_and_other_characters(
    provider: str, server_id: str, name: str, expected: str
) -> None:
    """conduit-defined mapping: accents stripped (NFKD), each run of other characters becomes
    `_`, a tool part with no ASCII letter or digit left gets a hash, Gemini names start with a
    letter or `_` (Gemini rule)."""
    mapped = ToolNameMap(provider).add(tool(server_id, name))
    assert mapped == expected
    assert RULE_RE[provider].fullmatch(mapped)


def test_map_copes_with_lone_surrogates_in_names() -> None:
    """conduit-defined: JSON may carry a lone surrogate (`\\ud800`); mapping must not raise."""
    names = ToolNameMap("openai")
    mapped = names.add(tool("srv", "a\ud800b"))
    assert RULE_RE["openai"].fullmatch(mapped)
    assert names.resolve(mapped) == ToolRef("srv", "a\ud800b")


# -- ToolNameMap: routing and API -------------------------------------------------------------


def test_resolve_refuses_a_name_never_given_out() -> None:
    """conduit-defined: a model inventing a tool name is refused by local policy."""
    names = ToolNameMap("openai")
    names.add(tool("srv", "x"))
    for bogus in ("srv__y", "x", 12, None):
        with pytest.raises(Error) as info:
            names.resolve(bogus)
        assert (info.value.kind, info.value.reason, info.value.path) == (
            "policy",
            "unmapped_tool_name",
            (),
        )
        assert names.get(bogus) is None
        assert bogus not in names
    error = pickle.loads(pickle.dumps(info.value))
    assert error.reason == "unmapped_tool_name"


def test_map_views_list_names_in_order_given() -> None:
    """conduit-defined: iteration, len, membership and items."""
    names = ToolNameMap("gemini")
    names.add(tool("a", "one"))
    names.add(tool("b", "two"))
    assert list(names) == ["a__one", "b__two"]
    assert len(names) == 2 and "a__one" in names
    assert list(names.items()) == [("a__one", ToolRef("a", "one")), ("b__two", ToolRef("b", "two"))]
    assert names.name_for("a", "one") == "a__one" and names.name_for("a", "two") is None
    assert names.provider == "gemini" and names.server_prefix is True
    assert "gemini" in repr(names)


def test_map_rejects_caller_bugs() -> None:
    """conduit-defined: wrong argument types are caller bugs (TypeError/ValueError)."""
    with pytest.raises(ValueError):
        ToolNameMap("mistral")
    names = ToolNameMap("openai")
    with pytest.raises(TypeError):
        names.add({"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ToolNameMap.from_tools("openai", [{"name": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        names.add_name("", "x")
    with pytest.raises(TypeError):
        names.add_name("srv", 5)  # type: ignore[arg-type]


def test_map_hash_collision_escalates_deterministically() -> None:
    """conduit-defined: when a hashed name is taken (here by a tool that is literally named
    like it), the longer hash is used."""
    taken = f"a_b_{h8('srv', 'a.b')}"
    names = ToolNameMap("openai")
    names.add(tool("srv", "a_b"))
    names.add(tool("srv", taken))
    mapped = names.add(tool("srv", "a.b"))
    digest = hashlib.sha256(b"srv\x00a.b").hexdigest()
    assert mapped == f"srv__a_b_{digest[:16]}"


# -- corpus and properties --------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_map_over_corpus_is_unique_accepted_reversible_and_order_independent(
    provider: str,
) -> None:
    """Spec-mandated (provider name rules) on every captured tool; order independence is
    conduit-defined."""
    tools = [Tool.from_wire(capture.source, raw) for capture, _i, raw in all_tools()]
    names = ToolNameMap.from_tools(provider, tools)
    shuffled = list(tools)
    random.Random(7).shuffle(shuffled)
    again = ToolNameMap.from_tools(provider, shuffled)
    keys = {(t.server_id, t.name) for t in tools}
    assert len(names) == len(keys)
    for server_id, name in keys:
        mapped = names.name_for(server_id, name)
        assert mapped is not None and RULE_RE[provider].fullmatch(mapped)
        assert names.resolve(mapped) == ToolRef(server_id, name)
        assert again.name_for(server_id, name) == mapped


_names = st.text(alphabet=st.sampled_from("ab._- é天"), max_size=8) | st.text(max_size=80)
_servers = st.text(alphabet=st.sampled_from("sx.-_9"), min_size=1, max_size=6)


@bounded(200)
@given(
    st.lists(st.tuples(_servers, _names), max_size=12),
    st.sampled_from(PROVIDERS),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_map_property_unique_accepted_routable_order_independent(
    pairs: list[tuple[str, str]], provider: str, prefix: bool, rnd: random.Random
) -> None:
    """conduit-defined: for any tools, names are unique, accepted by the provider's rule,
    route back, and do not depend on order."""
    tools = [tool(s, n) for s, n in pairs]
    names = ToolNameMap.from_tools(provider, tools, server_prefix=prefix)
    rnd.shuffle(tools)
    again = ToolNameMap.from_tools(provider, tools, server_prefix=prefix)
    assert len(set(names)) == len(set(pairs)) == len(names)
    for server_id, name in set(pairs):
        mapped = names.name_for(server_id, name)
        assert mapped is not None and RULE_RE[provider].fullmatch(mapped)
        assert names.resolve(mapped) == (server_id, name)
        assert again.name_for(server_id, name) == mapped
