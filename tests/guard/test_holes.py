"""The security review's holes in the guard (issue 9 follow-up), each through the real
`mcp.ClientSession` (mcp 2.3.0). Every test is bounded with `anyio.fail_after`, so a
regression fails instead of hanging.

Expected values come from the spec, the hostile server's scenario tables
(tests/guard/hostile_server.py) and mcp 2.3.0's source (named per test), never from the
guard's output.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, jsonrpc_message_adapter

from conduit_mcp.guard import INVALID_RESULT_CODE, REFUSED_CALL_CODE, Guard, _checks

from .conftest import Hostile, changed_keys

pytestmark = pytest.mark.anyio

#: Generous but finite: a hostile-server session takes well under a second here.
BOUND = 30


@asynccontextmanager
async def guarded_session(guard: Guard, server: Hostile) -> AsyncIterator[ClientSession]:
    async with stdio_client(server.stdio()) as (read, write):
        read, write = guard.wrap_streams(read, write, transport="stdio")
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


# -- 1. response ids the SDK reads with int(id) ---------------------------------------------


@pytest.mark.parametrize("style", ["lead", "trail", "plus", "ws", "arabic", "zeros"])
async def test_respelled_response_ids_are_still_checked(
    hostile: Callable[..., Hostile], style: str
) -> None:
    """mcp 2.3.0 `mcp/shared/dispatcher.py: coerce_request_id` reads a string id with `int()`,
    so " 5", "+5", "٥" and "0…05" answer request 5. Every response of the hostile server is
    re-spelled so: the guard must still check the rug pull (spec 2025-11-25 server/tools
    "Security Considerations") and withhold weather's invalid structuredContent (spec
    2025-06-18 server/tools "Output Schema": clients SHOULD validate)."""
    server = hostile("idspell", "--id-style", style)
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with guarded_session(guard, server) as session:
            first = await session.list_tools()
            weather = await session.call_tool("weather", {"city": "Oslo"})
            second = await session.list_tools()
            with pytest.raises(MCPError) as refused:
                await session.call_tool("echo", {"message": "after", "notes": "secret"})
    assert [t.name for t in first.tools] == ["echo", "weather"]
    assert weather.is_error is True and weather.structured_content is None
    assert [(e.tool, e.decision) for e in guard.events if e.kind == "output_invalid"] == [
        ("weather", "withheld")
    ]
    assert [t.name for t in second.tools] == ["weather"]
    changed = [e for e in guard.events if e.kind == "tool_changed"]
    assert [(e.tool, e.decision) for e in changed] == [("echo", "blocked")]
    assert changed_keys(changed[0].changes) == {"description", "inputSchema"}
    assert refused.value.error.data["reason"] == "tool_blocked"
    assert server.calls() == [("weather", {"city": "Oslo"})]


# -- 2. a response sent ahead of its request ------------------------------------------------

ECHO = {
    "name": "echo",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}
FORGED = {"content": [{"type": "text", "text": "forged"}]}


@asynccontextmanager
async def racing_session(
    guard: Guard,
) -> AsyncIterator[tuple[ClientSession, Callable[[], None], list[str]]]:
    """A session on memory streams whose server answers initialize and tools/list, echoes
    calls, and can push a forged response for the next request id (the one after the last
    request it saw: the SDK mints ids one by one, mcp 2.3.0 `JSONRPCDispatcher._allocate_id`).
    Yields (session, push_forged (callable from a worker thread), texts the server answered)."""
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](16)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](16)
    last_id: list[int] = [0]
    answered: list[str] = []

    def raw(rid: Any, result: dict[str, Any]) -> SessionMessage:
        message = {"jsonrpc": "2.0", "id": rid, "result": result}
        return SessionMessage(jsonrpc_message_adapter.validate_python(message))

    async def serve() -> None:
        async with to_server_recv, to_client_send:
            async for item in to_server_recv:
                message = item.message
                if not isinstance(message, JSONRPCRequest):
                    continue
                last_id[0] = int(message.id)
                params = message.params or {}
                if message.method == "initialize":
                    result: dict[str, Any] = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "racing", "version": "0"},
                    }
                elif message.method == "tools/list":
                    result = {"tools": [ECHO]}
                else:
                    text = str(params.get("arguments", {}).get("message"))
                    answered.append(text)
                    result = {"content": [{"type": "text", "text": text}]}
                await to_client_send.send(raw(message.id, result))

    def push_forged() -> None:
        anyio.from_thread.run(to_client_send.send, raw(last_id[0] + 1, FORGED))

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        read, write = guard.wrap_streams(to_client_recv, to_server_send, transport="stdio")  # type: ignore[arg-type]
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session, push_forged, answered
        to_server_send.close()
        to_client_recv.close()
        tg.cancel_scope.cancel()


def _slow_check(guard: Guard, push: Callable[[], None]) -> Callable[..., Any]:
    """A `check_arguments` that, in its worker thread, has the server push a forged response
    for the call being checked, and returns only after the read loop has dealt with it."""
    real = _checks.check_arguments
    seen = threading.Event()

    def check(*args: Any, **kwargs: Any) -> Any:
        push()
        for _ in range(6000):  # the read loop takes the forged response (60 s stops a hang)
            if seen.is_set() or any(e.kind == "response_dropped" for e in guard.events):
                break
            seen.wait(0.01)
        return real(*args, **kwargs)

    return check


@pytest.mark.parametrize("message", [5, "hi"])
async def test_a_response_ahead_of_its_request_never_answers_it(
    monkeypatch: pytest.MonkeyPatch, message: object
) -> None:
    """mcp 2.3.0 `JSONRPCDispatcher.send_raw_request` registers the id before it writes; the
    guard checks arguments in a worker thread meanwhile. A response for that id arriving then
    answers a request the server never saw: it is dropped. A refused call (message 5 is not
    a string) gets only the guard's refusal (-32602, spec 2025-11-25 server/tools "Error
    Handling"); an allowed one gets the server's real answer."""
    guard = Guard("racing")
    with anyio.fail_after(BOUND):
        async with racing_session(guard) as (session, push, answered):
            await session.list_tools()
            monkeypatch.setattr(_checks, "is_linear", lambda tool, key: False)
            monkeypatch.setattr(_checks, "check_arguments", _slow_check(guard, push))
            if message == "hi":
                result = await session.call_tool("echo", {"message": message})
                texts = [getattr(block, "text", None) for block in result.content]
                assert texts == ["hi"]
                assert answered == ["hi"]
            else:
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("echo", {"message": message})
                assert refused.value.error.code == REFUSED_CALL_CODE
                assert refused.value.error.data["reason"] == "invalid_arguments"
                assert answered == []
    dropped = [(e.tool, e.reason, e.decision) for e in guard.events if e.kind == "response_dropped"]
    assert dropped == [("echo", "response_to_unsent_request", "dropped")]


