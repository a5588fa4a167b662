"""Findings of the newcomer trial of the guard, each checked from the user's side
(`ClientSession`, `fastmcp.Client`).

Expected values come from the hostile / scripted servers' tables, the spec rules named, and
the contract written in `Policy` and `Guard.approve`; never from the guard's output.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import fastmcp
import pytest
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conduit_mcp.client import Tool, fingerprint
from conduit_mcp.guard import REFUSED_CALL_CODE, Guard
from conduit_mcp.pins import PinStore

from .conftest import Hostile
from .scripted import scripted_session, text, tool

pytestmark = pytest.mark.anyio

#: hostile_server.py scenario "output": weather's structuredContent, temperature a string
#: where weather's outputSchema wants a number.
BAD_WEATHER = {"temperature": "hot", "conditions": "sunny"}


# -- 1. invalid_output "flag" / "pass" under the official clients ---------------------------


@pytest.mark.parametrize("policy", ["flag", "pass"])
async def test_flag_and_pass_hand_the_result_to_client_session_without_it_raising(
    hostile: Callable[[str], Hostile], policy: str
) -> None:
    """Policy contract: under "flag"/"pass" the SDK gets the server's result unchanged and
    does not re-check it (mcp 2.3.0 `ClientSession.validate_tool_result` raises RuntimeError
    when the listing it cached has an outputSchema): the listing hides outputSchema."""
    server = hostile("output")
    guard = Guard("hostile", invalid_output=policy)
    async with stdio_client(server.stdio()) as (read, write):
        async with ClientSession(*guard.wrap_streams(read, write)) as session:
            await session.initialize()
            listed = await session.list_tools()
            result = await session.call_tool("weather", {"city": "Oslo"})
    weather = next(t for t in listed.tools if t.name == "weather")
    assert weather.output_schema is None
    assert result.is_error is False
    assert result.structured_content == BAD_WEATHER
    # The "output" listing is echo, add, weather, match, big; the last three have one.
    hidden = [
        (e.tool, e.reason, e.json_path) for e in guard.events if e.kind == "output_schema_hidden"
    ]
    assert hidden == [
        ("weather", "sdk_output_recheck", "$.tools[2].outputSchema"),
        ("match", "sdk_output_recheck", "$.tools[3].outputSchema"),
        ("big", "sdk_output_recheck", "$.tools[4].outputSchema"),
    ]
    flagged = [e.decision for e in guard.events if e.kind == "output_invalid"]
    assert flagged == (["flagged"] if policy == "flag" else [])


async def test_flag_under_fastmcp_client_returns_the_result(
    hostile: Callable[[str], Hostile],
) -> None:
    """fastmcp 4.1.6 `Client.call_tool` checks structured content against the listed
    outputSchema too; under "flag" it receives none and returns the server's data."""
    server = hostile("output")
    guard = Guard("hostile", invalid_output="flag")
    params = server.stdio()
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    async with fastmcp.Client(transport) as client:
        await client.list_tools()
        result = await client.call_tool("weather", {"city": "Oslo"})
    assert result.is_error is False
    assert result.structured_content == BAD_WEATHER
    assert [e.decision for e in guard.events if e.kind == "output_invalid"] == ["flagged"]


async def test_flag_with_keep_leaves_the_sdk_its_own_check(
    hostile: Callable[[str], Hostile],
) -> None:
    """Documented: sdk_output_schema="keep" shows the SDK the listing as sent, so mcp 2.3.0
    raises on the invalid result the guard flagged and let through."""
    server = hostile("output")
    guard = Guard("hostile", invalid_output="flag", sdk_output_schema="keep")
    async with stdio_client(server.stdio()) as (read, write):
        async with ClientSession(*guard.wrap_streams(read, write)) as session:
            await session.initialize()
            await session.list_tools()
            with pytest.raises(RuntimeError, match="Invalid structured content"):
                await session.call_tool("weather", {"city": "Oslo"})
    assert [e.kind for e in guard.events if e.kind == "output_schema_hidden"] == []


