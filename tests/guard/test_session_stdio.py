"""The guard under the official SDK's `ClientSession` over stdio, against the hostile server.

These are issue 9's done-when checks. Expected values are worked out from the hostile server's
scenario tables (tests/guard/hostile_server.py) and the spec, never from the guard's output.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.guard import INVALID_RESULT_CODE, REFUSED_CALL_CODE, Guard

from .conftest import Hostile, changed_keys

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def guarded_session(guard: Guard, server: Hostile) -> AsyncIterator[ClientSession]:
    async with stdio_client(server.stdio()) as (read, write):
        read, write = guard.wrap_streams(read, write, transport="stdio")
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def kinds(guard: Guard, kind: str) -> list[tuple[str | None, str]]:
    return [(e.tool, e.reason) for e in guard.events if e.kind == kind]


async def test_mixed_page_lists_the_three_good_tools_and_reports_the_rest(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when; spec 2025-11-25 schema `Tool` (name: string, inputSchema: object with
    type "object", both required), server/tools "Tool Names" (names SHOULD be unique).

    Without the guard the SDK raises for the whole page (issue 9, "What was measured")."""
    server = hostile("mixed")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        listed = await session.list_tools()
    assert [t.name for t in listed.tools] == ["echo", "add", "weather"]
    rejected = [(e.tool, e.reason, e.json_path) for e in guard.events if e.kind == "tool_rejected"]
    assert rejected == [
        ("stringly", "sdk_rejects_tool", "$.tools[1].inputSchema.type"),
        (None, "invalid_tool", "$.tools[3].name"),
        ("echo", "duplicate_tool_name", "$.tools[4].name"),
        ("noschema", "invalid_tool", "$.tools[5].inputSchema"),
    ]
    assert kinds(guard, "tool_new") == [
        ("echo", "new_tool"),
        ("add", "new_tool"),
        ("weather", "new_tool"),
    ]


