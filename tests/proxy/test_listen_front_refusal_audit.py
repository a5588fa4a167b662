"""`--audit-calls` on the 2026-07-28 stateless paths: a call the listener answers itself at the
front, never sending it on, has its row (`refused`, with why), as the listener's own refusals in
a session have theirs (`request_id_in_use`, `too_many_in_flight`). Found while checking every
early return of the stateless paths for a call the policy let through: headers the SDK's
inbound ladder rejects (`Mcp-Name` not the body's tool: HEADER_MISMATCH -32020; a `_meta`
without the client's capabilities: -32602), and a server process that speaks no
2026-07-28 (the listener refuses every stateless request with -32022), left no row.

Real parts: the listener (`Listener`, called as uvicorn calls it, the caller's verified
identity in the scope), its `CallerGate`, a `CallAuditor` writing a sqlite `PinStore`; behind
it the hostile server's `flood` scenario as the shared server process (with and without its
answer to `server/discover`), or a raw ASGI Streamable HTTP server on the pooled POST path.

Oracle: MCP 2026-07-28 basic/transports "Streamable HTTP" (the `Mcp-Name` header MUST match
the body, else HEADER_MISMATCH; a server that speaks no 2026-07-28 gets no stateless request:
UNSUPPORTED_PROTOCOL_VERSION), the server's own log (no call reached it) and the verdicts
docs/identity.md defines (`refused`: never sent to the server).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from conduit_mcp.proxy._settings import HttpUpstream
from conduit_mcp.proxy.listen._callers import IDENTITY_KEY
from conduit_mcp.proxy.listen._server import Listener
from tests.guard.conftest import HOSTILE, Hostile

from .conftest import hostile_argv
from .test_listen_fuzz import _scope, _Sent
from .test_listen_unanswered_audit import ALICE, Upstream, _audited, _call, _head, _until


async def _post(listener: Listener, rid: int, body: bytes | None = None, **headers: str) -> _Sent:
    """POST a call of `echo` as alice (`body`: another), `headers` in place of the usual
    ones."""
    sent = _Sent()
    chunks = [body if body is not None else _call(rid, "echo")]

    async def receive() -> Any:
        if chunks:
            return {"type": "http.request", "body": chunks.pop(), "more_body": False}
        await anyio.sleep_forever()

    head = [(k, headers.get(k, v)) for k, v in _head("echo")]
    with anyio.fail_after(30):
        await listener({**_scope(head), IDENTITY_KEY: ALICE}, receive, sent)
    return sent


async def _refused_at_the_front(listener: Listener) -> list[tuple[int, int]]:
    """A call whose `Mcp-Name` names another tool, and one without the client capabilities
    its `_meta` must carry: each answer's HTTP status and JSON-RPC error code."""
    bare = json.loads(_call(2, "echo"))
    del bare["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    answers = [
        await _post(listener, 1, **{"mcp-name": "weather"}),
        await _post(listener, 2, json.dumps(bare).encode()),
    ]
    return [(a.status, json.loads(a.body)["error"]["code"]) for a in answers]


FRONT_ROWS = [
    ("echo", "refused", "header_mismatch", "1"),
    ("echo", "refused", "invalid_params", "2"),
]


def test_on_the_shared_server_a_call_refused_at_the_front_has_its_row(tmp_path: Path) -> None:
    server = Hostile("flood", tmp_path / "flood.jsonl")
    answers, rows = _audited(tmp_path, hostile_argv(server), _refused_at_the_front)
    assert answers == [(400, -32020), (400, -32602)]
    assert rows == FRONT_ROWS
    assert server.calls() == []


def test_on_the_pooled_post_path_a_call_refused_at_the_front_has_its_row(tmp_path: Path) -> None:
    import uvicorn

    from tests.guard.conftest import free_port

    upstream = Upstream()
    port = free_port()
    config = uvicorn.Config(
        upstream, host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)

    async def test(listener: Listener) -> Any:
        assert listener.modern.direct is not None  # the pooled path serves this upstream
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            await _until(lambda: server.started)
            try:
                return await _refused_at_the_front(listener)
            finally:
                server.should_exit = True

    target = HttpUpstream(f"http://127.0.0.1:{port}/mcp", {})
    answers, rows = _audited(tmp_path, target, test)
    assert answers == [(400, -32020), (400, -32602)]
    assert rows == FRONT_ROWS
    assert upstream.called == []


def test_a_call_for_a_server_that_speaks_no_2026_07_28_has_its_row(tmp_path: Path) -> None:
    """The server process answers `server/discover` "not found" (it speaks 2025-11-25 and
    before): the listener refuses the stateless call with -32022, its row `refused`,
    `unsupported_protocol_version`."""
    import sys

    server = Hostile("flood", tmp_path / "flood.jsonl")
    argv = [sys.executable, str(HOSTILE), "--scenario", "flood", "--log", str(server.log)]

    async def test(listener: Listener) -> Any:
        answer = await _post(listener, 1)
        return answer.status, json.loads(answer.body)["error"]

    (status, error), rows = _audited(tmp_path, argv, test)
    assert (status, error["code"]) == (400, -32022)
    assert rows == [("echo", "refused", "unsupported_protocol_version", "1")]
    assert server.calls() == []
