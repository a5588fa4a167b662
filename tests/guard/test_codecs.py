"""The stream seam's codecs: the installed SDK's messages in, anything else refused (fail
closed). mcp 2.x here; mcp 1.x's codec runs in its own venvs (tests/integrations/test_mcp1.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCNotification, JSONRPCRequest

from conduit_mcp.guard import Guard
from conduit_mcp.guard._engine import Engine
from conduit_mcp.guard._streams import DROP, Connection, installed_codec

pytestmark = pytest.mark.anyio

#: where the installed SDK defines its request model (mcp_types.jsonrpc in mcp 2.3.0).
REQUEST_TYPE = f"{JSONRPCRequest.__module__}.{JSONRPCRequest.__qualname__}"


def test_mcp2_installed_picks_the_mcp2_codec_and_the_mcp1_codec_reads_nothing() -> None:
    """mcp 2.x's `mcp.types.JSONRPCMessage` is a plain union, not mcp 1.x's RootModel: the
    1.x codec, were it used here, recognises no item (all refused) and builds none."""
    from conduit_mcp.guard import _codec1, _codec2

    assert installed_codec() is _codec2
    assert _codec1.MCP1 is False
    item = SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))
    assert _codec2.to_plain(item) == {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": None}
    assert _codec1.to_plain(item) is None
    with pytest.raises(TypeError):
        _codec1.to_item({"jsonrpc": "2.0", "id": 1, "result": {}})


def unrecognized(guard: Guard) -> list[tuple[Any, ...]]:
    return [
        (e.kind, e.reason, e.decision, e.details["direction"], e.details["type"])
        for e in guard.events
    ]


async def test_an_incoming_item_that_is_no_sdk_message_is_dropped_with_its_type() -> None:
    """A raw dict and a bare request model (no SessionMessage) never reach the SDK; a transport
    error and a notification pass as the same objects."""
    guard = Guard("s")
    connection = Connection(Engine(guard._shared, "stdio"))
    bare = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={"name": "x"})
    error = ValueError("bad line")
    note = SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/message"))
    assert await connection.inbound({"jsonrpc": "2.0", "id": 1, "result": {}}) is DROP
    assert await connection.inbound(bare) is DROP
    assert await connection.inbound(error) is error
    assert await connection.inbound(note) is note
    assert unrecognized(guard) == [
        ("unchecked", "unrecognized_message", "dropped", "incoming", "builtins.dict"),
        (
            "unchecked",
            "unrecognized_message",
            "dropped",
            "incoming",
            REQUEST_TYPE,
        ),
    ]


async def test_an_outgoing_item_that_is_no_sdk_message_is_never_written() -> None:
    """A tools/call the guard cannot read cannot be gated: it is not written (before, anything
    but a `SessionMessage` went through unread)."""
    guard = Guard("s")
    to_server_send, to_server_recv = anyio.create_memory_object_stream[Any](4)
    to_client_send, to_client_recv = anyio.create_memory_object_stream[Any](4)
    _, write = guard.wrap_streams(to_client_recv, to_server_send)
    bare = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={"name": "x"})
    ping = SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=2, method="ping"))
    async with to_server_send, to_server_recv, to_client_send, to_client_recv:
        await write.send(bare)
        await write.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call"})
        await write.send(ping)
        assert to_server_recv.receive_nowait() is ping
        with pytest.raises(anyio.WouldBlock):
            to_server_recv.receive_nowait()
    assert [event[3:] for event in unrecognized(guard)] == [
        ("outgoing", REQUEST_TYPE),
        ("outgoing", "builtins.dict"),
    ]


async def test_an_answer_the_sdk_models_refuse_is_dropped_not_raised() -> None:
    """A message of the guard's own that the SDK's models cannot take (here an id that is
    neither string nor integer) never raises into the SDK's receive loop."""
    guard = Guard("s")
    connection = Connection(Engine(guard._shared, "stdio"))
    assert connection.encode({"jsonrpc": "2.0", "id": [1], "result": {}}) is DROP
    [event] = guard.events
    assert (event.kind, event.reason, event.decision) == (
        "unchecked",
        "guard_internal_error",
        "dropped",
    )
    assert event.details["sdk"] == "mcp 2.x"