async def test_the_page_without_the_guard_sinks_in_the_sdk(
    hostile: Callable[[str], Hostile],
) -> None:
    """Known SDK behaviour (mcp 2.3.0), pinned: the reason the guard edits the page."""
    server = hostile("mixed")
    async with stdio_client(server.stdio()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            with pytest.raises(Exception, match="validation error"):
                await session.list_tools()


async def test_invalid_arguments_and_unlisted_tools_are_refused_unsent(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when. Spec 2026-07-28 server/tools "Error Handling": unknown tools and
    invalid arguments are protocol errors, code -32602."""
    server = hostile("mixed")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        ok = await session.call_tool("echo", {"message": "hi"})
        with pytest.raises(MCPError) as bad_type:
            await session.call_tool("echo", {"message": 5})
        with pytest.raises(MCPError) as missing:
            await session.call_tool("add", {"a": 1})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("delete_everything", {})
        with pytest.raises(MCPError) as rejected:
            await session.call_tool("stringly", {})
    assert ok.content[0].text == "hi"  # type: ignore[union-attr]
    for caught in (bad_type, missing, unknown, rejected):
        assert caught.value.error.code == REFUSED_CALL_CODE
        assert caught.value.error.data["source"] == "conduit-mcp.guard"
    assert bad_type.value.error.data == {
        "source": "conduit-mcp.guard",
        "reason": "invalid_arguments",
        "tool": "echo",
        "path": "$.arguments.message",
    }
    assert missing.value.error.data["reason"] == "invalid_arguments"
    assert unknown.value.error.data["reason"] == "unknown_tool"
    assert rejected.value.error.data["reason"] == "tool_rejected"
    # The server saw exactly one call: the valid one.
    assert server.calls() == [("echo", {"message": "hi"})]
    assert kinds(guard, "call_refused") == [
        ("echo", "invalid_arguments"),
        ("add", "invalid_arguments"),
        ("delete_everything", "unknown_tool"),
        ("stringly", "tool_rejected"),
    ]


async def test_rug_pull_without_list_changed_is_blocked_and_later_calls_refused(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when: the second listing changes echo's description and adds a parameter,
    with no notifications/tools/list_changed. Default policy changed="block"."""
    server = hostile("rugpull")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        first = await session.list_tools()
        await session.call_tool("echo", {"message": "before"})
        second = await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("echo", {"message": "after", "notes": "secret"})
    assert [t.name for t in first.tools] == ["echo", "add"]
    assert [t.name for t in second.tools] == ["add"]
    changed = [e for e in guard.events if e.kind == "tool_changed"]
    assert len(changed) == 1
    assert changed[0].tool == "echo"
    assert changed[0].decision == "blocked"
    assert changed_keys(changed[0].changes) == {"description", "inputSchema"}
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert server.calls() == [("echo", {"message": "before"})]
    assert guard.tool_status("echo") == "blocked"


async def test_rug_pull_with_hold_hides_the_tool_until_approved(
    hostile: Callable[[str], Hostile],
) -> None:
    """conduit-defined policy changed="hold": the changed definition is not listed to the
    model while held (its description may be the poison), calls are refused until
    `approve`; the next listing after approval shows it."""
    server = hostile("rugpull")
    guard = Guard("hostile", changed="hold")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        second = await session.list_tools()
        with pytest.raises(MCPError) as held:
            await session.call_tool("echo", {"message": "x"})
        assert guard.awaiting_approval() == {"echo": "changed"}
        assert guard.approve("echo", approver="alice@example.com") is True
        third = await session.list_tools()
        after = await session.call_tool("echo", {"message": "y", "notes": "n"})
    assert [t.name for t in second.tools] == ["add"]
    assert [t.name for t in third.tools] == ["echo", "add"]
    assert "notes" in third.tools[0].input_schema["properties"]
    held_event = next(e for e in guard.events if e.kind == "tool_changed")
    assert held_event.decision == "held" and held_event.details["awaiting_approval"] is True
    assert held.value.error.data["reason"] == "tool_held"
    assert after.is_error is False
    assert server.calls() == [("echo", {"message": "y", "notes": "n"})]


async def test_invalid_structured_output_is_withheld_as_an_error_result(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when; spec 2025-11-25 server/tools "Output Schema" (servers MUST conform,
    clients SHOULD validate). weather's outputSchema wants a number temperature; the server
    sends a string."""
    server = hostile("output")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        result = await session.call_tool("weather", {"city": "Oslo"})
    assert result.is_error is True
    assert result.structured_content is None
    text = result.content[0].text  # type: ignore[union-attr]
    assert "withheld" in text and "$.structuredContent.temperature" in text
    assert '"hot"' not in text and "hot" not in text  # never echoes the value
    invalid = [e for e in guard.events if e.kind == "output_invalid"]
    assert [(e.tool, e.reason, e.decision, e.json_path) for e in invalid] == [
        ("weather", "invalid_structured_content", "withheld", "$.structuredContent.temperature")
    ]


async def test_invalid_output_flag_policy_passes_the_result_to_the_sdk(
    hostile: Callable[[str], Hostile],
) -> None:
    """conduit-defined policy invalid_output="flag": an event, and the SDK receives the
    server's result unchanged without raising (the guard hid weather's outputSchema from the
    SDK's listing, so mcp 2.3.0 does not re-check it; test_newcomer_trial.py has the rest)."""
    server = hostile("output")
    guard = Guard("hostile", invalid_output="flag")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        result = await session.call_tool("weather", {"city": "Oslo"})
    assert result.structured_content == {"temperature": "hot", "conditions": "sunny"}
    assert [e.decision for e in guard.events if e.kind == "output_invalid"] == ["flagged"]


async def test_a_result_that_is_not_a_tool_result_becomes_an_error_response(
    hostile: Callable[[str], Hostile],
) -> None:
    """Spec 2025-11-25 schema `CallToolResult` (content: array); conduit-defined code -32603."""
    server = hostile("badresult")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        with pytest.raises(MCPError) as caught:
            await session.call_tool("echo", {"message": "x"})
    assert caught.value.error.code == INVALID_RESULT_CODE
    assert caught.value.error.data["reason"] == "invalid_tool_result"
    assert caught.value.error.data["path"] == "$.content"


async def test_a_huge_result_passes_through(hostile: Callable[[str], Hostile]) -> None:
    """A 4 MB text block and 50,000 valid structured items reach the SDK as sent."""
    server = hostile("huge")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        with anyio.fail_after(30):
            result = await session.call_tool("big", {})
    assert result.is_error is False
    assert len(result.content[0].text) == 4_000_000  # type: ignore[union-attr]
    assert result.structured_content == {"items": list(range(50_000))}
    # match's outputSchema has a pattern: the SDK's listing leaves it out (sdk_output_schema).
    assert [(e.kind, e.tool) for e in guard.events if e.kind not in ("tool_new",)] == [
        ("output_schema_hidden", "match")
    ]


async def test_negotiated_version_comes_from_initialize_not_the_newest(
    hostile: Callable[[str], Hostile],
) -> None:
    """Spec basic/lifecycle "Version Negotiation": the hostile server answers 2025-11-25."""
    server = hostile("mixed")
    guard = Guard("hostile")
    async with stdio_client(server.stdio()) as (read, write):
        read, write = guard.wrap_streams(read, write)
        async with ClientSession(read, write) as session:
            result = await session.initialize()
            assert read._connection.engine.version == result.protocol_version == "2025-11-25"


def test_hostile_log_records_what_the_server_received(hostile: Callable[[str], Hostile]) -> None:
    """The test double's log is plain JSON lines (sanity check of the oracle)."""
    server = hostile("mixed")
    server.log.write_text(json.dumps({"method": "tools/call", "params": {"name": "a"}}) + "\n")
    assert server.calls() == [("a", None)]


async def test_catastrophic_pattern_answers_within_the_bound_when_validation_sleeps(
    hostile: Callable[[str], Hostile], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time bound itself: a validator that never returns (and lets other threads run) is
    abandoned after output_timeout; the result is withheld with its own reason."""
    import threading

    from conduit_mcp.guard import _checks

    release = threading.Event()

    def stuck(*args: Any, **kwargs: Any) -> Any:
        release.wait()  # never returns on its own: only the bound can end the wait

    monkeypatch.setattr(_checks, "validate_output", stuck)
    server = hostile("catastrophic")
    guard = Guard("hostile", output_timeout=0.5)
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        with anyio.fail_after(60):  # only stops a hang: the guard's own 0.5 s bound answers
            result = await session.call_tool("match", {})
    release.set()  # let the abandoned worker thread finish
    assert result.is_error is True
    assert [(e.tool, e.reason) for e in guard.events if e.kind == "output_invalid"] == [
        ("match", "output_validation_timeout")
    ]


_LINEAR_ENGINE = importlib.util.find_spec("jsonschema_rs") is not None


@pytest.mark.skipif(
    not _LINEAR_ENGINE,
    reason="needs validate_structured on jsonschema-rs (issue 13): Python's re holds the GIL "
    "while it backtracks, so no thread-based bound can interrupt it",
)
async def test_catastrophic_pattern_is_withheld_instead_of_hanging(
    hostile: Callable[[str], Hostile],
) -> None:
    """Issue 9 done-when: outputSchema pattern ^(a+)+$, value of 34 "a"s and "!" (which fails the
    pattern: the result is withheld). Without the guard the SDK's own check hangs for minutes."""
    server = hostile("catastrophic")
    guard = Guard("hostile")
    async with guarded_session(guard, server) as session:
        await session.list_tools()
        # Only stops a hang: jsonschema-rs answers in microseconds, the SDK's own check took
        # minutes; the events below say which engine decided (a bound of 2 s, the issue's
        # done-when, was a verdict on the machine's load).
        with anyio.fail_after(60):
            result = await session.call_tool("match", {})
    assert result.is_error is True
    assert [e.kind for e in guard.events if e.tool == "match" and e.kind != "tool_new"] == [
        "output_schema_hidden",  # the listing: the SDK never sees the pattern
        "output_invalid",  # the call: withheld by the guard
    ]
