"""`Engine.outbound_now` / `inbound_now` (a decision taken on any thread, finished on the loop
only when it must wait) decide exactly as `outbound` / `inbound`.

The oracle is the async entry on a twin engine (its own guard, same policy, same messages in
the same order): on every corpus tools/list page, a call of every tool it listed (arguments
`{}`: many schemas refuse it), and every corpus tools/call result answering a call of a listed
tool, the verdict and the events are the same. The sync entry must also take some decisions
without the loop and hand some to it (a test that only ever took one way would prove
nothing).
"""

from __future__ import annotations

from typing import Any

import anyio

from conduit_mcp.guard import Guard
from conduit_mcp.guard._engine import Engine
from conduit_mcp.guard._waits import Later
from tests.corpus import results, tool_lists

VERSION = "2025-11-25"
HELLO = {
    "protocolVersion": VERSION,
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
SERVER = {
    "protocolVersion": VERSION,
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}


class _Twin:
    """One engine of its own guard, fed each message through one of the two entries."""

    def __init__(self, now: bool) -> None:
        self.events: list[Any] = []
        self.guard = Guard("twin", on_event=self.events.append)  # held: its store lives with it
        self.engine = Engine(self.guard._shared, "stdio")
        self.now = now
        self.waited = 0  # decisions the sync entry handed to the loop
        self.inline = 0  # decisions it took on the spot

    async def out(self, message: dict[str, Any]) -> tuple[Any, Any]:
        if not self.now:
            verdict = await self.engine.outbound(message)
        else:
            verdict = await self._finish(self.engine.outbound_now(message))
        return verdict.action, verdict.message

    async def into(self, message: dict[str, Any]) -> tuple[Any, Any]:
        if not self.now:
            verdict = await self.engine.inbound(message)
        else:
            verdict = await self._finish(self.engine.inbound_now(message))
        return verdict.action, verdict.message

    async def _finish(self, decided: Any) -> Any:
        if isinstance(decided, Later):
            self.waited += 1
            return await decided
        self.inline += 1
        return decided

    def took(self) -> list[Any]:
        taken = [(e.kind, e.tool, e.reason, e.decision, e.path, e.details) for e in self.events]
        self.events.clear()
        return taken


async def _exchange(twin: _Twin, messages: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    seen: list[Any] = []
    for way, message in messages:
        seen.append(await (twin.out(message) if way == "out" else twin.into(message)))
        seen.append(twin.took())
    return seen


def _script() -> list[list[tuple[str, dict[str, Any]]]]:
    """The exchanges, one per step: initialize; then per corpus page its listing and a call
    of each tool it named; then each corpus result answering a call of a listed tool."""
    steps: list[list[tuple[str, dict[str, Any]]]] = [
        [
            ("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}),
            ("in", {"jsonrpc": "2.0", "id": 0, "result": SERVER}),
        ]
    ]
    rid = 1
    listed: list[str] = []
    for capture in tool_lists():
        page = capture.data
        step = [("out", {"jsonrpc": "2.0", "id": rid, "method": "tools/list"})]
        step.append(("in", {"jsonrpc": "2.0", "id": rid, "result": page}))
        rid += 1
        for raw in page["tools"]:
            name = raw.get("name") if isinstance(raw, dict) else None
            if not isinstance(name, str):
                continue
            params = {"name": name, "arguments": {}}
            step.append(
                ("out", {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
            )
            # answered (or not: a refused call's answer is dropped as unsent, alike)
            step.append(("in", {"jsonrpc": "2.0", "id": rid, "result": {"content": []}}))
            rid += 1
            listed.append(name)
        steps.append(step)
    # The last page's tools are the guard's now (a complete listing replaces the others).
    last = [t["name"] for t in tool_lists()[-1].data["tools"] if isinstance(t, dict)]
    for index, capture in enumerate(results()):
        result = capture.data["result"] if "result" in capture.data else capture.data
        name = last[index % len(last)]
        params = {"name": name, "arguments": {}}
        steps.append(
            [
                ("out", {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}),
                ("in", {"jsonrpc": "2.0", "id": rid, "result": result}),
            ]
        )
        rid += 1
    return steps


def test_the_sync_entry_decides_as_the_async_one_on_the_corpus() -> None:
    steps = _script()
    assert len(steps) > 100

    async def run(now: bool) -> tuple[list[Any], _Twin]:
        twin = _Twin(now)
        seen = [await _exchange(twin, step) for step in steps]
        return seen, twin

    oracle, _ = anyio.run(run, False)
    decided, twin = anyio.run(run, True)
    for expected, got in zip(oracle, decided, strict=True):
        assert got == expected
    assert twin.inline > 1000 and twin.waited > 10, (twin.inline, twin.waited)
    kinds = {event[0] for step in oracle for seen in step[1::2] for event in seen}
    assert "unchecked" not in kinds  # every page was checked (no store failure made it easy)
    assert {"tool_new", "call_refused"} <= kinds


def test_a_decision_that_never_waits_needs_no_event_loop() -> None:
    """Without any loop running (as on the relay's threads): a listed tool's call and its
    plain result are decided on the spot; a listing the pin store must check is a `Later`."""
    twin = _Twin(True)
    engine = twin.engine
    tool = {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}},
    }

    async def setup() -> None:
        await twin.out({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO})
        await twin.into({"jsonrpc": "2.0", "id": 0, "result": SERVER})
        await twin.out({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        await twin.into({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}})

    anyio.run(setup)
    call = {"name": "echo", "arguments": {"m": "hi"}}
    assert (
        engine.outbound_now(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
        ).action
        == "pass"
    )
    text = {"content": [{"type": "text", "text": "hi"}]}
    assert engine.inbound_now({"jsonrpc": "2.0", "id": 2, "result": text}).action == "pass"
    bad = {"name": "echo", "arguments": {"m": 1}}
    refused = engine.outbound_now(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": bad}
    )
    assert refused.action == "answer"  # type: ignore[union-attr]
    assert refused.message["error"]["data"]["reason"] == "invalid_arguments"  # type: ignore[union-attr,index]
    engine.outbound_now({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    other = {"name": "other", "inputSchema": {"type": "object"}}
    later = engine.inbound_now({"jsonrpc": "2.0", "id": 4, "result": {"tools": [tool, other]}})
    assert isinstance(later, Later)  # a new tool: the private store pins it, in a thread

    async def finish() -> Any:
        return await later

    assert anyio.run(finish).action == "pass"
