"""The HTTP listener under malformed input (hypothesis): bodies that are not JSON, not JSON-RPC,
deep or large; odd methods; random session ids, protocol versions, Host, Origin, content types.
Every request gets an HTTP response, nothing raises, and no server process is started for a
request that cannot open a session (an `initialize` POST from an allowed Host and Origin).

In process: the ASGI application `Listener` driven with hand-made ASGI messages (the ASGI 3.0
HTTP scope), no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from hypothesis import example, given
from hypothesis import strategies as st

from conduit_mcp.proxy import GuardSeam, GuardSettings
from conduit_mcp.proxy._listen import Listener
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
