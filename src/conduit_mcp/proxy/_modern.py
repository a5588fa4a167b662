"""2026-07-28 stateless requests on the HTTP listener: each POST stands alone, so all of them
share one upstream connection (one server process, or one client of the `--upstream` server)
and one guard connection; request ids are made unique on the way up and restored on the way
down.

Not a public module.

Spec: MCP 2026-07-28 basic/transports "Streamable HTTP" (a request carries its protocol version,
client info and capabilities in `params._meta`; `MCP-Protocol-Version`, `Mcp-Method` and
`Mcp-Name` MUST match the body, else HEADER_MISMATCH -32020; `Mcp-Param-*` must match the
arguments they mirror) — checked with the SDK's own ladder (`mcp.shared.inbound`) before the
guard sees the request, so nothing routed on a header can differ from what the guard decided.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
import orjson
from mcp.shared.inbound import (
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp.types.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

from ._headers import HeaderStamp
from ._seam import GuardSeam
from ._settings import HttpUpstream
from ._upstreams import child_upstream, http_upstream

logger = logging.getLogger("conduit_mcp.proxy")

#: The largest request body accepted (bytes).
MAX_BODY: Final = 4 * 1024 * 1024
#: Seconds a request waits for its response before the client gets an error.
REQUEST_TIMEOUT: Final = 300.0


class _Waiter:
    __slots__ = ("done", "message")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.message: Any = None


class ModernRouter:
    """The stateless side of the listener (see the module docstring).

    Args:
        seam: the guard.
        target: the server command or an `HttpUpstream`.
    """

    def __init__(self, seam: GuardSeam, target: Sequence[str] | HttpUpstream) -> None:
        self.seam = seam
        self.target = target
        self._write: Any = None
        self._waiting: dict[str, _Waiter] = {}
        self._ids = itertools.count(1)
        self._ready = anyio.Event()
        self._lock = anyio.Lock()
        self._failed: BaseException | None = None

    async def _connect(self, tg: anyio.abc.TaskGroup) -> None:
        async with self._lock:
            if self._ready.is_set():
                return
            await tg.start(self._run)

    async def _run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        upstream: AbstractAsyncContextManager[tuple[Any, Any]]
        if isinstance(self.target, HttpUpstream):
            upstream, kind = http_upstream(self.target), "streamable-http"
        else:
            upstream, kind = child_upstream(self.target), "stdio"
        async with upstream as (read, write):
            if kind == "streamable-http":
                write = HeaderStamp(write, self.seam.raw_tool, lambda: None)
            guarded_read, self._write = self.seam.wrap(read, write, transport=kind)  # type: ignore[arg-type]
            self._ready.set()
            task_status.started()
            while True:
                try:
                    item = await guarded_read.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                if self.seam.swallow(item):
                    continue  # the answer to the proxy's own listing
                message = getattr(item, "message", None)
                if isinstance(message, JSONRPCResponse | JSONRPCError):
                    waiter = self._waiting.pop(str(message.id), None)
                    if waiter is not None:
                        waiter.message = self.seam.explain(item).message
                        waiter.done.set()
                        continue
                logger.debug("stateless upstream: a message no request waits for: dropped")
        self._ready = anyio.Event()  # the next request reconnects
        for waiter in self._waiting.values():
            waiter.done.set()  # answered with an error: the upstream ended

    async def handle(
        self,
        tg: anyio.abc.TaskGroup,
        raw_headers: list[tuple[str, str]],
        body: bytes,
    ) -> tuple[int, Any]:
        """One stateless POST body; returns `(HTTP status, JSON body or None for 202)`.

        Args:
            tg: where the shared upstream runs (started on the first request).
            raw_headers: the request's headers, names lower-cased, repeats kept.
            body: the request body.
        """
        headers = dict(raw_headers)
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return 400, _error(None, PARSE_ERROR, "Parse error: the body is not JSON")
        rid = value.get("id") if isinstance(value, dict) else None
        try:
            message = jsonrpc_message_adapter.validate_python(value, by_name=False)
        except Exception:
            return 400, _error(_plain_id(rid), INVALID_REQUEST, "Invalid Request")
        if not isinstance(message, JSONRPCRequest):
            await self._forward(tg, message, headers)  # a notification or a response: passed on
            return 202, None
        rejection = _check_headers(value, raw_headers, self.seam)
        if rejection is not None:
            return 400, _error(message.id, rejection.code, rejection.message, rejection.data)
        upstream_id = f"conduit-{next(self._ids)}"
        waiter = _Waiter()
        self._waiting[upstream_id] = waiter
        request = message.model_copy(update={"id": upstream_id})
        try:
            if not self._ready.is_set():
                await self._connect(tg)
            await self.seam.before_call(request, self._write)
            await self._forward(tg, request, headers)
            with anyio.move_on_after(REQUEST_TIMEOUT):
                await waiter.done.wait()
        finally:
            self._waiting.pop(upstream_id, None)
        answer = waiter.message
        if answer is None:
            return 502, _error(message.id, -32603, "The upstream server did not answer")
        data = answer.model_dump(mode="json", by_alias=True, exclude_unset=True)
        data["id"] = message.id
        return 200, data

    async def _forward(
        self, tg: anyio.abc.TaskGroup, message: Any, headers: dict[str, str]
    ) -> None:
        if not self._ready.is_set():
            await self._connect(tg)
        authorization = headers.get("authorization")
        metadata = (
            ClientMessageMetadata(headers={"authorization": authorization})
            if authorization and isinstance(self.target, HttpUpstream)
            else None
        )
        await self._write.send(SessionMessage(message, metadata=metadata))


def _check_headers(
    body: dict[str, Any], raw_headers: list[tuple[str, str]], seam: GuardSeam
) -> InboundLadderRejection | None:
    """The SDK's modern ladder: envelope, header/body agreement, version; then Mcp-Param-*."""
    duplicated = find_duplicated_routing_header(raw_headers)
    if duplicated is not None:
        return InboundLadderRejection(code=-32020, message=f"duplicated header {duplicated}")
    headers = dict(raw_headers)
    verdict = classify_inbound_request(body, headers=headers)
    if isinstance(verdict, InboundLadderRejection):
        return verdict
    params = body.get("params") or {}
    if body.get("method") == "tools/call" and isinstance(params.get("name"), str):
        definition = seam.raw_tool(params["name"])
        schema = definition.get("inputSchema") if isinstance(definition, dict) else None
        arguments = params.get("arguments")
        if isinstance(schema, dict):
            pairs = [(name, value) for name, value in raw_headers]
            return validate_mcp_param_headers(
                schema, arguments if isinstance(arguments, dict) else {}, dict(pairs)
            )
    return None


def _plain_id(rid: Any) -> Any:
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}