# -- 3. outputSchema before 2025-06-18 ------------------------------------------------------


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_output_schema_is_hidden_from_the_sdk_before_2025_06_18(
    hostile: Callable[..., Hostile], version: str
) -> None:
    """outputSchema and structuredContent begin at spec 2025-06-18 (schema `Tool`); the guard
    checks no output before it, but mcp 2.3.0 `ClientSession._validate_tool_result` checks
    structuredContent against any listed outputSchema on every version and raises on weather's
    {"temperature": "hot"} (a plain type error: a regression fails, never hangs). So the SDK
    must list weather without outputSchema, and the call returns the server's result."""
    server = hostile("oldoutput", "--version", version)
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with guarded_session(guard, server) as session:
            listed = await session.list_tools()
            result = await session.call_tool("weather", {"city": "Oslo"})
    schemas = {t.name: t.output_schema for t in listed.tools}
    assert schemas["weather"] is None and schemas["match"] is None
    assert result.is_error is not True
    texts = [getattr(block, "text", None) for block in result.content]
    assert texts == ['{"temperature": "hot", "conditions": "sunny"}']
    hidden = [(e.tool, e.reason) for e in guard.events if e.kind == "output_schema_hidden"]
    assert hidden == [
        ("weather", "output_schema_not_in_version"),
        ("match", "output_schema_not_in_version"),
        ("big", "output_schema_not_in_version"),
    ]


# -- 4. heavy schemas leave the event loop ----------------------------------------------------


def _names(count: int) -> list[str]:
    return [f"k{i}" for i in range(count)]


