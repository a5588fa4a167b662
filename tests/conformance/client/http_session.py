"""One MCP client over Streamable HTTP (httpx), taking tools and results in with conduit-mcp.

The transport is the test harness's, kept small: one POST per JSON-RPC message, JSON or SSE
responses, no GET stream, no resumption, no server-to-client requests (this client declares no
capabilities). What it takes off the wire goes through the library under test: `intake` for
`tools/list` (which drops tools with an invalid `x-mcp-header`), `header_map` /
`mcp_param_headers` / `mcp_name_header` for the 2026-07-28 request headers, `parse_call_result`
for `tools/call` results and `parse_json` for every JSON text.

Two eras (spec 2026-07-28 basic/transports/streamable-http "Backward Compatibility"):

- 2025-03-26 .. 2025-11-25 ("legacy"): an `initialize` handshake, then `notifications/initialized`;
  later requests carry `MCP-Protocol-Version` and, when the server assigned one, `Mcp-Session-Id`
  (spec 2025-11-25 basic/transports "Protocol Version Header", "Session Management").
- 2026-07-28 ("modern"): no handshake and no session; every request carries `_meta` with the
  protocol version, client capabilities and client info, and the headers `MCP-Protocol-Version`,
  `Mcp-Method` and, for `tools/call` / `resources/read` / `prompts/get`, `Mcp-Name` (spec
  2026-07-28 basic/transports/streamable-http "Request Metadata"). `server/discover` is called
  first to check that the server serves the version (the spec's MAY).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, Final

import httpx
import orjson

from conduit_mcp.client import (
    Error,
    InputRequired,
    Intake,
    Tool,
    ToolResult,
    intake,
    parse_call_result,
    parse_json,
)
from conduit_mcp.client.headers import header_map, mcp_name_header, mcp_param_headers

from .sse import SseEvent, SseParser

JSONObject = dict[str, Any]

#: Revisions whose Streamable HTTP starts with `initialize` (2024-11-05 had HTTP+SSE instead).
LEGACY_VERSIONS: Final = ("2025-03-26", "2025-06-18", "2025-11-25")
#: Revisions with per-request metadata and no handshake.
MODERN_VERSIONS: Final = ("2026-07-28",)

PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
SESSION_HEADER: Final = "Mcp-Session-Id"
METHOD_HEADER: Final = "Mcp-Method"
NAME_HEADER: Final = "Mcp-Name"
ACCEPT: Final = "application/json, text/event-stream"

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"

#: Methods whose `Mcp-Name` header mirrors `params.name` / `params.uri` (2026-07-28 "Standard
#: Request Headers").
NAME_SOURCES: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

MAX_BODY_BYTES: Final = 32 * 1024 * 1024  # one response, JSON or a whole SSE stream
MAX_PAGES: Final = 1000  # tools/list pages before a cursor loop is assumed

try:
    _VERSION = metadata.version("conduit-mcp-client")
except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
    _VERSION = "0"
CLIENT_INFO: Final = {"name": "conduit-mcp-conformance-client", "version": _VERSION}


class SessionError(Exception):
    """The exchange failed: the base of the two failures below."""


class TransportFailure(SessionError):
    """The HTTP exchange broke the transport rules (status, content type, stream, size)."""


class RpcError(SessionError):
    """The server answered a request with a JSON-RPC error.

    Attributes:
        method: the request's method.
        code: the JSON-RPC error code (`None` when it was not an integer).
        message: the error message (`""` when it was not a string).
        http_status: the HTTP status it came with.
    """

    def __init__(self, method: str, code: int | None, message: str, http_status: int) -> None:
        super().__init__(f"{method}: JSON-RPC error {code} (HTTP {http_status}): {message}")
        self.method = method
        self.code = code
        self.message = message
        self.http_status = http_status


class McpHttpSession:
    """A client session with one MCP endpoint.

    Args:
        url: the MCP endpoint.
        protocol_version: one of `LEGACY_VERSIONS` or `MODERN_VERSIONS`.
        server_id: the operator-assigned id handed to `intake`.
        capabilities: the client capabilities to declare (default `{}`: none).
        timeout: seconds for each HTTP operation.
        log: where to write one-line notes (rejected tools, notifications); default: nowhere.
        transport: an httpx transport (tests pass `httpx.MockTransport`); default: real HTTP.

    Raises:
        ValueError: `protocol_version` is not one this client speaks.
    """

    def __init__(
        self,
        url: str,
        protocol_version: str,
        *,
        server_id: str = "conformance-server",
        capabilities: Mapping[str, Any] | None = None,
        timeout: float = 10.0,
        log: Callable[[str], None] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if protocol_version not in LEGACY_VERSIONS + MODERN_VERSIONS:
            raise ValueError(f"this client does not speak protocol version {protocol_version!r}")
        self.url = url
        self.protocol_version = protocol_version
        self.modern = protocol_version in MODERN_VERSIONS
        self.server_id = server_id
        self.capabilities: JSONObject = dict(capabilities or {})
        self.server_capabilities: JSONObject = {}
        self.session_id: str | None = None
        self.wire_tools: list[Any] = []  # a deep copy of the tools exactly as listed
        self._log = log or (lambda _line: None)
        self._http = httpx.Client(timeout=timeout, transport=transport)
        self._next_id = 1
        self._initialized = False
        self._header_maps: dict[str, dict[str, tuple[str, ...]]] = {}

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> McpHttpSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> JSONObject:
        """Start the session: `initialize` (legacy) or `server/discover` (modern).

        Returns:
            The server's `InitializeResult` or `DiscoverResult`.

        Raises:
            SessionError: the server failed the exchange, or does not serve our version.
        """
        if self.modern:
            result = self.request("server/discover", {})
            supported = result.get("supportedVersions")
            if not isinstance(supported, list) or self.protocol_version not in supported:
                raise TransportFailure(
                    f"server/discover: the server does not list {self.protocol_version} in "
                    f"supportedVersions ({supported!r})"
                )
        else:
            result = self.request(
                "initialize",
                {
                    "protocolVersion": self.protocol_version,
                    "capabilities": self.capabilities,
                    "clientInfo": CLIENT_INFO,
                },
            )
            chosen = result.get("protocolVersion")
            if chosen not in LEGACY_VERSIONS:
                raise TransportFailure(f"initialize: the server chose version {chosen!r}")
            self.protocol_version = chosen
            self._initialized = True
            self.notify("notifications/initialized")
        capabilities = result.get("capabilities")
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        return result

    def close(self) -> None:
        """End the session (DELETE when the server assigned a session id) and the connection."""
        try:
            if self.session_id is not None:
                # Spec 2025-11-25 "Session Management": clients SHOULD send DELETE; a 405 is fine.
                try:
                    self._http.delete(self.url, headers=self._headers("", None))
                except httpx.HTTPError as exc:
                    self._log(f"session DELETE failed: {exc}")
        finally:
            self._http.close()

    # -- JSON-RPC --------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> JSONObject:
        """Send one request and return its `result`.

        Args:
            method: the JSON-RPC method.
            params: its params (not mutated; `_meta` is added to a copy in the modern era).
            headers: extra HTTP headers (e.g. `Mcp-Param-*`).

        Returns:
            The `result` object.

        Raises:
            RpcError: the server answered with a JSON-RPC error.
            TransportFailure: the HTTP exchange broke the transport rules.
            conduit_mcp.client.Error: a JSON text was not valid JSON (`invalid_json`).
        """
        request_id = self._next_id
        self._next_id += 1
        body: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        body["params"] = self._params(params)
        all_headers = self._headers(method, body["params"])
        if headers:
            all_headers.update(headers)
        response = self._post(method, body, all_headers, request_id)
        assert response is not None  # a request always has a response
        return response

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send one notification (the server answers 202 Accepted).

        Raises:
            RpcError, TransportFailure: as `request`.
        """
        body: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None or self.modern:
            body["params"] = self._params(params)
        self._post(method, body, self._headers(method, body.get("params")), None)

    def _params(self, params: Mapping[str, Any] | None) -> JSONObject:
        out = dict(params or {})
        if self.modern:
            meta = out.get("_meta")
            meta = dict(meta) if isinstance(meta, Mapping) else {}
            meta[META_PROTOCOL_VERSION] = self.protocol_version
            meta[META_CLIENT_CAPABILITIES] = self.capabilities
            meta[META_CLIENT_INFO] = CLIENT_INFO
            out["_meta"] = meta
        return out

    def _headers(self, method: str, params: Mapping[str, Any] | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if self.modern:
            headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
            if method:
                headers[METHOD_HEADER] = method
            source = NAME_SOURCES.get(method)
            if source is not None and params is not None and isinstance(params.get(source), str):
                headers[NAME_HEADER] = mcp_name_header(params[source])
        elif self._initialized:
            headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
            if self.session_id is not None:
                headers[SESSION_HEADER] = self.session_id
        return headers

    def _post(
        self, method: str, body: JSONObject, headers: dict[str, str], request_id: int | None
    ) -> JSONObject | None:
        content = orjson.dumps(body)
        try:
            with self._http.stream("POST", self.url, content=content, headers=headers) as response:
                return self._response(method, response, request_id)
        except httpx.HTTPError as exc:
            raise TransportFailure(f"{method}: HTTP failed: {exc!r}") from exc

    def _response(
        self, method: str, response: httpx.Response, request_id: int | None
    ) -> JSONObject | None:
        status = response.status_code
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if method == "initialize" and 200 <= status < 300:
            session = response.headers.get(SESSION_HEADER)
            if session is not None:
                # Spec 2025-11-25 "Session Management": visible ASCII (0x21 to 0x7E) only.
                if not session or not all(0x21 <= ord(c) <= 0x7E for c in session):
                    raise TransportFailure("initialize: Mcp-Session-Id is not visible ASCII")
                self.session_id = session
        if request_id is None:  # a notification: 202 Accepted, no body
            body = _read(response, method)
            if not 200 <= status < 300:
                raise _http_error(method, status, ctype, body)
            if status != 202:
                self._log(f"{method}: expected 202 Accepted for a notification, got {status}")
            return None
        if 200 <= status < 300 and ctype == "text/event-stream":
            return self._read_stream(method, response, request_id)
        body = _read(response, method)
        if not 200 <= status < 300:
            raise _http_error(method, status, ctype, body)
        if status == 202:
            raise TransportFailure(f"{method}: 202 Accepted for a request, which needs a response")
        if ctype != "application/json":
            raise TransportFailure(f"{method}: response Content-Type is {ctype!r}")
        return _result(method, parse_json(body), request_id, status)

    def _read_stream(self, method: str, response: httpx.Response, request_id: int) -> JSONObject:
        parser = SseParser()
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > MAX_BODY_BYTES:
                raise TransportFailure(f"{method}: SSE stream exceeds {MAX_BODY_BYTES} bytes")
            for event in parser.feed(chunk):
                result = self._event(method, event, request_id, response.status_code)
                if result is not None:
                    return result
        for event in parser.close():
            result = self._event(method, event, request_id, response.status_code)
            if result is not None:
                return result
        raise TransportFailure(f"{method}: the SSE stream ended without the response")

    def _event(
        self, method: str, event: SseEvent, request_id: int, status: int
    ) -> JSONObject | None:
        if event.event != "message":
            self._log(f"{method}: ignored an SSE event of type {event.event!r}")
            return None
        if not event.data:  # a priming event (an id and empty data) carries no message
            return None
        message = parse_json(event.data)
        if isinstance(message, dict) and "method" in message:
            kind = "request" if "id" in message else "notification"
            self._log(f"{method}: server {kind} {message.get('method')!r} on the stream")
            return None
        if isinstance(message, dict) and message.get("id") != request_id:
            self._log(f"{method}: ignored a response to another id on the stream")
            return None
        return _result(method, message, request_id, status)

    # -- tools ------------------------------------------------------------------------------------

    def list_tools(self) -> Intake:
        """List every page of tools and take them in with `conduit_mcp.client.intake`.

        The pages' `tools` arrays are joined into one page before intake, so duplicate names
        are found across pages; each rejected tool is logged with its name and reason (spec
        2026-07-28 basic/transports/streamable-http "Schema Extension": clients SHOULD log).

        Returns:
            The `Intake` (paths index into the joined `tools` array).

        Raises:
            SessionError: a request failed, or a cursor repeated.
            conduit_mcp.client.Error: `invalid_tools_list` for a page that is not a
                `ListToolsResult`.
        """
        tools: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page = self.request("tools/list", {} if cursor is None else {"cursor": cursor})
            page_tools = page.get("tools")
            if not isinstance(page_tools, list):
                # Let the library judge the malformed page: intake raises invalid_tools_list.
                intake(
                    self.server_id,
                    page,
                    transport="streamable-http",
                    protocol_version=self.protocol_version,
                )
                raise AssertionError("intake accepted a page without a tools array")
            tools.extend(page_tools)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
            if cursor in seen:
                raise TransportFailure("tools/list: nextCursor repeated")
            seen.add(cursor)
        else:
            raise TransportFailure(f"tools/list: more than {MAX_PAGES} pages")
        self.wire_tools = copy.deepcopy(tools)
        taken = intake(
            self.server_id,
            {"tools": tools},
            transport="streamable-http",
            protocol_version=self.protocol_version,
        )
        for rejection in taken.rejected:
            self._log(
                f"rejected tool {rejection.name!r}: {rejection.reason} at "
                f"{_json_path(rejection.path)}: {rejection.message}"
            )
        if self.modern:
            self._header_maps = {tool.name: header_map(tool) for tool in taken.tools}
        return taken

    def call_tool(self, tool: Tool, arguments: Mapping[str, Any]) -> ToolResult | InputRequired:
        """Call a tool, with its `Mcp-Param-*` headers in the modern era.

        Args:
            tool: an accepted tool (from `list_tools`).
            arguments: the call's arguments (not mutated).

        Returns:
            `parse_call_result` of the result.

        Raises:
            SessionError: as `request`.
            conduit_mcp.client.Error: from `mcp_param_headers` (`header_value_unencodable`) or
                `parse_call_result` (`invalid_tool_result`, `invalid_result_type`).
        """
        headers: dict[str, str] = {}
        if self.modern:
            mapping = self._header_maps.get(tool.name)
            headers = mcp_param_headers(tool if mapping is None else mapping, arguments)
        result = self.request(
            "tools/call", {"name": tool.name, "arguments": dict(arguments)}, headers=headers
        )
        return parse_call_result(result, protocol_version=self.protocol_version)


def _read(response: httpx.Response, method: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    for chunk in response.iter_bytes():
        total += len(chunk)
        if total > MAX_BODY_BYTES:
            raise TransportFailure(f"{method}: response body exceeds {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _http_error(method: str, status: int, ctype: str, body: bytes) -> SessionError:
    if ctype == "application/json":
        try:
            message = parse_json(body)
        except Error:  # an unreadable error body is reported as a plain HTTP failure
            message = None
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict):
            return _rpc_error(method, error, status)
    return TransportFailure(f"{method}: HTTP {status} ({ctype or 'no content type'})")


def _rpc_error(method: str, error: Mapping[str, Any], status: int) -> RpcError:
    code = error.get("code")
    text = error.get("message")
    return RpcError(
        method,
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        text if isinstance(text, str) else "",
        status,
    )


def _result(method: str, message: Any, request_id: int, status: int) -> JSONObject:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise TransportFailure(f"{method}: the response is not a JSON-RPC 2.0 object")
    if message.get("id") != request_id:
        raise TransportFailure(f"{method}: the response id does not match the request id")
    error = message.get("error")
    if isinstance(error, dict):
        raise _rpc_error(method, error, status)
    result = message.get("result")
    if not isinstance(result, dict):
        raise TransportFailure(f"{method}: the response has no result object")
    return result


def _json_path(path: tuple[Any, ...]) -> str:
    parts = ["$"]
    for step in path:
        parts.append(f"[{step}]" if isinstance(step, int) else f"[{step!r}]")
    return "".join(parts)
