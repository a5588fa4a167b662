"""The guard's decisions, over in-memory streams under the real `ClientSession` (fast).

Expected values come from the spec rules each test names and the scripted server's tables.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import EVENT_KINDS, GUARD_REASONS, Guard, GuardEvent, Policy
from conduit_mcp.pins import PinStore

from .conftest import changed_keys
from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio


# -- construction ---------------------------------------------------------------------------


def test_policy_defaults_are_the_documented_ones() -> None:
    """conduit-defined (coordinator's design): pin new, block changed, check arguments,
    withhold invalid output, 2 s bound, hide outputSchemas the SDK cannot check safely."""
    assert Guard("s").policy == Policy("pin", "block", True, "withhold", 2.0, "hide_unsafe")


def test_unknown_policy_keywords_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown guard policy keyword"):
        Guard("s", on_change="block")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        pytest.param({"new": "trust"}, ValueError, id="new-choice"),
        pytest.param({"changed": 1}, TypeError, id="changed-type"),
        pytest.param({"invalid_output": "drop"}, ValueError, id="output-choice"),
        pytest.param({"check_arguments": "yes"}, TypeError, id="check-type"),
        pytest.param({"output_timeout": 0}, ValueError, id="timeout-zero"),
        pytest.param({"output_timeout": float("inf")}, ValueError, id="timeout-inf"),
        pytest.param({"output_timeout": True}, TypeError, id="timeout-bool"),
    ],
)
def test_bad_policy_values_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        Guard("s", **kwargs)


def test_bad_constructor_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        Guard("")
    with pytest.raises(TypeError):
        Guard("s", pins="pins.db")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Guard("s").wrap_streams(object(), object(), transport="sse")  # type: ignore[arg-type]


def test_event_vocabulary_is_public_and_stable() -> None:
    assert {"tool_rejected", "tool_new", "tool_changed", "call_refused", "output_invalid"} <= (
        EVENT_KINDS
    )
    assert "tool_blocked" in GUARD_REASONS


# -- tools/list ----------------------------------------------------------------------------


async def test_policy_new_block_removes_new_tools_and_refuses_them() -> None:
    guard = Guard("s", new="block")
    async with scripted_session(guard, lambda m, p: {"tools": [tool("a")]}) as (session, script):
        listed = await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("a", {})
    assert listed.tools == []
    assert [(e.kind, e.decision) for e in guard.events] == [
        ("tool_new", "blocked"),
        ("call_refused", "refused"),
    ]
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert script.calls() == []


async def test_policy_new_allow_passes_without_pinning() -> None:
    guard = Guard("s", new="allow")
    async with scripted_session(guard, lambda m, p: {"tools": [tool("a")]}) as (session, _):
        await session.list_tools()
        await session.list_tools()
    assert [e.decision for e in guard.events] == ["allowed", "allowed"]
    assert guard.pins.pinned("s") == {}


async def test_policy_changed_allow_repins_the_new_definition() -> None:
    listings = iter([[tool("a", description="one")], [tool("a", description="two")]])
    guard = Guard("s", changed="allow")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": next(listings)} if method == "tools/list" else text("ok")

    async with scripted_session(guard, handler) as (session, script):
        await session.list_tools()
        second = await session.list_tools()
        await session.call_tool("a", {})
    assert [t.description for t in second.tools] == ["two"]
    changed = [e for e in guard.events if e.kind == "tool_changed"]
    assert [(e.decision, changed_keys(e.changes)) for e in changed] == [("pinned", {"description"})]
    assert script.calls() == [("a", {})]


async def test_pins_persist_across_guards_through_a_file_store(tmp_path: Path) -> None:
    """A caller's PinStore outlives the session: the next session's first listing already
    compares with the pins (the rug pull happened between sessions). With a caller's store
    trust on first use is opt-in (`new="pin"`; the default there is "hold")."""
    db = tmp_path / "pins.db"
    with PinStore(db) as store:
        first = Guard("s", pins=store, new="pin")
        async with scripted_session(first, lambda m, p: {"tools": [tool("a")]}) as (session, _):
            await session.list_tools()
    with PinStore(db) as store:
        second = Guard("s", pins=store)
        changed = {"tools": [tool("a", description="now different")]}
        async with scripted_session(second, lambda m, p: changed) as (session, _):
            listed = await session.list_tools()
    assert listed.tools == []
    assert [(e.kind, e.tool) for e in second.events] == [("tool_changed", "a")]
    # This guard never saw the old definition: only a store that keeps definitions (issue 11's
    # `changes`) can say what changed; a fingerprint-only store says nothing.
    if hasattr(PinStore, "changes"):
        assert changed_keys(second.events[0].changes) == {"description"}
    else:
        assert second.events[0].changes == ()


async def test_a_tool_missing_from_a_complete_listing_is_removed_and_refused() -> None:
    listings = iter([[tool("a"), tool("b")], [tool("a")]])
    guard = Guard("s")
    async with scripted_session(guard, lambda m, p: {"tools": next(listings)}) as (session, _):
        await session.list_tools()
        await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("b", {})
    assert [(e.kind, e.tool) for e in guard.events][-2:] == [
        ("tool_removed", "b"),
        ("call_refused", "b"),
    ]
    assert refused.value.error.data["reason"] == "unknown_tool"


async def test_pages_of_one_listing_share_names_and_removal_waits_for_the_last_page() -> None:
    """Spec 2025-11-25 server/tools "Listing Tools" (pagination): a name on a later page that
    an earlier page of the same listing already used is a duplicate (first wins)."""
    pages = {None: {"tools": [tool("a")], "nextCursor": "p2"}, "p2": {"tools": [tool("a")]}}
    guard = Guard("s")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return pages[params.get("cursor")]

    async with scripted_session(guard, handler) as (session, _):
        first = await session.list_tools()
        from mcp_types import PaginatedRequestParams

        second = await session.list_tools(params=PaginatedRequestParams(cursor="p2"))
    assert [t.name for t in first.tools] == ["a"]
    assert second.tools == []
    assert [(e.kind, e.reason, e.json_path) for e in guard.events] == [
        ("tool_new", "new_tool", "$.tools[0]"),
        ("tool_rejected", "duplicate_tool_name", "$.tools[0].name"),
    ]


@pytest.mark.parametrize(
    "page",
    [{"nope": []}, {}, {"tools": None}, {"content": []}],
    ids=["nope", "empty", "null", "call"],
)
async def test_an_unreadable_page_becomes_a_json_rpc_error(page: dict[str, Any]) -> None:
    """Schema 2025-11-25 `ListToolsResult.required` holds "tools": a result without a `tools`
    array is not a listing. The SDK's model would raise a raw pydantic error out of
    `list_tools` (round-3 case 55); the guard answers the SDK's own error type instead
    (`MCPError`, JSON-RPC -32603 "Internal error", reason `invalid_tools_list`)."""
    guard = Guard("s")
    async with scripted_session(guard, lambda m, p: page) as (session, _):
        with pytest.raises(MCPError) as refused:
            await session.list_tools()
    assert refused.value.error.code == -32603
    assert refused.value.error.data["reason"] == "invalid_tools_list"
    assert [(e.kind, e.reason, e.decision) for e in guard.events] == [
        ("list_unreadable", "invalid_tools_list", "answered_error")
    ]


async def test_an_unknown_protocol_version_is_never_replaced_by_the_newest() -> None:
    """basic/lifecycle "Version Negotiation": the guard checks with the negotiated version
    only; one it does not know leaves the page unchecked, handed on as received, and says so."""
    guard = Guard("s")
    engine = _engine(guard)
    await engine.outbound({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    init = {"protocolVersion": "2099-01-01", "capabilities": {}, "serverInfo": {}}
    await engine.inbound({"jsonrpc": "2.0", "id": 1, "result": init})
    assert engine.version == "2099-01-01"
    await engine.outbound({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    page = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": 1}]}}
    assert (await engine.inbound(page)).action == "pass"
    assert [(e.kind, e.reason) for e in guard.events] == [
        ("list_unreadable", "unknown_protocol_version")
    ]


# -- tools/call ----------------------------------------------------------------------------


async def test_check_arguments_false_sends_invalid_arguments() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    guard = Guard("s", check_arguments=False)

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [{"name": "a", "inputSchema": schema}]}
        return text("ok")

    async with scripted_session(guard, handler) as (session, script):
        await session.list_tools()
        await session.call_tool("a", {"n": "x"})
    assert script.calls() == [("a", {"n": "x"})]


async def test_input_required_results_pass_untouched_at_2026_07_28() -> None:
    """2026-07-28 basic/patterns/mrtr: an InputRequiredResult is not a failure; the guard hands
    it on as received (the SDK drives the retry)."""
    guard = Guard("s")
    engine = _engine(guard)
    engine.version = "2026-07-28"
    guard._tools["a"] = _ok_state("a")
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}
    assert (await engine.outbound(request)).action == "pass"
    item = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "requestState": "opaque"},
    }
    assert (await engine.inbound(item)).action == "pass"


async def test_an_unrecognised_result_type_is_answered_as_an_error_at_2026_07_28() -> None:
    """2026-07-28 basic "ResultType": an unrecognised value MUST be treated as invalid."""
    guard = Guard("s")
    engine = _engine(guard)
    engine.version = "2026-07-28"
    guard._tools["a"] = _ok_state("a")
    await engine.outbound(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "a"}}
    )
    item = {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "mystery", "content": []}}
    verdict = await engine.inbound(item)
    assert verdict.action == "replace" and verdict.message is not None
    answer = verdict.message
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32603
    assert answer["error"]["data"]["reason"] == "invalid_result_type"
    assert answer["error"]["data"]["path"] == "$.resultType"


async def test_items_the_guard_cannot_read_pass_unchanged_and_stray_results_are_dropped() -> None:
    """Exceptions from the transport and notifications are handed on as the same object; a
    result answering no request the client has outstanding is dropped (the SDK waits on no
    such id: the guard remembers every request until its answer or its cancellation)."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import JSONRPCNotification, JSONRPCResponse

    from conduit_mcp.guard._streams import DROP, Connection

    connection = Connection(_engine(Guard("s")))
    error = ValueError("bad line")
    note = SessionMessage(
        JSONRPCNotification(jsonrpc="2.0", method="notifications/tools/list_changed")
    )
    stray = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=99, result={"tools": "x"}))
    for item in (error, note):
        assert await connection.inbound(item) is item
    assert await connection.inbound(stray) is DROP


