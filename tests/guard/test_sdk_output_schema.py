"""Policy `sdk_output_schema`: the SDK's own output check never hangs or raises on what the
guard passed.

mcp 2.3.0's `ClientSession.validate_tool_result` validates `structuredContent` again after the
guard, with Python's `jsonschema` (backtracking `re`, pairwise `uniqueItems`). The hostile
server's `sdkcheck` scenario (tests/guard/hostile_server.py) sends values that are valid under
ECMA-262 / jsonschema-rs but that Python's engine hangs on or cannot compile. Expected values
come from that scenario's tables and from hand reasoning about each pattern, never from the
guard's output.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import fastmcp
import pytest
from fastmcp.client.transports import StdioTransport
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from conduit_mcp.client import Tool, fingerprint
from conduit_mcp.guard import EVENT_KINDS, GUARD_REASONS, Guard, Policy

from . import hostile_server as hs  # the test double's own tables
from .conftest import Hostile
from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio

#: Tools of the sdkcheck scenario whose outputSchema the SDK must not see, with where the
#: unsafe keyword sits (from the scenario's definitions) and the listing index.
HIDDEN = {
    "redos": (2, ("properties", "s", "pattern"), "pattern"),
    "letters": (3, ("$defs", "word", "pattern"), "pattern"),
    "keys": (4, ("$defs", "m", "patternProperties"), "patternProperties"),
    "distinct": (5, ("properties", "xs", "uniqueItems"), "uniqueItems"),
}
KEPT = {"weather": hs.WEATHER["outputSchema"], "grep": hs.GREP["outputSchema"]}


@asynccontextmanager
async def guarded_session(guard: Guard, server: Hostile) -> AsyncIterator[ClientSession]:
    async with stdio_client(server.stdio()) as (read, write):
        read, write = guard.wrap_streams(read, write, transport="stdio")
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def hidden_events(guard: Guard) -> list[tuple[str | None, tuple[Any, ...], str, str]]:
    return [
        (e.tool, e.path, e.reason, e.details["keyword"])
        for e in guard.events
        if e.kind == "output_schema_hidden"
    ]


def expected_hidden() -> list[tuple[str, tuple[Any, ...], str, str]]:
    return [
        (name, ("tools", index, "outputSchema", *path), "sdk_unsafe_output_schema", keyword)
        for name, (index, path, keyword) in HIDDEN.items()
    ]


# -- end to end: the hostile server over stdio ------------------------------------------------


async def test_client_session_answers_every_call_instead_of_hanging(
    hostile: Callable[[str], Hostile],
) -> None:
    """Under `ClientSession` (default policy): the SDK sees no outputSchema for the four unsafe
    tools, so its own check is skipped; each call answers at once with the value as sent.

    Without the guard's hiding, `redos` and `keys` hang the SDK for minutes (Python re,
    2**34 backtracking steps before the `!$` branch), `letters` raises ("is not a 'regex'"),
    `distinct` takes ~20 s (3,000 objects compared pairwise)."""
    server = hostile("sdkcheck")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        listed = await session.list_tools()
        # Checked before any call: were the schemas not hidden, the calls below would hang.
        schemas = {t.name: t.output_schema for t in listed.tools}
        assert schemas == {"echo": None, **dict.fromkeys(HIDDEN), **KEPT}
        results = {}
        for name in (*HIDDEN, *KEPT):
            # Only stops a hang (the schemas' being hidden, asserted above, is the proof; each
            # call answers in milliseconds on a quiet machine, seconds under a load of 8).
            with anyio.fail_after(60):
                results[name] = await session.call_tool(name, {})
        await session.list_tools()  # a second listing reports nothing again
    for name, result in results.items():
        assert result.is_error is False, name
        assert result.structured_content == hs.SDKCHECK_ANSWERS.get(
            name, {"temperature": 21.5, "conditions": "sunny"}
        )
    assert hidden_events(guard) == expected_hidden()
    assert [e for e in guard.events if e.kind == "output_invalid"] == []


async def test_fastmcp_client_answers_every_call_instead_of_hanging(
    hostile: Callable[[str], Hostile],
) -> None:
    """Under `fastmcp.Client`: same calls, same bound. The cost of hiding: `.data` of a hidden
    tool is the plain `structuredContent` dict, while a tool whose schema the SDK kept gets
    FastMCP's typed object (attributes from its outputSchema)."""
    server = hostile("sdkcheck")
    guard = Guard("hostile")
    params = server.stdio()
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    async with fastmcp.Client(transport) as client:
        listed = await client.list_tools()
        assert {t.name: t.output_schema for t in listed} == {
            "echo": None,
            **dict.fromkeys(HIDDEN),
            **KEPT,
        }
        results = {}
        for name in (*HIDDEN, "grep"):
            with anyio.fail_after(60):  # only stops a hang, as above
                results[name] = await client.call_tool(name, {})
    for name in HIDDEN:
        assert results[name].is_error is False
        assert results[name].data == hs.SDKCHECK_ANSWERS[name]  # plain dict: untyped
    grep = results["grep"].data
    assert not isinstance(grep, dict)
    assert (grep.pattern, grep.count) == ("^(a+)+$", 2)
    assert hidden_events(guard) == expected_hidden()