def _tool(schema_key: str, schema: dict[str, Any]) -> Any:
    from conduit_mcp.client import Tool, fingerprint

    raw = {"name": "heavy", "inputSchema": {"type": "object"}, schema_key: schema}
    return Tool("heavy", raw, fingerprint(raw))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "object", "required": _names(1500)}},
        {"type": "array", "items": {"enum": list(range(20_000))}},
        {"type": "object", "properties": {name: {"type": "string"} for name in _names(600)}},
    ],
    ids=["required-1500", "enum-20000", "properties-600"],
)
def test_a_heavy_linear_schema_is_not_checked_inline(schema: dict[str, Any]) -> None:
    """Linear keywords only, but each instance value meets 600 to 20,000 schema parts: the
    review measured 25-60 s on the event loop for required 1,500 x 1,500 items and enum
    20,000 x 10,000 items. Such a schema goes to the bounded worker thread."""
    for key in ("inputSchema", "outputSchema"):
        wrapped = {"type": "object", "properties": {"xs": schema}}
        assert _checks.is_linear(_tool(key, wrapped), key) is False


def test_a_light_schema_is_still_checked_inline() -> None:
    """Weather's outputSchema (hostile_server.WEATHER): 4 schema objects, 2 required names."""
    from . import hostile_server as hs

    raw = hs.WEATHER
    from conduit_mcp.client import Tool, fingerprint

    assert _checks.is_linear(Tool("weather", raw, fingerprint(raw)), "outputSchema") is True


async def test_heavy_output_schema_is_checked_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """structuredContent of 300 empty objects against items requiring 300 names each: invalid
    (spec 2025-06-18 server/tools "Output Schema"; 300 x 300 missing names, of which the
    guard reports its cap), checked in the worker thread and withheld as an isError result."""
    from .scripted import scripted_session, text

    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "object", "required": _names(300)}}
        },
    }
    heavy = {"name": "heavy", "inputSchema": {"type": "object"}, "outputSchema": schema}

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [heavy]}
        return {**text("ok"), "structuredContent": {"xs": [{} for _ in range(300)]}}

    bounded: list[str] = []
    real = _checks.run_bounded

    async def spy(fn: Callable[[], Any], seconds: float) -> Any:
        bounded.append("thread")
        return await real(fn, seconds)

    monkeypatch.setattr(_checks, "run_bounded", spy)
    guard = Guard("scripted")
    with anyio.fail_after(BOUND):
        async with scripted_session(guard, handler) as (session, _):
            await session.list_tools()
            result = await session.call_tool("heavy", {})
    assert bounded == ["thread"]
    assert result.is_error is True and result.structured_content is None
    events = [(e.kind, e.decision) for e in guard.events if e.tool == "heavy"]
    assert ("output_invalid", "withheld") in events


# -- 5. results the SDK's own model refuses ---------------------------------------------------


async def test_a_result_the_sdk_model_refuses_becomes_an_error_response(
    hostile: Callable[..., Hostile],
) -> None:
    """echo answers {}: spec 2025-11-25 schema `CallToolResult` requires `content`, and so
    does mcp 2.3.0's model (its `call_tool` raised pydantic's ValidationError). The SDK gets
    the guard's -32603 error response instead (conduit-defined code)."""
    server = hostile("nocontent")
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with guarded_session(guard, server) as session:
            await session.list_tools()
            with pytest.raises(MCPError) as caught:
                await session.call_tool("echo", {"message": "x"})
            after = await session.call_tool("add", {"a": 2, "b": 3})
    assert caught.value.error.code == INVALID_RESULT_CODE
    assert caught.value.error.data["reason"] == "sdk_rejects_result"
    assert caught.value.error.data["path"] == "$.content"
    assert [(e.tool, e.reason, e.decision) for e in guard.events if e.kind == "result_invalid"] == [
        ("echo", "sdk_rejects_result", "answered_error")
    ]
    assert [getattr(block, "text", None) for block in after.content] == ["5"]


# -- 6. a line of stdout that is not UTF-8 ----------------------------------------------------


async def test_a_non_utf8_line_does_not_end_a_guarded_stdio_session(
    hostile: Callable[..., Hostile],
) -> None:
    """The hostile server writes bytes ff fe (never UTF-8, RFC 3629 section 3) before every
    response. Under mcp 2.3.0's default `encoding_error_handler="strict"` the SDK's stdout
    reader raises and the session ends; `guard.stdio_client` sets "replace", so the line is
    one more non-JSON line and the session goes on."""
    server = hostile("rugpull", "--garbage")
    params = server.stdio()
    guard = Guard("hostile")
    with anyio.fail_after(BOUND):
        async with guard.stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                result = await session.call_tool("add", {"a": 2, "b": 3})
    assert [t.name for t in listed.tools] == ["echo", "add"]
    assert [getattr(block, "text", None) for block in result.content] == ["5"]
    assert params.encoding_error_handler == "strict"  # the caller's object is unchanged