# -- events --------------------------------------------------------------------------------


async def test_events_reach_the_callback_and_the_log_in_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[GuardEvent] = []

    def broken_callback(event: GuardEvent) -> None:
        seen.append(event)
        raise RuntimeError("the caller's bug")

    guard = Guard("s", on_event=broken_callback)
    with caplog.at_level(logging.INFO, logger="conduit_mcp.guard"):
        async with scripted_session(guard, lambda m, p: {"tools": [tool("a")]}) as (session, _):
            await session.list_tools()
            with pytest.raises(MCPError):
                await session.call_tool("zzz", {})
    assert seen == list(guard.events)
    assert [e.kind for e in seen] == ["tool_new", "call_refused"]
    messages = [r.getMessage() for r in caplog.records if r.name == "conduit_mcp.guard"]
    assert any("tool_new" in m for m in messages)
    assert any("call_refused" in m for m in messages)
    assert any("on_event callback raised" in m for m in messages)


async def test_many_concurrent_refusals_and_calls_lose_no_message() -> None:
    """The local-answer wake-up: 50 refused and 50 sent calls in parallel all complete."""
    guard = Guard("s")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [tool("a")]}
        return text(str(params.get("arguments", {}).get("i")))

    async with scripted_session(guard, handler) as (session, script):
        await session.list_tools()
        answers: dict[int, str] = {}

        async def call(i: int) -> None:
            try:
                result = await session.call_tool("a" if i % 2 else "missing", {"i": i})
                answers[i] = result.content[0].text  # type: ignore[union-attr]
            except MCPError as exc:
                answers[i] = exc.error.data["reason"]

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(call, i)
    assert answers == {i: (str(i) if i % 2 else "unknown_tool") for i in range(100)}
    assert len(script.calls()) == 50


