"""Tool definitions outside tools/list go through the same intake as a listing.

Spec 2025-11-25 client/sampling "Tools in Sampling": a server's `sampling/createMessage` may
carry `tools` for the client's model; 2026-07-28 basic/patterns/mrtr: an `input_required`
result's `inputRequests` may hold such a sampling request. Both reach the client's sampling
callback (and its model): a tool intake rejects is removed, with the listing's event kind
(`tool_rejected`) and a path into the message.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

from conduit_mcp.guard import Guard
from conduit_mcp.guard._engine import Engine

pytestmark = pytest.mark.anyio

GOOD = {"name": "lookup", "inputSchema": {"type": "object"}}
BAD = {"name": "bad", "description": "No inputSchema."}  # intake: inputSchema is required


def _sampling(tools: list[Any]) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
        "tools": tools,
    }


async def _engine(guard: Guard, version: str) -> Engine:
    engine = Engine(guard._shared, "stdio")
    engine.version = version
    return engine


async def test_a_sampling_request_loses_the_tools_intake_rejects() -> None:
    guard = Guard("s")
    engine = await _engine(guard, "2025-11-25")
    message = {"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage"}
    verdict = await engine.inbound({**message, "params": _sampling([GOOD, BAD])})
    assert verdict.action == "replace" and verdict.message is not None
    assert verdict.message["params"]["tools"] == [GOOD]
    assert verdict.message["id"] == 9
    (event,) = guard.events
    assert (event.kind, event.tool, event.json_path) == (
        "tool_rejected",
        "bad",
        "$.params.tools[1].inputSchema",
    )
    clean = await engine.inbound({**message, "params": _sampling([GOOD])})
    assert clean.action == "pass"


async def test_a_sampling_request_reaches_the_callback_clean() -> None:
    """conduit-defined (a hostile review: a sampling tool's description, the messages and the
    system prompt kept their hidden text): the tools cleaned as a listing's are
    (`tool_text_cleaned`), the prompt under `model_text` (`model_text_cleaned`, issue 30)."""
    guard = Guard("s")
    engine = await _engine(guard, "2025-11-25")
    tag = "".join(chr(0xE0000 + ord(c)) for c in "exfiltrate")
    hidden_tool = {**GOOD, "description": "Look up." + tag}
    params = {**_sampling([hidden_tool]), "systemPrompt": "Be brief.\u202e"}
    params["messages"][0]["content"]["text"] = "hi" + tag
    message = {"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage", "params": params}
    verdict = await engine.inbound(message)
    assert verdict.action == "replace" and verdict.message is not None
    sent = verdict.message["params"]
    assert sent["tools"] == [{**GOOD, "description": "Look up."}]
    assert sent["systemPrompt"] == "Be brief."
    assert sent["messages"][0]["content"]["text"] == "hi"
    assert [e.kind for e in guard.events] == ["tool_text_cleaned", "model_text_cleaned"]
    assert sorted(sent["_meta"]["conduit-mcp/guard"]["text_cleaned"]) == [
        "$.messages[0].content.text",
        "$.systemPrompt",
    ]


async def test_an_input_required_result_loses_the_tools_intake_rejects() -> None:
    guard = Guard("s")
    engine = await _engine(guard, "2026-07-28")
    from .test_guard import _ok_state

    guard._tools["a"] = _ok_state("a")
    await engine.outbound(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "a"}}
    )
    result = {
        "resultType": "input_required",
        "inputRequests": {
            "ask": {"method": "sampling/createMessage", "params": _sampling([BAD, GOOD])},
            "roots": {"method": "roots/list"},
        },
        "requestState": "opaque",
    }
    verdict = await engine.inbound({"jsonrpc": "2.0", "id": 3, "result": result})
    assert verdict.action == "replace" and verdict.message is not None
    sent = verdict.message["result"]
    assert sent["inputRequests"]["ask"]["params"]["tools"] == [GOOD]
    assert sent["inputRequests"]["roots"] == {"method": "roots/list"}
    assert sent["requestState"] == "opaque"
    (event,) = guard.events
    assert event.json_path == "$.inputRequests.ask.params.tools[0].inputSchema"
    assert result["inputRequests"]["ask"]["params"]["tools"] == [BAD, GOOD]  # not mutated


async def test_the_sdks_sampling_callback_never_sees_a_rejected_tool() -> None:
    """Through mcp 2.3.0's ClientSession: a server asks for sampling with two tools during a
    call; the callback receives only the one intake accepts."""
    seen: list[list[str]] = []

    async def sampling_callback(context: Any, params: Any) -> Any:
        import mcp_types

        seen.append([t.name for t in params.tools or []])
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="ok"),
            model="m",
        )

    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](16)
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](16)

    def send(raw: dict[str, Any]) -> Any:
        return to_client_send.send(SessionMessage(jsonrpc_message_adapter.validate_python(raw)))

    async def serve() -> None:
        async with to_server_recv, to_client_send:
            async for item in to_server_recv:
                message = item.message
                if not isinstance(message, JSONRPCRequest):
                    continue
                if message.method == "initialize":
                    init = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "s", "version": "0"},
                    }
                    await send({"jsonrpc": "2.0", "id": message.id, "result": init})
                elif message.method == "tools/list":
                    listing = {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}
                    await send({"jsonrpc": "2.0", "id": message.id, "result": listing})
                elif message.method == "tools/call":
                    request = {"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage"}
                    await send({**request, "params": _sampling([BAD, GOOD])})
                    reply = await to_server_recv.receive()
                    assert isinstance(reply.message, JSONRPCResponse)
                    done = {"content": [{"type": "text", "text": "asked"}]}
                    await send({"jsonrpc": "2.0", "id": message.id, "result": done})

    guard = Guard("s")
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        read, write = guard.wrap_streams(to_client_recv, to_server_send)
        async with ClientSession(read, write, sampling_callback=sampling_callback) as session:
            with anyio.fail_after(20):
                await session.initialize()
                await session.list_tools()
                result = await session.call_tool("ask", {})
        to_server_send.close()
        tg.cancel_scope.cancel()
    assert result.content[0].text == "asked"  # type: ignore[union-attr]
    assert seen == [["lookup"]]
    assert [(e.kind, e.tool) for e in guard.events if e.kind == "tool_rejected"] == [
        ("tool_rejected", "bad")
    ]
