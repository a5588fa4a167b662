"""The live tests' stdio driver against tiny scripted servers (Python children; no node needed).

These check the driver's own guarantees: a hung or dead server fails fast instead of hanging,
server->client requests get the minimal answers, and non-JSON-RPC stdout is recorded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from .stdio_driver import (
    JsonRpcError,
    ResponseTimeout,
    ServerExited,
    StdioDriver,
)

# A scripted server: for each request line it runs the behaviour named by argv[1].
FAKE_SERVER = r"""
import json, sys, time
mode = sys.argv[1]
out = sys.stdout
def send(obj):
    out.write(json.dumps(obj) + "\n"); out.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        if mode == "ask" and msg.get("id") in ("r1", "r2"):
            send({"jsonrpc": "2.0", "method": "log", "params": {"answer": msg}})
            if msg["id"] == "r2":
                send({"jsonrpc": "2.0", "id": 1, "result": {"done": True}})
        continue
    if mode == "hang":
        continue
    if mode == "exit":
        sys.exit(3)
    if mode == "garbage":
        out.write("this is not json\n"); out.flush()
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    elif mode == "error":
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": "bad"}})
    elif mode == "ask":
        send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        send({"jsonrpc": "2.0", "id": "r2", "method": "sampling/createMessage", "params": {}})
    elif mode == "pages":
        cursor = (msg.get("params") or {}).get("cursor")
        page = {"tools": [{"name": f"t{cursor or 0}", "inputSchema": {"type": "object"}}]}
        if cursor is None:
            page["nextCursor"] = "1"
        send({"jsonrpc": "2.0", "id": msg["id"], "result": page})
"""


def _driver(mode: str, tmp_path: Path, timeout: float = 5.0) -> StdioDriver:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
    return StdioDriver(
        [sys.executable, "-c", FAKE_SERVER, mode], env=env, cwd=str(tmp_path), timeout=timeout
    )


def test_a_hung_server_raises_response_timeout_instead_of_hanging(tmp_path: Path) -> None:
    """conduit-defined: every wait has a timeout, so a server that never answers fails fast.
    The message names the wait used: the request's 0.5 s, not the driver's default of 5 s."""
    with _driver("hang", tmp_path) as driver:
        with pytest.raises(ResponseTimeout, match=r"within 0\.5 s"):
            driver.request("tools/list", timeout=0.5)


def test_a_server_that_exits_raises_server_exited(tmp_path: Path) -> None:
    """conduit-defined: a server that dies while a response is awaited fails the request at once
    (ServerExited, not the ResponseTimeout that waiting out the 30 s would raise)."""
    with _driver("exit", tmp_path, timeout=30.0) as driver:
        with pytest.raises(ServerExited):
            driver.request("tools/list")


def test_close_kills_the_child_and_is_idempotent(tmp_path: Path) -> None:
    """conduit-defined: teardown always ends the child, even one that ignores its stdin."""
    driver = _driver("hang", tmp_path)
    assert driver.returncode is None
    driver.close()
    assert driver.returncode is not None
    driver.close()


def test_stdout_lines_that_are_not_json_rpc_are_recorded(tmp_path: Path) -> None:
    """Spec-mandated (2025-11-25 basic/transports "stdio": the server MUST NOT write anything to
    its stdout that is not a valid MCP message): the driver records such lines for the tests."""
    with _driver("garbage", tmp_path) as driver:
        assert driver.result("ping") == {}
        assert driver.invalid_lines == ["this is not json"]


def test_a_jsonrpc_error_response_raises_json_rpc_error_with_the_raw_error(tmp_path: Path) -> None:
    """conduit-defined: `result()` turns an error response into `JsonRpcError`, keeping it raw."""
    with _driver("error", tmp_path) as driver:
        with pytest.raises(JsonRpcError) as info:
            driver.result("tools/call", {"name": "x"})
        assert info.value.error == {"code": -32602, "message": "bad"}
        assert driver.request("tools/call")["error"]["code"] == -32602


def test_server_requests_get_empty_roots_or_method_not_found(tmp_path: Path) -> None:
    """Spec-mandated (2025-11-25 client/roots "Listing Roots"; JSON-RPC 2.0 "5.1 Error object"):
    `roots/list` is answered with `{"roots": []}`, any other method with error -32601."""
    with _driver("ask", tmp_path) as driver:
        assert driver.result("tools/call") == {"done": True}
        answers = [n["params"]["answer"] for n in driver.notifications]
    assert answers == [
        {"jsonrpc": "2.0", "id": "r1", "result": {"roots": []}},
        {
            "jsonrpc": "2.0",
            "id": "r2",
            "error": {"code": -32601, "message": "Method not found"},
        },
    ]
    assert [r["method"] for r in driver.server_requests] == ["roots/list", "sampling/createMessage"]


def test_list_tools_pages_follows_next_cursor_until_a_page_has_none(tmp_path: Path) -> None:
    """Spec-mandated (2025-11-25 server/utilities/pagination: the client passes `nextCursor` back
    as `cursor`; a page without `nextCursor` is the last)."""
    with _driver("pages", tmp_path) as driver:
        pages = driver.list_tools_pages()
    assert [[t["name"] for t in p["tools"]] for p in pages] == [["t0"], ["t1"]]
    assert json.loads(json.dumps(pages)) == pages
