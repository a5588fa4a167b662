"""The conformance client's Streamable HTTP session against a scripted server (MockTransport).

No node, no sockets: each test scripts the server's answers and checks what the client sent.
Expected header values are taken from the spec text (its examples and encoding table), not from
what the client printed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from conduit_mcp.client import Error, ToolResult

from .http_session import (
    CLIENT_INFO,
    McpHttpSession,
    RpcError,
    TransportFailure,
)

URL = "http://mcp.test/mcp"
Answer = Callable[[dict[str, Any], httpx.Request], httpx.Response]


class Chunks(httpx.SyncByteStream):
    """A response body delivered in the given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


class Server:
    """Answers each POST by method; records every request."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method != "POST":
            return httpx.Response(405)
        body = json.loads(request.content)
        self.bodies.append(body)
        return self.answers[body["method"]](body, request)

    def sent(self, method: str) -> tuple[dict[str, Any], httpx.Request]:
        for body, request in zip(
            self.bodies, [r for r in self.requests if r.method == "POST"], strict=True
        ):
            if body["method"] == method:
                return body, request
        raise AssertionError(f"no {method} request")


def result(value: dict[str, Any], headers: dict[str, str] | None = None) -> Answer:
    def answer(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        message = {"jsonrpc": "2.0", "id": body["id"], "result": value}
        return httpx.Response(200, json=message, headers=headers)

    return answer


def accepted(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
    return httpx.Response(202)


DISCOVER = result({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}})

HEADER_TOOL = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "options": {
                "type": "object",
                "properties": {"limit": {"type": "integer", "x-mcp-header": "Limit"}},
            },
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
    },
}
BAD_HEADER_TOOL = {
    "name": "bad",
    "inputSchema": {
        "type": "object",
        "properties": {"score": {"type": "number", "x-mcp-header": "Score"}},
    },
}
# resultType: required from 2026-07-28 (basic "ResultType"), ignored before.
CALL_RESULT = {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}


def modern(answers: dict[str, Answer]) -> tuple[McpHttpSession, Server, list[str]]:
    server = Server({"server/discover": DISCOVER, **answers})
    log: list[str] = []
    session = McpHttpSession(
        URL, "2026-07-28", transport=httpx.MockTransport(server), log=log.append
    )
    return session, server, log


def test_modern_requests_carry_meta_and_standard_headers() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Sending Messages": Accept
    lists application/json and text/event-stream; "Protocol Version Header": every POST MUST
    carry MCP-Protocol-Version matching `_meta`; "Standard Request Headers": Mcp-Method on all
    requests, Mcp-Name for tools/call; the tools/call example)."""
    session, server, _ = modern(
        {"tools/list": result({"tools": [HEADER_TOOL]}), "tools/call": result(CALL_RESULT)}
    )
    with session:
        session.connect()
        tool = session.list_tools().tools[0]
        session.call_tool(tool, {"region": "us-west1", "query": "SELECT * FROM users"})
    body, request = server.sent("tools/call")
    assert request.headers["accept"] == "application/json, text/event-stream"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["mcp-protocol-version"] == "2026-07-28"
    assert request.headers["mcp-method"] == "tools/call"
    assert request.headers["mcp-name"] == "execute_sql"
    assert request.headers["mcp-param-region"] == "us-west1"
    assert "mcp-param-limit" not in request.headers  # no value at options.limit: omitted
    assert "mcp-session-id" not in request.headers
    assert body["params"]["_meta"] == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    assert body["params"]["name"] == "execute_sql"
    assert body["params"]["arguments"] == {"region": "us-west1", "query": "SELECT * FROM users"}
    for method in ("server/discover", "tools/list"):
        _, listed = server.sent(method)
        assert listed.headers["mcp-method"] == method
        assert "mcp-name" not in listed.headers


