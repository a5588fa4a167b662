"""The HTTP listener under malformed input (hypothesis): bodies that are not JSON, not JSON-RPC,
deep or large; odd methods; random session ids, protocol versions, Host, Origin, content types.
Every request gets an HTTP response, nothing raises, and no server process is started for a
request that cannot open a session (an `initialize` POST from an allowed Host and Origin).
2026-07-28 requests that reach the guard, with fuzzed arguments, routing headers, Accept,
chunk boundaries and early disconnects: a JSON or well-framed SSE answer, and nothing the
guard must refuse ever reaches the server.

In process: the ASGI application `Listener` driven with hand-made ASGI messages (the ASGI 3.0
HTTP scope), no network.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy.listen._server import Listener
from tests.property.profiles import bounded

PORT = 8765
MARKER = Path(__file__).resolve().parent / ".listen-fuzz-started"  # never written if correct


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


bodies = st.one_of(
    st.binary(max_size=512),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    ).map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda method, rid: json.dumps({"jsonrpc": "2.0", "id": rid, "method": method}).encode(),
        st.sampled_from(["ping", "tools/list", "tools/call", "notifications/initialized", ""]),
        st.one_of(st.integers(), st.text(max_size=5), st.none()),
    ),
    st.integers(min_value=1000, max_value=5000).map(_deep),
    st.just(b"x" * 2_000_000),  # past the opening request's limit
)
header_values = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
headers = st.fixed_dictionaries(
    {},
    optional={
        "content-type": st.sampled_from(["application/json", "text/plain", "", "application/x"]),
        "accept": st.sampled_from(["application/json, text/event-stream", "*/*", "text/html"]),
        "mcp-session-id": header_values,
        "mcp-protocol-version": st.sampled_from(["2025-11-25", "2026-07-28", "1999-01-01", ""]),
        "host": st.sampled_from([f"127.0.0.1:{PORT}", "evil.example", ""]),
        "origin": st.sampled_from([f"http://127.0.0.1:{PORT}", "http://evil.example", "null"]),
    },
)


async def _request(listener: Listener, method: str, head: dict[str, str], body: bytes) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in head.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", PORT),
    }
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)] or [b""]
    sent: list[Any] = []

    async def receive() -> Any:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        await anyio.sleep_forever()

    async def send(message: Any) -> None:
        sent.append(message)

    with anyio.fail_after(20):
        await listener(scope, receive, send)
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert len(starts) == 1, sent
    return int(starts[0]["status"])


@given(st.sampled_from(["POST", "GET", "DELETE", "PUT", "PATCH"]), headers, bodies)
@example("POST", {"content-type": "application/json"}, _deep(100_000))
@example("POST", {"content-type": "application/json"}, b"x" * 2_000_000)
@example("POST", {"content-type": "application/json", "mcp-session-id": "x"}, _deep(100_000))
@bounded(60)
def test_bad_requests_get_an_http_error_and_start_nothing(
    method: str, head: dict[str, str], body: bytes
) -> None:
    seam = GuardSeam(GuardSettings("fuzz"))
    command = [sys.executable, "-c", f"open({str(MARKER)!r}, 'a').write('started')"]
    listener = Listener(seam, command, host="127.0.0.1", port=PORT)

    async def main() -> int:
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            status = await _request(listener, method, head, body)
            tg.cancel_scope.cancel()
        return status

    try:
        status = anyio.run(main)
    finally:
        seam.close()
    opens = (
        method == "POST"
        and head.get("host", f"127.0.0.1:{PORT}") == f"127.0.0.1:{PORT}"
        and head.get("origin", f"http://127.0.0.1:{PORT}") == f"http://127.0.0.1:{PORT}"
        and "mcp-session-id" not in head
        and _is_initialize(body)
    )
    if not opens:
        assert not MARKER.exists(), (method, head, body[:80])
    assert 200 <= status < 600


def _is_initialize(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("method") == "initialize"


# -- 2026-07-28 requests that reach the guard ---------------------------------------------------

GIANT = "giant arguments"
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
arguments = st.one_of(
    st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}),  # valid: may pass
    st.dictionaries(st.sampled_from(["a", "b", "c"]), json_values, max_size=3),
    json_values,
    # deep: past the SDK parser's 200 levels and the guard's 1,024; no deeper, so the value
    # stays within the recursion limit hypothesis leaves free (2,000 frames above the test's)
    st.integers(min_value=300, max_value=1100).map(
        lambda d: {"a": json.loads("[" * d + "]" * d), "b": 1}
    ),
    st.just(GIANT),  # past the body limit (made in the test: a 5 MB repr would be shown)
)
names = st.sampled_from(["add", "stringly", "42", "noschema", "unknown", ""])
routing = st.fixed_dictionaries(
    {},
    optional={
        "mcp-method": st.sampled_from(["tools/call", "tools/list", "", "TOOLS/CALL"]),
        "mcp-name": st.sampled_from(["add", "echo", "=?base64?YWRk?=", "", "ａｄｄ"]),
        "mcp-param-a": header_values,
        "accept": st.sampled_from(
            ["application/json, text/event-stream", "application/json", "text/event-stream", ""]
        ),
        "content-type": st.sampled_from(["application/json", "text/plain"]),
    },
)


class _Sent:
    """What the listener sent for one request."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)

    @property
    def status(self) -> int | None:
        starts = [m for m in self.messages if m["type"] == "http.response.start"]
        assert len(starts) <= 1, self.messages
        return int(starts[0]["status"]) if starts else None

    @property
    def content_type(self) -> str:
        for m in self.messages:
            if m["type"] == "http.response.start":
                return dict(m["headers"]).get(b"content-type", b"").decode()
        return ""

    @property
    def body(self) -> bytes:
        return b"".join(
            m.get("body", b"") for m in self.messages if m["type"] == "http.response.body"
        )