async def test_keep_shows_the_sdk_the_schema_and_the_sdk_raises_on_an_ecma_pattern(
    hostile: Callable[[str], Hostile],
) -> None:
    """`sdk_output_schema="keep"`: the listing as sent, and the SDK's old behaviour (pinned,
    mcp 2.3.0): Python's jsonschema refuses `^\\p{L}+$` as "not a 'regex'" and `call_tool`
    raises `RuntimeError` although the guard found the value valid. (Under "keep" the redos
    value would hang `call_tool` for minutes; no test runs it.)"""
    server = hostile("sdkcheck")
    guard = Guard("hostile", sdk_output_schema="keep")
    async with guarded_session(guard, server) as session:
        listed = await session.list_tools()
        with anyio.fail_after(5), pytest.raises(RuntimeError, match="Invalid schema"):
            await session.call_tool("letters", {})
    schemas = {t.name: t.output_schema for t in listed.tools}
    assert schemas["letters"] == hs.LETTERS["outputSchema"]
    assert schemas["redos"] == hs.REDOS["outputSchema"]
    assert hidden_events(guard) == []
    assert server.calls() == [("letters", {})]


# -- policy and events ------------------------------------------------------------------------


def test_the_policy_and_its_event_are_documented_names() -> None:
    assert Guard("s").policy.sdk_output_schema == "hide_unsafe"
    assert Policy().sdk_output_schema == "hide_unsafe"
    assert "output_schema_hidden" in EVENT_KINDS
    assert "sdk_unsafe_output_schema" in GUARD_REASONS
    with pytest.raises(ValueError):
        Guard("s", sdk_output_schema="hide")
    with pytest.raises(TypeError):
        Guard("s", sdk_output_schema=False)


_PATTERN_SCHEMA = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}}


async def test_a_held_tool_is_hidden_too_and_a_new_definition_is_reported_again() -> None:
    """Hiding applies to every tool on the SDK's page; the event comes once per definition,
    not on a re-listing. A changed definition held for approval is not on the page at all."""
    listings = iter(
        [
            [tool("p", outputSchema=_PATTERN_SCHEMA)],
            [tool("p", outputSchema=_PATTERN_SCHEMA)],
            [tool("p", description="changed", outputSchema=_PATTERN_SCHEMA)],
        ]
    )
    guard = Guard("s", changed="hold")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": next(listings)} if method == "tools/list" else text("x")

    async with scripted_session(guard, handler) as (session, _):
        pages = [await session.list_tools() for _ in range(3)]
    assert [[(t.name, t.output_schema) for t in page.tools] for page in pages] == [
        [("p", None)],
        [("p", None)],
        [],
    ]
    assert guard.tool_status("p") == "held"
    assert [e.tool for e in guard.events if e.kind == "output_schema_hidden"] == ["p"]


async def test_the_guard_still_validates_a_hidden_tools_output() -> None:
    """The guard validates with the schema as sent: a value that fails `^a` (checked by hand)
    is withheld, while the SDK's listing has no outputSchema for the tool."""
    guard = Guard("s")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [tool("p", outputSchema=_PATTERN_SCHEMA)]}
        return {"content": [], "structuredContent": {"s": "ba"}}

    async with scripted_session(guard, handler) as (session, _):
        listed = await session.list_tools()
        result = await session.call_tool("p", {})
    assert listed.tools[0].output_schema is None
    assert result.is_error is True
    assert [(e.kind, e.json_path) for e in guard.events if e.kind == "output_invalid"] == [
        ("output_invalid", "$.structuredContent.s")
    ]