def test_modern_nested_header_and_base64_values() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Value Encoding" table:
    "Hello, 世界" -> `=?base64?SGVsbG8sIOS4lueVjA==?=`; integers in decimal; nested
    properties reached by `properties` keys are mirrored; "The same encoding rule applies to
    the `Mcp-Name` header value")."""
    tool = copy.deepcopy(HEADER_TOOL)
    tool["name"] = "Hello, 世界"
    session, server, _ = modern(
        {"tools/list": result({"tools": [tool]}), "tools/call": result(CALL_RESULT)}
    )
    with session:
        session.connect()
        taken = session.list_tools().tools[0]
        session.call_tool(taken, {"region": " padded ", "options": {"limit": -7}, "query": "q"})
    _, request = server.sent("tools/call")
    assert request.headers["mcp-name"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert request.headers["mcp-param-region"] == "=?base64?IHBhZGRlZCA=?="
    assert request.headers["mcp-param-limit"] == "-7"


def test_modern_intake_excludes_tools_with_invalid_headers_and_logs_them() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Schema Extension": clients on
    Streamable HTTP MUST exclude a tool whose `x-mcp-header` breaks a constraint — here `number`
    — and SHOULD log the tool name and the reason)."""
    session, _, log = modern({"tools/list": result({"tools": [BAD_HEADER_TOOL, HEADER_TOOL]})})
    with session:
        session.connect()
        taken = session.list_tools()
    assert [t.name for t in taken.tools] == ["execute_sql"]
    assert [(r.name, r.reason) for r in taken.rejected] == [("bad", "x_mcp_header_type")]
    assert any("'bad'" in line and "x_mcp_header_type" in line for line in log)


def test_legacy_session_keeps_annotated_tools_and_sends_no_param_headers() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http: the `x-mcp-header` rules and
    `Mcp-Param-*` headers are this revision's; a 2025-11-25 session has neither, so the tool is
    kept and no `Mcp-Param-*` or `Mcp-Method` header is sent)."""
    server = Server(
        {
            "initialize": result({"protocolVersion": "2025-11-25", "capabilities": {}}),
            "notifications/initialized": accepted,
            "tools/list": result({"tools": [BAD_HEADER_TOOL]}),
            "tools/call": result(CALL_RESULT),
        }
    )
    with McpHttpSession(URL, "2025-11-25", transport=httpx.MockTransport(server)) as session:
        session.connect()
        tool = session.list_tools().tools[0]
        session.call_tool(tool, {"score": 1})
    _, request = server.sent("tools/call")
    assert not [h for h in request.headers if h.startswith("mcp-param-") or h == "mcp-method"]


def test_legacy_handshake_then_version_and_session_headers() -> None:
    """Spec-mandated (2025-11-25 basic/transports "Session Management": a session id from the
    InitializeResult response MUST be sent on all later requests, and clients SHOULD DELETE the
    session at the end; "Protocol Version Header": MCP-Protocol-Version on all subsequent
    requests; basic/lifecycle: `notifications/initialized` after `initialize`)."""
    server = Server(
        {
            "initialize": result(
                {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}},
                headers={"Mcp-Session-Id": "abc-123"},
            ),
            "notifications/initialized": accepted,
            "tools/list": result({"tools": []}),
        }
    )
    with McpHttpSession(URL, "2025-11-25", transport=httpx.MockTransport(server)) as session:
        session.connect()
        session.list_tools()
    init_body, init = server.sent("initialize")
    assert "mcp-protocol-version" not in init.headers
    assert "mcp-session-id" not in init.headers
    assert init_body["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": CLIENT_INFO,
    }
    for method in ("notifications/initialized", "tools/list"):
        body, request = server.sent(method)
        assert request.headers["mcp-protocol-version"] == "2025-11-25"
        assert request.headers["mcp-session-id"] == "abc-123"
        assert "_meta" not in body.get("params", {})
    assert "id" not in server.sent("notifications/initialized")[0]
    delete = server.requests[-1]
    assert delete.method == "DELETE"
    assert delete.headers["mcp-session-id"] == "abc-123"


def test_legacy_session_id_must_be_visible_ascii() -> None:
    """Spec-mandated (2025-11-25 basic/transports "Session Management": the session ID MUST
    only contain visible ASCII characters, 0x21 to 0x7E)."""
    server = Server(
        {
            "initialize": result(
                {"protocolVersion": "2025-11-25", "capabilities": {}},
                headers={"Mcp-Session-Id": "a b"},
            )
        }
    )
    with McpHttpSession(URL, "2025-11-25", transport=httpx.MockTransport(server)) as session:
        with pytest.raises(TransportFailure, match="visible ASCII"):
            session.connect()


def sse(*events: str, chunks: int = 1) -> Answer:
    def answer(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        text = "".join(events).replace("{id}", str(body["id"])).encode()
        size = max(1, len(text) // chunks)
        parts = [text[i : i + size] for i in range(0, len(text), size)]
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, stream=Chunks(parts)
        )

    return answer


def test_sse_response_skips_priming_and_notifications() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Sending Messages": the
    client MUST support SSE responses; "Receiving Messages": notifications may precede the
    response; comment lines are ignored; 2025-11-25: a priming event has an id and empty
    data)."""
    stream = sse(
        ": keep-alive\n\n",
        "id: e1\ndata:\n\n",
        'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
        'data: {"jsonrpc":"2.0","id":{id},\ndata: "result":{"tools":[]}}\n\n',
        chunks=7,
    )
    session, _, log = modern({"tools/list": stream})
    with session:
        session.connect()
        assert session.list_tools().tools == ()
    assert any("notifications/progress" in line for line in log)


def test_sse_stream_that_ends_without_the_response_fails() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Sending Messages": a request
    gets a response; resumable streams are not supported, so a stream that ends early is a
    failure)."""
    session, _, _ = modern({"tools/list": sse("id: 1\ndata:\n\n")})
    with session:
        session.connect()
        with pytest.raises(TransportFailure, match="ended without the response"):
            session.list_tools()


