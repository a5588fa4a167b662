"""The stdio relay's two threads: a decision that must wait (finished on the event loop) keeps
each direction's order, and every decision is serialised with the pin store's change feed.

Spec: MCP 2025-11-25 basic/transports "stdio" (messages in order on each stream); JSON-RPC
2.0 (notifications and responses are delivered as sent). The guard's ordering and feed
promises are conduit-defined (docs/proxy.md, docs/guard.md "Live approvals").
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anyio

from .conftest import proxy_argv

#: Writes every line it reads to LOG ("in", message) and every line it sends ("out", ...);
#: around each answer to tools/list and tools/call, a notification before and one after,
#: all in one write (pipelined).
SERVER = """
import json, sys
log = open(sys.argv[1], "a")
echo = {"name": "echo", "inputSchema": {"type": "object"}}
def note(tag):
    return {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": tag}}
for raw in sys.stdin:
    m = json.loads(raw)
    log.write(json.dumps(["in", m]) + "\\n"); log.flush()
    if "id" not in m or "method" not in m:
        continue
    rid, method = m["id"], m["method"]
    if method == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "s", "version": "1"}}
        out = [{"jsonrpc": "2.0", "id": rid, "result": r}]
    elif method == "tools/list":
        out = [note(f"before list {rid}"), {"jsonrpc": "2.0", "id": rid,
               "result": {"tools": [echo]}}, note(f"after list {rid}")]
    else:
        text = {"content": [{"type": "text", "text": "hi"}]}
        out = [note(f"before {method} {rid}"), {"jsonrpc": "2.0", "id": rid, "result": text},
               note(f"after {method} {rid}")]
    for x in out:
        log.write(json.dumps(["out", x]) + "\\n")
    log.flush()
    sys.stdout.write("".join(json.dumps(x) + "\\n" for x in out)); sys.stdout.flush()
"""


def _key(message: dict[str, Any]) -> Any:
    if "method" in message:
        return (message["method"], json.dumps(message.get("params"), sort_keys=True))
    return ("response", message["id"])


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_a_decision_that_waits_keeps_both_directions_in_order(tmp_path: Path) -> None:
    """The client pipelines a call of a tool it never listed (the proxy lists first: the call
    waits on the event loop) and notifications after it; with a pin store file every page's
    pins are checked in a worker thread (each listing's answer waits too). The server
    receives the client's messages in the client's order, the proxy's own listing before the
    call; the client receives the server's messages in the server's order, without the
    answer to the proxy's own listing."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    log = tmp_path / "log"
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
    hello["clientInfo"] = {"name": "t", "version": "1"}
    call = {"name": "echo", "arguments": {}}
    sent = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"n": 2}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"n": 3}},
    ]
    options = ["--pins", str(tmp_path / "pins.db"), "--new", "pin"]
    done = subprocess.run(
        [*proxy_argv("order", *options), "--", sys.executable, str(script), str(log)],
        input=b"".join(map(_line, sent)),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    received = [m for way, m in entries if way == "in"]
    own = [m for m in received if str(m.get("id")).startswith("conduit-mcp-list-")]
    assert len(own) == 1 and own[0]["method"] == "tools/list"
    expected_in = [*sent[:2], own[0], *sent[2:]]
    assert [_key(m) for m in received] == [_key(m) for m in expected_in]
    server_said = [m for way, m in entries if way == "out" and m.get("id") != own[0]["id"]]
    client_got = [json.loads(line) for line in done.stdout.splitlines()]
    assert [_key(m) for m in client_got] == [_key(m) for m in server_said]
    answers = {m["id"]: m for m in client_got if "id" in m}
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert [t["name"] for t in answers[3]["result"]["tools"]] == ["echo"]


def _decide(decided: tuple[str, Any] | Awaitable[tuple[str, Any]]) -> tuple[str, Any]:
    assert isinstance(decided, tuple), "a listed tool's call is decided on the spot"
    return decided


def test_a_revocation_from_the_feed_and_a_call_from_a_reader_thread_never_interleave(
    tmp_path: Path,
) -> None:
    """The relay's client thread decides calls of a listed tool while the pin store's change
    feed (its own thread) revokes the tool's pin. The feed waits while a decision holds the
    link's lock (a decision sees the tool wholly before or wholly after the change), and every
    call decided after the revocation was applied is refused (`tool_blocked`), never sent."""
    from conduit_mcp.guard import _checks
    from conduit_mcp.proxy import GuardSeam, GuardSettings

    seam = GuardSeam(GuardSettings(server_id="race", pins=str(tmp_path / "pins.db")))
    seam.guard.close()  # the watcher: the feed's deliveries are made by hand below

    async def write(message: dict[str, Any]) -> None:
        raise AssertionError(message)

    link = seam.connect(write)
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}}

    async def setup() -> None:
        await link.from_client({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        result = {
            **hello,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        }
        await link.from_server({"jsonrpc": "2.0", "id": 0, "result": result})
        await link.from_client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        await link.from_server({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}})

    anyio.run(setup)
    assert seam.guard.tool_status("a") == "held"  # new="hold" with a store file
    assert seam.guard.approve("a", approver="alice")
    ids = iter(range(10, 100_000))
    revoke = types.SimpleNamespace(server_id="race", name="a", action="revoke")

    def call() -> tuple[str, Any]:
        rid = next(ids)
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "a"}}
        decided = _decide(link.from_client_now(message))
        if decided[0] == "pass":  # answered, so the outstanding table stays small
            _decide(link.from_server_now({"jsonrpc": "2.0", "id": rid, "result": {"content": []}}))
        return decided

    # 1. A decision holding the lock: the feed waits for it.
    applied = threading.Event()

    def feed() -> None:
        _checks.apply_pin_change(seam.guard, revoke)
        applied.set()

    with link.lock:
        assert call()[0] == "pass"
        feeder = threading.Thread(target=feed)
        feeder.start()
        assert not applied.wait(0.2)  # blocked on the lock the decision holds
        assert seam.guard.tool_status("a") == "ok"
        assert call()[0] == "pass"  # still wholly before the change
    assert applied.wait(10)
    feeder.join()
    refused = call()
    assert refused[0] == "answer"
    assert refused[1]["error"]["data"]["reason"] == "tool_blocked"

    # 2. A race: calls on a reader thread while the feed approves and revokes again.
    assert seam.guard.approve("a", approver="alice")
    stop = threading.Event()
    applied.clear()
    outcomes: list[tuple[bool, str]] = []

    before, after_it = threading.Event(), threading.Event()

    def reader() -> None:
        decided_after = 0
        while not stop.is_set():
            after = applied.is_set()  # read before the decision starts
            outcomes.append((after, call()[0]))
            decided_after += after
            if len(outcomes) >= 50:
                before.set()
            if decided_after >= 50:
                after_it.set()

    thread = threading.Thread(target=reader)
    thread.start()
    assert before.wait(60)
    feed()
    assert after_it.wait(60)
    stop.set()
    thread.join()
    seam.close()
    assert "pass" in {o for a, o in outcomes if not a}
    assert {o for a, o in outcomes if a} == {"answer"}  # none sent once the change was applied