async def test_the_servers_message_is_not_mutated() -> None:
    """The page the SDK gets is a new message; the server's result dict and tool dicts keep
    their outputSchema."""
    from conduit_mcp.guard._engine import Engine
    from conduit_mcp.guard._state import Pending

    raw_tool = tool("p", outputSchema=_PATTERN_SCHEMA)
    result = {"tools": [raw_tool]}
    guard = Guard("s")  # kept alive: its private store closes with it
    engine = Engine(guard._shared, "stdio")
    engine.version = "2025-11-25"
    out = await engine._on_list(1, result, Pending("tools/list"))
    assert out.action == "replace" and out.message is not None
    assert out.message["result"]["tools"] == [{"name": "p", "inputSchema": {"type": "object"}}]
    assert result == {"tools": [tool("p", outputSchema=_PATTERN_SCHEMA)]}
    assert raw_tool["outputSchema"] is _PATTERN_SCHEMA


# -- which schemas are unsafe -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(None, None, id="no-outputSchema"),
        pytest.param({"type": "object"}, None, id="plain"),
        pytest.param(
            {"properties": {"pattern": {"type": "string"}}}, None, id="property-named-pattern"
        ),
        pytest.param({"type": "array", "uniqueItems": False}, None, id="uniqueItems-false"),
        pytest.param({"pattern": 5}, None, id="pattern-not-a-string"),
        pytest.param({"pattern": "^a"}, ("pattern", ("pattern",)), id="root"),
        pytest.param(
            {"properties": {"a": {"items": [{"pattern": "x"}]}}},
            ("pattern", ("properties", "a", "items", 0, "pattern")),
            id="in-a-list",
        ),
        pytest.param(
            {"$defs": {"d": {"patternProperties": {"^x": {}}}}},
            ("patternProperties", ("$defs", "d", "patternProperties")),
            id="defs",
        ),
        pytest.param(
            {"definitions": {"d": {"type": "array", "uniqueItems": True}}},
            ("uniqueItems", ("definitions", "d", "uniqueItems")),
            id="definitions",
        ),
        pytest.param(
            {"x-vendor": {"deep": {"pattern": "x"}}},
            ("pattern", ("x-vendor", "deep", "pattern")),
            id="under-an-unknown-keyword",  # a $ref may point there
        ),
        pytest.param(
            {"enum": [{"pattern": "x"}]},
            ("pattern", ("enum", 0, "pattern")),
            id="in-a-value-errs-on-hiding",
        ),
        pytest.param(
            {"properties": {"a": {"pattern": "x"}}, "anyOf": [{"pattern": "y"}]},
            ("pattern", ("properties", "a", "pattern")),
            id="first-in-document-order",
        ),
    ],
)
def test_which_output_schemas_are_unsafe_for_the_sdk(
    schema: Any, expected: tuple[str, tuple[Any, ...]] | None
) -> None:
    """conduit-defined: `pattern` (a string), `patternProperties` (an object) and
    `uniqueItems: true`, anywhere in the schema; a property *named* pattern is not one."""
    from conduit_mcp.guard._sdkschema import unsafe_output_schema

    raw: dict[str, Any] = {"name": "t", "inputSchema": {"type": "object"}}
    if schema is not None:
        raw["outputSchema"] = schema
    found = unsafe_output_schema(Tool("s", raw, fingerprint(raw)))
    assert (None if found is None else (found.keyword, found.path)) == expected


def test_a_deep_schema_is_walked_without_recursion() -> None:
    """100,000 levels of nesting: an explicit stack, no RecursionError, the path found."""
    from conduit_mcp.guard._sdkschema import unsafe_output_schema

    schema: dict[str, Any] = {"pattern": "x"}
    for _ in range(100_000):
        schema = {"not": schema}
    raw = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}
    found = unsafe_output_schema(Tool("s", raw, None))
    assert found is not None
    assert found.path == ("not",) * 100_000 + ("pattern",)