async def test_withheld_result_under_fastmcp_raises_tool_error(
    hostile: Callable[[str], Hostile],
) -> None:
    """docs/guard.md, FastMCP section: a withheld result is an `isError` result, which fastmcp 4.1.6
    raises as `fastmcp.exceptions.ToolError` (raise_on_error defaults to True); a refused call
    is the SDK's `MCPError`, not a ToolError."""
    server = hostile("output")
    guard = Guard("hostile")
    params = server.stdio()
    transport = guard.fastmcp_transport(StdioTransport(command=params.command, args=params.args))
    async with fastmcp.Client(transport) as client:
        await client.list_tools()
        with pytest.raises(ToolError, match="withheld"):
            await client.call_tool("weather", {"city": "Oslo"})
        returned = await client.call_tool("weather", {"city": "Oslo"}, raise_on_error=False)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("never_listed", {})
    assert returned.is_error is True and returned.structured_content is None
    assert not isinstance(refused.value, ToolError)
    assert refused.value.error.code == REFUSED_CALL_CODE


# -- 2. pins in a caller's (shared) store ---------------------------------------------------


def listing(*tools: dict[str, Any]) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": list(tools)} if method == "tools/list" else text("ok")

    return handler


async def test_a_caller_store_is_not_written_by_default_new_tools_are_held() -> None:
    """Contract: with `pins=` the default `new` policy is "hold": the tool is left out of the
    listing the SDK (the model) sees, calls are refused unsent (-32602 tool_held) and no pin
    is written: only the store's "check" row, which names the definition awaiting approval."""
    with PinStore(":memory:") as store:
        guard = Guard("s", pins=store)
        assert guard.policy.new == "hold"
        async with scripted_session(guard, listing(tool("a"))) as (session, script):
            listed = await session.list_tools()
            with pytest.raises(MCPError) as held:
                await session.call_tool("a", {})
        assert store.pins("s") == ()
        (check,) = store.audit_log("s")  # the "new" check only
        assert (check.action, check.outcome, check.name) == ("check", "new", "a")
        assert check.fingerprint == fingerprint(tool("a"))
        assert guard.awaiting_approval() == {"a": "new"}
    assert listed.tools == []
    assert held.value.error.data["reason"] == "tool_held"
    assert [(e.kind, e.decision) for e in guard.events] == [
        ("tool_new", "held"),
        ("call_refused", "refused"),
    ]
    assert script.calls() == []
    # One level of parentheses (a newcomer read "(held: ... (Guard.approve, or ...))").
    assert guard.events[0].message == (
        "a tool never pinned for this server (held: not listed to the model and not callable "
        "until approved with Guard.approve or conduit-mcp pins approve on its store)"
    )


async def test_approve_names_the_approver_and_then_calls_pass() -> None:
    with PinStore(":memory:") as store:
        guard = Guard("s", pins=store)
        async with scripted_session(guard, listing(tool("a"))) as (session, script):
            await session.list_tools()
            assert guard.approve("a", approver="alice@example.com") is True
            await session.call_tool("a", {})
        (pin,) = store.pins("s")
        assert (pin.name, pin.approver) == ("a", "alice@example.com")
    assert script.calls() == [("a", {})]
    assert guard.tool_status("a") == "ok"


async def test_approve_writes_nothing_for_a_tool_not_held_or_blocked() -> None:
    """Contract: `approve` of a name never listed, or of a tool already allowed, returns
    False and writes no pin and no audit row."""
    with PinStore(":memory:") as store:
        guard = Guard("s", pins=store, new="allow")
        async with scripted_session(guard, listing(tool("a"))) as (session, _):
            await session.list_tools()
        before = store.audit_log("s")
        assert guard.approve("never_listed", approver="alice") is False
        assert guard.approve("a", approver="alice") is False  # allowed, not held
        assert store.pins("s") == ()
        assert store.audit_log("s") == before