def _engine(guard: Guard) -> Any:
    """The engine of one new connection of `guard` (no transport)."""
    from conduit_mcp.guard._engine import Engine

    return Engine(guard._shared, "stdio")


def _ok_state(name: str) -> Any:
    from conduit_mcp.client import Tool
    from conduit_mcp.guard._guard import ToolState

    return ToolState("ok", Tool.from_wire("s", tool(name)))


# -- the inline / worker-thread split --------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "linear"),
    [
        pytest.param({"type": "object"}, True, id="bare"),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"enum": [1, 2]}}},
                "required": ["a"],
                "additionalProperties": False,
            },
            True,
            id="nested-linear",
        ),
        pytest.param({"properties": {"s": {"pattern": "^(a+)+$"}}}, False, id="pattern"),
        pytest.param({"anyOf": [{"type": "string"}]}, False, id="anyOf"),
        pytest.param({"$ref": "#/$defs/x", "$defs": {"x": {}}}, False, id="ref"),
        pytest.param({"type": "array", "uniqueItems": True}, False, id="uniqueItems"),
        pytest.param({"patternProperties": {"^x": {}}}, False, id="patternProperties"),
        pytest.param({"properties": {"p": {"pattern": "x"}}, "description": "d"}, False, id="deep"),
        pytest.param({"enum": [{"pattern": "x"}]}, True, id="values-are-not-schemas"),
    ],
)
def test_only_schemas_of_linear_keywords_are_checked_inline(
    schema: dict[str, Any], linear: bool
) -> None:
    """conduit-defined: regex, branching, references and pairwise keywords go to the bounded
    worker thread; a schema of the listed linear keywords is checked on the event loop."""
    from conduit_mcp.client import Tool, fingerprint
    from conduit_mcp.guard import _checks

    raw = {"name": "t", "inputSchema": schema}
    assert _checks.is_linear(Tool("s", raw, fingerprint(raw)), "inputSchema") is linear