def test_json_rpc_error_with_http_400_is_an_rpc_error() -> None:
    """Spec-mandated (2026-07-28 basic/transports/streamable-http "Server Validation": a
    HeaderMismatch is HTTP 400 with JSON-RPC error -32020)."""

    def mismatch(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        error = {"code": -32020, "message": "Header mismatch"}
        return httpx.Response(400, json={"jsonrpc": "2.0", "id": body["id"], "error": error})

    session, _, _ = modern({"tools/list": mismatch})
    with session:
        session.connect()
        with pytest.raises(RpcError) as raised:
            session.list_tools()
    assert (raised.value.code, raised.value.http_status) == (-32020, 400)


def test_http_failures_are_transport_failures() -> None:
    """conduit-defined: a non-JSON error page, a 202 for a request, another id and a server
    that does not list our version each fail with `TransportFailure`."""
    cases: dict[str, Answer] = {
        "HTTP 404": lambda body, request: httpx.Response(404, text="<html>not here</html>"),
        "202 Accepted for a request": accepted,
        "id does not match": lambda body, request: httpx.Response(
            200, json={"jsonrpc": "2.0", "id": body["id"] + 1, "result": {}}
        ),
    }
    for expected, answer in cases.items():
        session, _, _ = modern({"tools/list": answer})
        with session:
            session.connect()
            with pytest.raises(TransportFailure, match=expected):
                session.list_tools()
    old = result({"supportedVersions": ["2025-11-25"], "capabilities": {}})
    server = Server({"server/discover": old})
    with McpHttpSession(URL, "2026-07-28", transport=httpx.MockTransport(server)) as session:
        with pytest.raises(TransportFailure, match="supportedVersions"):
            session.connect()


def test_invalid_json_body_raises_the_library_error() -> None:
    """conduit-defined: JSON text goes through `parse_json`, whose `invalid_json` escapes."""

    def bad(body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        text = b'{"jsonrpc": "2.0", "id": 2, "result": {NaN}}'
        return httpx.Response(200, content=text, headers={"Content-Type": "application/json"})

    session, _, _ = modern({"tools/list": bad})
    with session:
        session.connect()
        with pytest.raises(Error) as raised:
            session.list_tools()
    assert raised.value.reason == "invalid_json"


def test_pages_are_joined_and_a_repeated_cursor_fails() -> None:
    """Spec-mandated (2026-07-28 server/utilities/pagination: `nextCursor` continues the list;
    its absence ends it). conduit-defined: a cursor seen twice is a loop and fails."""
    pages: Iterator[dict[str, Any]] = iter(
        [
            {"tools": [HEADER_TOOL], "nextCursor": "p2"},
            {"tools": [dict(HEADER_TOOL, name="second")]},
        ]
    )
    session, server, _ = modern({"tools/list": lambda b, r: result(next(pages))(b, r)})
    with session:
        session.connect()
        assert [t.name for t in session.list_tools().tools] == ["execute_sql", "second"]
    assert server.sent("tools/list")[0]["params"].get("cursor") is None
    assert server.bodies[-1]["params"]["cursor"] == "p2"
    loop = result({"tools": [], "nextCursor": "same"})
    session, _, _ = modern({"tools/list": loop})
    with session:
        session.connect()
        with pytest.raises(TransportFailure, match="repeated"):
            session.list_tools()


def test_nothing_the_caller_passed_is_mutated() -> None:
    """conduit-defined: params, arguments and the listed tools stay as they were."""
    session, _, _ = modern(
        {"tools/list": result({"tools": [HEADER_TOOL]}), "tools/call": result(CALL_RESULT)}
    )
    arguments = {"region": "eu", "options": {"limit": 3}, "query": "q"}
    params = {"_meta": {"progressToken": 1}}
    before = copy.deepcopy((arguments, params))
    with session:
        session.connect()
        tool = session.list_tools().tools[0]
        schema = copy.deepcopy(tool.input_schema)
        outcome = session.call_tool(tool, arguments)
        session.request("tools/list", params)
    assert (arguments, params) == before
    assert tool.input_schema == schema == session.wire_tools[0]["inputSchema"]
    assert isinstance(outcome, ToolResult) and not outcome.is_error


def test_unknown_protocol_version_is_refused() -> None:
    """conduit-defined: the client speaks 2025-03-26 .. 2025-11-25 and 2026-07-28 only
    (2024-11-05 used the HTTP+SSE transport, not Streamable HTTP)."""
    with pytest.raises(ValueError):
        McpHttpSession(URL, "2024-11-05")