def test_approve_requires_an_approver() -> None:
    guard = Guard("s")
    with pytest.raises(TypeError):
        guard.approve("a")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        guard.approve("a", approver=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        guard.approve("a", approver=" ")


async def test_a_revoked_tool_is_not_re_pinned_by_trust_on_first_use() -> None:
    """A team approved `a`, then revoked it (`conduit-mcp pins revoke` = `PinStore.revoke`).
    Under new="pin" the guard must not put the pin back: blocked, reason pin_revoked."""
    with PinStore(":memory:") as store:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        assert store.revoke("s", "a", approver="bob") is True
        guard = Guard("s", pins=store, new="pin")
        async with scripted_session(guard, listing(tool("a"), tool("b"))) as (session, script):
            first = await session.list_tools()
            second = await session.list_tools()
            with pytest.raises(MCPError) as refused:
                await session.call_tool("a", {})
        pinned = {(p.name, p.approver) for p in store.pins("s")}
    assert [t.name for t in first.tools] == ["b"]
    assert [t.name for t in second.tools] == ["b"]
    assert pinned == {("b", "conduit-mcp guard")}  # b is genuinely new: TOFU as asked
    assert refused.value.error.data["reason"] == "tool_blocked"
    revoked = [(e.tool, e.reason, e.decision) for e in guard.events if e.kind == "tool_new"]
    assert revoked[0] == ("a", "pin_revoked", "blocked")
    assert script.calls() == []


async def test_a_revoked_tool_can_be_approved_again_by_a_person() -> None:
    with PinStore(":memory:") as store:
        store.approve("s", Tool.from_wire("s", tool("a")), approver="alice")
        store.revoke("s", "a", approver="bob")
        guard = Guard("s", pins=store, new="pin")
        async with scripted_session(guard, listing(tool("a"))) as (session, script):
            await session.list_tools()
            assert guard.approve("a", approver="carol") is True
            listed = await session.list_tools()
            await session.call_tool("a", {})
        assert [(p.name, p.approver) for p in store.pins("s")] == [("a", "carol")]
    assert [t.name for t in listed.tools] == ["a"]
    assert script.calls() == [("a", {})]


# -- 3. logging ----------------------------------------------------------------------------


def test_the_guard_logger_has_a_null_handler() -> None:
    """Library practice (Python logging HOWTO, "Configuring Logging for a Library")."""
    handlers = logging.getLogger("conduit_mcp.guard").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


def test_guard_events_print_nothing_when_the_app_configured_no_logging() -> None:
    """Without the NullHandler, logging's last resort writes WARNING records to stderr."""
    script = textwrap.dedent("""
        import anyio
        from tests.guard.scripted import scripted_session, text, tool
        from conduit_mcp.guard import Guard

        async def main():
            guard = Guard("s")
            handler = lambda m, p: {"tools": [tool("a")]} if m == "tools/list" else text("ok")
            async with scripted_session(guard, handler) as (session, _):
                await session.list_tools()
                try:
                    await session.call_tool("never_listed", {})
                except Exception:
                    pass
            assert [e.kind for e in guard.events] == ["tool_new", "call_refused"]

        anyio.run(main)
        """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


# -- 5. one path style per refusal ----------------------------------------------------------


async def test_refusal_message_and_data_path_name_the_same_place() -> None:
    """The message and `data.path` both count from the request's params: `$.arguments.a`."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    guard = Guard("s")
    async with scripted_session(guard, listing(tool("t", inputSchema=schema))) as (session, _):
        await session.list_tools()
        with pytest.raises(MCPError) as wrong:
            await session.call_tool("t", {"a": "x"})
        with pytest.raises(MCPError) as missing:
            await session.call_tool("t", None)
    assert wrong.value.error.data["path"] == "$.arguments.a"
    assert "at $.arguments.a:" in wrong.value.error.message
    assert missing.value.error.data["path"] == "$.arguments"
    assert "at $.arguments:" in missing.value.error.message