def test_the_public_names_are_pinned() -> None:
    """A new public name is a deliberate API decision (STYLE.md 1)."""
    import conduit_mcp.guard as guard_module

    assert guard_module.__all__ == [
        "EVENT_KINDS",
        "GUARD_REASONS",
        "INVALID_RESULT_CODE",
        "MAX_EVENTS",
        "REFUSED_CALL_CODE",
        "RESULT_META_KEY",
        "Guard",
        "GuardEvent",
        "Policy",
        "guard_agent_framework_tool",
        "guard_openai_agents_server",
    ]
    assert (guard_module.REFUSED_CALL_CODE, guard_module.INVALID_RESULT_CODE) == (-32602, -32603)
    assert guard_module.RESULT_META_KEY == "conduit-mcp/guard"


async def test_a_response_id_of_5000_digits_never_raises() -> None:
    """int() refuses digit strings past 4,300 digits (CPython's limit); the guard never
    converts such an id, so nothing raises into the SDK: answering no request, both are
    dropped."""
    from mcp.shared.message import SessionMessage
    from mcp.types.jsonrpc import ErrorData, JSONRPCError, JSONRPCResponse

    from conduit_mcp.guard._streams import DROP, Connection

    connection = Connection(_engine(Guard("s")))
    huge = "9" * 5000
    result = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=huge, result={}))
    error = SessionMessage(
        JSONRPCError(jsonrpc="2.0", id=huge, error=ErrorData(code=1, message="x"))
    )
    assert await connection.inbound(result) is DROP
    assert await connection.inbound(error) is DROP