def _scope(head: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("utf-8")) for k, v in head],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", PORT),
    }


async def _stateless(
    listener: Listener, head: list[tuple[str, str]], body: bytes, cuts: list[int], leave: bool
) -> _Sent:
    """POST `body` split at `cuts` (ASGI `more_body` chunks); `leave`: the client goes away
    right after the body (`http.disconnect`)."""
    bounds = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    chunks = [body[a:b] for a, b in itertools.pairwise(bounds)] or [b""]
    sent = _Sent()

    async def receive() -> Any:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        if leave:
            return {"type": "http.disconnect"}
        await anyio.sleep_forever()

    with anyio.fail_after(60):
        await listener(_scope(head), receive, sent)
    return sent


def _frames(data: bytes) -> list[Any]:
    """Each SSE event's data as JSON (WHATWG "Server-sent events"); comments skipped."""
    events = []
    for block in data.split(b"\r\n\r\n"):
        lines = block.split(b"\r\n")
        if not block or all(line.startswith(b":") for line in lines):
            continue
        assert lines[0] == b"event: message" and lines[1].startswith(b"data: "), block[:200]
        events.append(json.loads(b"\n".join(line[6:] for line in lines[1:])))
    return events


@pytest.fixture(scope="module")
def stateless_listener(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    """One listener in front of the hostile server (mixed page, one shared process for every
    2026-07-28 request), its event loop in a thread: (portal, listener, server)."""
    from tests.guard.conftest import Hostile

    from .conftest import hostile_argv

    server = Hostile("mixed", tmp_path_factory.mktemp("fuzz") / "mixed.jsonl")
    seam = GuardSeam(GuardSettings("fuzz"))
    listener = Listener(seam, hostile_argv(server), host="127.0.0.1", port=PORT)
    with anyio.from_thread.start_blocking_portal() as portal:
        future, _ = portal.start_task(listener.run)
        yield portal, listener, server
        future.cancel()
    seam.close()


@given(
    names,
    arguments,
    routing,
    st.lists(st.integers(min_value=0, max_value=10_000_000), max_size=6),
    st.booleans(),
    st.booleans(),
)
@example("add", {"a": "two", "b": 3}, {}, [], False, False)
@example("add", {"a": 2, "b": 3}, {"mcp-name": "echo"}, [1, 7, 30], False, False)
@example("add", {"a": [], "b": 3}, {}, [5], True, True)
@bounded(60)
def test_stateless_requests_never_pass_unguarded(
    stateless_listener: tuple[Any, Any, Any],
    name: str,
    args: Any,
    extra: dict[str, str],
    cuts: list[int],
    with_progress: bool,
    leave: bool,
) -> None:
    """A 2026-07-28 tools/call with fuzzed arguments, routing headers, Accept, chunk boundaries
    and an early disconnect: an HTTP answer that is JSON or well-framed SSE of JSON-RPC
    messages (or nothing, for a client that left), no exception, and the server never
    receives a call whose arguments fail the tool's inputSchema (jsonschema, the oracle) nor
    a call to a tool the guard withheld."""
    import jsonschema

    portal, listener, server = stateless_listener
    if args == GIANT:
        args = {"a": "x" * 5_000_000, "b": 1}
    meta = {**META, "progressToken": 1} if with_progress else META
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": meta},
    }
    body = json.dumps(call).encode()
    head = {
        "host": f"127.0.0.1:{PORT}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
        **extra,
    }
    sent = portal.call(_stateless, listener, list(head.items()), body, cuts, leave)
    status = sent.status
    if status is None:
        assert leave  # only a client that went away gets no answer
    else:
        assert 200 <= status < 600
        if sent.content_type == "text/event-stream":
            events = _frames(sent.body)
            assert events and events[-1]["id"] == 9
            assert all(e.get("jsonrpc") == "2.0" for e in events)
        elif sent.content_type == "application/json":
            answer = json.loads(sent.body)
            assert answer["jsonrpc"] == "2.0" and answer["id"] in (9, None)
            assert ("result" in answer) != ("error" in answer)
            if status >= 400:
                assert "error" in answer
        else:  # refused at the HTTP layer (Host, Origin, Content-Type): an HTTP error
            assert status >= 400, (status, sent.body[:200])
    for called, given_args in server.calls():
        assert called in ("add", "echo", "weather"), called
        if called == "add":
            jsonschema.validate(given_args, ADD_SCHEMA)
