"""Per-request HTTP headers for a Streamable HTTP upstream, for messages that arrive without them
(from a stdio client, or re-sent by the proxy): what the SDK's own `ClientSession` stamps.

Not a public module.

Spec: MCP 2026-07-28 basic/transports "Streamable HTTP": a request carries `MCP-Protocol-Version`,
`Mcp-Method` and, for tools/call, prompts/get and resources/read, `Mcp-Name`; "Custom Headers
from Tool Parameters": a tools/call mirrors each `x-mcp-header` argument as `Mcp-Param-<name>`.
Before 2026-07-28 the transport itself sends `MCP-Protocol-Version` after initialization and
nothing else is added.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    X_MCP_HEADER_KEY,
    encode_header_value,
    find_invalid_x_mcp_header,
    mcp_param_headers,
    x_mcp_header_map,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp.types.jsonrpc import JSONRPCRequest
from mcp_types import PROTOCOL_VERSION_META_KEY


def request_headers(
    message: Any, tool: Callable[[str], Any], negotiated: str | None = None
) -> dict[str, str]:
    """The headers one message needs on the wire.

    Args:
        message: a JSON-RPC message.
        tool: returns the raw definition last listed for a tool name (or `None`).
        negotiated: the version the `initialize` response chose (`None` before it, or on a
            2026-07-28 connection, which has no `initialize`).

    Returns:
        For a 2026-07-28 request (its `_meta` names the version): `MCP-Protocol-Version`,
        `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` as the spec lists them. For anything else
        after initialization: `MCP-Protocol-Version` (2025-06-18 basic/transports "Protocol
        Version Header": the client MUST send it on every subsequent request). Else nothing.
    """
    if isinstance(message, JSONRPCRequest) and message.method == "initialize":
        return {}
    params = getattr(message, "params", None)
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str) or not isinstance(message, JSONRPCRequest):
        return {MCP_PROTOCOL_VERSION_HEADER: negotiated} if negotiated else {}
    return _modern_headers(message.method, message.params or {}, version, tool)


def request_headers_for(
    message: dict[str, Any], tool: Callable[[str], Any], version: str | None = None
) -> dict[str, str]:
    """`request_headers` for a 2026-07-28 message as a plain JSON-RPC `dict`.

    Args:
        message: a request or notification.
        tool: returns the raw definition last listed for a tool name (or `None`).
        version: the version when `params._meta` names none (the client's header).

    Returns:
        `MCP-Protocol-Version`, `Mcp-Method`, and for a request `Mcp-Name` and
        `Mcp-Param-*` as the spec lists them; `{}` for a message without a method.
    """
    method = message.get("method")
    if not isinstance(method, str):
        return {}
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    named = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    version = named if isinstance(named, str) else version
    if version is None:
        return {MCP_METHOD_HEADER: method}
    if "id" not in message:
        return {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: method}
    return _modern_headers(method, params, version, tool)


def _modern_headers(
    method: str, params: dict[str, Any], version: str, tool: Callable[[str], Any]
) -> dict[str, str]:
    headers = {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: method}
    key = NAME_BEARING_METHODS.get(method)
    if key is not None and isinstance(name := params.get(key), str):
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    if method == "tools/call" and isinstance(name := params.get("name"), str):
        definition = tool(name)
        schema = definition.get("inputSchema") if isinstance(definition, dict) else None
        arguments = params.get("arguments")
        if not mentions_x_mcp_header(schema):
            return headers
        if isinstance(schema, dict) and find_invalid_x_mcp_header(schema) is None:
            headers.update(
                mcp_param_headers(
                    x_mcp_header_map(schema), arguments if isinstance(arguments, dict) else {}
                )
            )
    return headers


#: Schemas `mentions_x_mcp_header` remembers (by identity: a listing replaces a tool's
#: definition with a new object, so a changed schema is never answered from the cache).
_MENTIONS_CACHE: Final = 1024
_mentions: dict[int, tuple[Any, bool]] = {}


def mentions_x_mcp_header(schema: Any) -> bool:
    """Whether `x-mcp-header` is a key anywhere in `schema` (a superset of the schema
    positions the spec reads it at): without one a tool has no `Mcp-Param-*` headers to send
    or check, and the schema walk is skipped. Remembered per schema object."""
    if not isinstance(schema, dict):
        return False
    known = _mentions.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    found = _mentions_key(schema)
    if len(_mentions) >= _MENTIONS_CACHE:
        _mentions.clear()
    _mentions[id(schema)] = (schema, found)
    return found


def _mentions_key(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if X_MCP_HEADER_KEY in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class HeaderStamp:
    """An upstream send stream that adds `request_headers` to each request's metadata."""

    def __init__(
        self, inner: Any, tool: Callable[[str], Any], version: Callable[[], str | None]
    ) -> None:
        self._inner = inner
        self._tool = tool
        self._version = version

    async def send(self, item: Any, /) -> None:
        if isinstance(item, SessionMessage):
            headers = request_headers(item.message, self._tool, self._version())
            if headers:
                old = item.metadata if isinstance(item.metadata, ClientMessageMetadata) else None
                merged = {**headers, **((old.headers or {}) if old is not None else {})}
                metadata = (  # a subclass's own fields kept (`_refused.UpstreamMetadata`)
                    dataclasses.replace(old, headers=merged)
                    if old is not None
                    else ClientMessageMetadata(headers=merged)
                )
                item = SessionMessage(item.message, metadata=metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