async def test_an_argument_check_past_its_bound_refuses_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A non-linear inputSchema (here: a pattern) is checked in a worker thread; past
    output_timeout the call is refused with its own reason, unsent."""
    import threading

    from conduit_mcp.guard import _checks

    release = threading.Event()

    def stuck(*args: Any, **kwargs: Any) -> Any:
        release.wait()  # never returns on its own: only the bound can end the wait

    monkeypatch.setattr(_checks, "check_arguments", stuck)
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a$"}}}
    guard = Guard("s", output_timeout=0.2)

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [{"name": "a", "inputSchema": schema}]} if method == "tools/list" else {}

    async with scripted_session(guard, handler) as (session, script):
        await session.list_tools()
        # Only stops a hang: the guard's own 0.2 s bound refuses the call.
        with anyio.fail_after(60), pytest.raises(MCPError) as refused:
            await session.call_tool("a", {"s": "a"})
    release.set()  # let the abandoned worker thread finish
    assert refused.value.error.data["reason"] == "argument_check_timeout"
    assert script.calls() == []


async def test_one_guard_keeps_its_knowledge_across_connections() -> None:
    """A client that reconnects (FastMCP does) wraps new streams with the same guard: the
    tools and pins of the first connection still count; the private store closes with it."""
    listings = iter([[tool("a")], [tool("a", description="changed")]])
    with Guard("s") as guard:
        for _ in range(2):
            async with scripted_session(guard, lambda m, p: {"tools": next(listings)}) as (s, _):
                await s.list_tools()
        assert guard.tool_status("a") == "blocked"
    with pytest.raises(ValueError, match="closed"):
        guard.pins.pinned("s")


async def test_a_relisted_page_reuses_intake_only_when_it_is_the_same_json() -> None:
    """A page that is exactly the JSON seen before skips intake's work (counted here); a page
    that differs only where Python's `==` cannot tell (`true` vs `1`) or only orjson cannot
    (NaN vs `null`) is read afresh: `true` vs `1` is a changed definition (RFC 8785 tells them
    apart), NaN is not JSON (intake rejects the tool)."""
    from conduit_mcp.guard import _listing as engine_module

    calls = 0
    real_intake = engine_module.intake

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real_intake(*args, **kwargs)

    schema = {"type": "object", "properties": {"x": {"type": "integer", "default": 1}}}
    x_true = {"type": "integer", "default": True}
    assert x_true == schema["properties"]["x"]  # Python's == cannot tell true from 1
    nan = float("nan")
    listings = iter(
        [
            [tool("a", inputSchema=schema)],
            [tool("a", inputSchema=schema)],  # the same JSON: no new intake
            [tool("a", inputSchema={**schema, "properties": {"x": {**x_true}}})],
            [tool("b", annotations={"x": None})],
            [tool("b", annotations={"x": nan})],
        ]
    )
    guard = Guard("s")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_module, "intake", counting)
        async with scripted_session(guard, lambda m, p: {"tools": next(listings)}) as (s, _):
            counts = []
            for _ in range(5):
                await s.list_tools()
                counts.append(calls)
    assert counts == [1, 1, 2, 3, 4]
    assert [(e.kind, e.tool) for e in guard.events if e.kind != "tool_new"] == [
        ("tool_changed", "a"),
        ("tool_removed", "a"),
        ("tool_rejected", "b"),
    ]


async def test_a_rug_pull_that_makes_the_guard_fail_still_cannot_be_called() -> None:
    """Found in review: the second listing adds a property named "¹" (SUPERSCRIPT ONE:
    `str.isdigit()` is true, `int()` refuses it). If checking that listing fails anywhere, the
    page reaches the SDK unchanged, but a call to the changed tool must never go out on what
    the guard knew before (it would be validated against the old schema)."""
    old = {"type": "object", "properties": {"x": {"type": "string"}}}
    new = {"type": "object", "properties": {"x": {"type": "string"}, "¹": {"type": "string"}}}
    listings = iter([[tool("a", inputSchema=old)], [tool("a", description="d", inputSchema=new)]])
    guard = Guard("s")

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": next(listings)} if method == "tools/list" else text("sent")

    async with scripted_session(guard, handler) as (session, script):
        await session.list_tools()
        await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("a", {"x": "1", "¹": "secret"})
    assert refused.value.error.data["tool"] == "a"
    assert refused.value.error.data["reason"] in {"tool_blocked", "guard_internal_error"}
    assert script.calls() == []
    assert guard.tool_status("a") == "blocked"


async def test_tools_of_a_page_the_guard_fails_on_are_withheld_until_a_good_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """conduit-defined (fail closed): a failure inside the guard on a tools/list page withholds
    every tool of the page from the SDK (an empty listing) and blocks them (calls refused with
    guard_internal_error); the event names the cause; the next listing the guard can check
    restores them with no action."""
    from conduit_mcp.guard import _checks

    real_pin_page = _checks.pin_page
    failing = True

    def pin_page(*args: Any, **kwargs: Any) -> Any:
        if failing:
            raise RuntimeError("simulated bug")
        return real_pin_page(*args, **kwargs)

    monkeypatch.setattr(_checks, "pin_page", pin_page)
    guard = Guard("s")
    listing = {"tools": [tool("a"), tool("b")]}
    async with scripted_session(
        guard, lambda m, p: listing if m == "tools/list" else text("ok")
    ) as (
        session,
        script,
    ):
        first = await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("a", {})
        failing = False
        second = await session.list_tools()
        after = await session.call_tool("a", {})
    assert first.tools == []
    assert [t.name for t in second.tools] == ["a", "b"]
    assert refused.value.error.data["reason"] == "guard_internal_error"
    assert after.content[0].text == "ok"  # type: ignore[union-attr]
    assert script.calls() == [("a", {})]
    unchecked, call = guard.events[:2]
    assert (unchecked.kind, unchecked.reason, unchecked.decision) == (
        "unchecked",
        "guard_internal_error",
        "withheld",
    )
    assert unchecked.details["error"] == "RuntimeError"
    assert unchecked.details["cause"] == "simulated bug"
    assert call.kind == "call_refused"
