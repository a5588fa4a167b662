"""2026-07-28 stateless requests on the HTTP listener: each POST stands alone, so all of them
share one upstream connection (one server process, or one client of the `--upstream` server)
and one guard connection; request ids and progress tokens are made unique on the way up and
restored on the way down. An `--upstream` server reachable over plain `http`/`https` is served
without the SDK's client: each request is one POST on a pooled connection (`upstream/_direct`).
A server process is first asked `server/discover` (2026-07-28: servers MUST implement it): one
that speaks no 2026-07-28 gets no stateless request (2025-11-25 lifecycle: nothing but pings
before `initialize`); each is answered UNSUPPORTED_PROTOCOL_VERSION naming the versions the
listener serves in a session, so the client falls back to `initialize`.

Not a public module.

Spec: MCP 2026-07-28 basic/transports "Streamable HTTP" (a request carries its protocol version,
client info and capabilities in `params._meta`; `MCP-Protocol-Version`, `Mcp-Method` and
`Mcp-Name` MUST match the body, else HEADER_MISMATCH -32020; `Mcp-Param-*` must match the
arguments they mirror) — checked with the SDK's own ladder (`mcp.shared.inbound`) before the
guard sees the request, so nothing routed on a header can differ from what the guard decided.
The response is one JSON object, or a `text/event-stream` whose events are the messages
related to the request (progress for its `progressToken`, log messages it opted in to with
`io.modelcontextprotocol/logLevel`, a `subscriptions/listen` stream's notifications) and last
the response; closing the response stream cancels the request (the proxy sends
`notifications/cancelled` upstream).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, Protocol

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.inbound import (
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp.types.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic_core import PydanticSerializationError

from .._message import _is_message, null_id_answer, null_id_request
from .._seam import GuardSeam, lists_first, never_written, server_wrote
from .._settings import HttpUpstream
from .._tracing import TraceStamp, TraceTap
from ..stdio._child import child_upstream
from ..upstream._direct import (
    TRACE_SCOPE,
    DirectUpstream,
    UpstreamFailed,
    UpstreamRefused,
    restore,
)
from ..upstream._headers import HeaderStamp, mentions_x_mcp_header
from ..upstream._pool import direct_available
from ..upstream._refused import Refused, write_refused
from ..upstream._session import http_upstream
from ._budget import ClientBudget, write_refusal

logger = logging.getLogger("conduit_mcp.proxy")

#: The largest request body accepted (bytes).
MAX_BODY: Final = 4 * 1024 * 1024
#: Seconds a request may go without its response or a message related to it before the
#: client gets an error (a `subscriptions/listen` stream has no limit); a tools/call that ends
#: so is audited `unanswered`, reason `timeout`. Read when a request starts (a test sets it).
REQUEST_TIMEOUT: Final = 300.0
#: Messages related to one request held for a client slower than its server; past it the
#: newest are dropped (progress and log messages are hints, the response is never dropped).
RELATED_BUFFER: Final = 256
#: Seconds without an event before a comment line keeps an open event stream alive (as the
#: SDK's server), and before a client that accepts `text/event-stream` gets one.
SSE_PING_INTERVAL: Final = 15.0
#: Seconds into a request on the pooled POST path before its client's leaving is watched
#: for (`_ClientWatch`): sooner, the answer has usually come and nothing needs watching.
WATCH_AFTER: Final = 0.01
#: Seconds a server process has to answer the proxy's `server/discover` (it may be starting).
DISCOVER_TIMEOUT: Final = 30.0
_DISCOVER_ID: Final = "conduit-mcp-discover"
#: `_meta` key naming the `subscriptions/listen` request a notification belongs to.
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"

_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_PING: Final = b": ping\r\n\r\n"
#: The largest piece of a response body handed to the HTTP server at once (bytes).
BODY_PIECE: Final = 1024 * 1024


class PerCaller(Protocol):
    """What the listener asks of a request's caller (`_server`: the tool policy of the
    authenticated caller, `_callers.CallerGate`)."""

    def answer(self, answer: Any, by_server: bool = False, unsent: bool = False) -> Any:
        """The request's answer (a message model, a plain object, or `None`) as the caller may
        see it; `by_server`: it is an error response the server wrote (never the guard's
        refusal, whatever its `data.source` names); `unsent`: it is the guard's answer to a
        request never written to the server (a refusal; the guard's error otherwise withheld
        the server's answer). Called too for an answer that came after its client left
        (recorded, not sent)."""

    def unanswered(self, reason: str) -> None:
        """The request was sent on to the server and no answer reached its caller: `reason`
        `caller_gone` (the client hung up first), `timeout` (`REQUEST_TIMEOUT`) or
        `session_closed` (the connection to the server ended with it in flight)."""

    def ended(self, verdict: str, reason: str | None) -> None:
        """The request ended without a JSON-RPC answer to read (an upstream's HTTP 401 or 403,
        an answer the guard dropped, an upstream that failed; a call never written to the
        server, `refused`, because its client left, `caller_gone`, or the listener stopped,
        `session_closed`, while the proxy listed the tools before it): recorded with
        `verdict` and `reason`."""

    def refused(self, reason: str) -> None:
        """The proxy answered the request itself at the front, never sending it on (the SDK's
        ladder rejected its headers or envelope, `ladder_reason`; the server behind speaks no
        2026-07-28, `unsupported_protocol_version`): a call is counted and audited `refused`
        with `reason`, as the listener's own refusals in a session are."""

    def listening(self, tell: Callable[[], None]) -> Callable[[], None]:
        """A `subscriptions/listen` stream that asked for `toolsListChanged` is open: `tell()`
        (called on the event loop) writes `notifications/tools/list_changed` on it; returns
        what to call when the stream ends."""


class _Exchange:
    """One request in flight: its ids, what relates to it, its answer."""

    __slots__ = (
        "answer",
        "by_server",
        "client_id",
        "listen",
        "logs",
        "receive",
        "send",
        "token",
        "unsent",
    )

    def __init__(self, client_id: Any, token: Any, logs: bool, listen: bool) -> None:
        self.client_id = client_id
        self.token = token  # the client's progress token, or None
        self.logs = logs  # opted in to log messages
        self.listen = listen  # a subscriptions/listen stream
        self.send: MemoryObjectSendStream[Any]
        self.receive: MemoryObjectReceiveStream[Any]
        self.send, self.receive = anyio.create_memory_object_stream[Any](RELATED_BUFFER)
        self.answer: Any = None
        self.by_server = False  # the answer is an error the server wrote (`server_wrote`)
        self.unsent = False  # the guard's answer to a request never written (`never_written`)

    def relate(self, message: Any) -> None:
        try:
            self.send.send_nowait(message)
        except anyio.WouldBlock:
            logger.debug("a message related to a request dropped: its client reads too slowly")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def finish(self, answer: Any) -> None:
        self.answer = answer
        self.send.close()


class ModernRouter:
    """The stateless side of the listener (see the module docstring).

    Args:
        seam: the guard.
        target: the server command or an `HttpUpstream`.
    """

    def __init__(
        self,
        seam: GuardSeam,
        target: Sequence[str] | HttpUpstream,
        budget: ClientBudget | None = None,
    ) -> None:
        self.seam = seam
        self.target = target
        #: each client's share of the guard's table of requests in flight (`_budget`).
        self.budget = budget if budget is not None else ClientBudget()
        #: an upstream's 401 / 403 answered to the client as sent (else as the proxy's error)
        self.pass_refusals = True
        self._write: Any = None
        self._waiting: dict[str, _Exchange] = {}
        self._ids = itertools.count(1)
        self._ready = anyio.Event()
        #: why the server process behind speaks no 2026-07-28 (`server/discover`'s answer),
        #: once known: stateless requests are then refused at the front (`handle`).
        self.legacy: str | None = None
        self._lock = anyio.Lock()
        #: the tasks that wait for the client of a request on the pooled POST path to leave
        self._watchers: set[asyncio.Task[None]] = set()
        #: the proxy's traces (`_tracing.Tracing`, set on the seam by `_launch`), else `None`
        self.tracing: Any = getattr(seam, "tracing", None)
        #: the pooled POST path for an HTTP upstream (`None`: the SDK's client, shared).
        self.direct = (
            DirectUpstream(seam, target)
            if isinstance(target, HttpUpstream) and direct_available(target.url)
            else None
        )

    async def aclose(self) -> None:
        """Close the pooled upstream connections (the shared SDK upstream ends with the
        listener's task group)."""
        for task in list(self._watchers):
            task.cancel()
        if self.direct is not None:
            with anyio.CancelScope(shield=True):
                await self.direct.pool.aclose()

    async def _connect(self, tg: anyio.abc.TaskGroup) -> None:
        async with self._lock:
            if self._ready.is_set() or self.legacy is not None:
                return
            await tg.start(self._run)

    async def _run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        upstream: AbstractAsyncContextManager[tuple[Any, Any]]
        if isinstance(self.target, HttpUpstream):
            upstream, kind = http_upstream(self.target), "streamable-http"
        else:
            upstream, kind = child_upstream(self.target), "stdio"
        tracing = self.tracing
        if tracing is not None:  # a span current where this task started is not its own
            tracing.clear()
        async with upstream as (read, write):
            if kind == "streamable-http":
                write = HeaderStamp(write, self.seam.raw_tool, lambda: None)
            if tracing is not None:  # beneath the guard: what it let through, as sent
                read = TraceTap(read, tracing, TRACE_SCOPE)
                write = TraceStamp(write, tracing, TRACE_SCOPE, stdio=kind == "stdio")
            if kind != "streamable-http":
                legacy = await _speaks_no_modern_version(read, write)
                if legacy is not None:
                    self.legacy = legacy
                    logger.warning(
                        "the server speaks no 2026-07-28 (server/discover: %s): stateless "
                        "requests are answered UNSUPPORTED_PROTOCOL_VERSION, clients start a "
                        "session instead",
                        legacy,
                    )
                    task_status.started()
                    return  # the server process is closed: it would never be initialized
            guarded_read, self._write = self.seam.wrap(read, write, transport=kind)  # type: ignore[arg-type]
            self._ready.set()
            task_status.started()
            while True:
                try:
                    item = await guarded_read.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                self._route(item)
        self._ready = anyio.Event()  # the next request reconnects
        for exchange in list(self._waiting.values()):
            exchange.finish(None)  # answered with an error: the upstream ended

    def _route(self, item: Any) -> None:
        """One message from the guard: a response to its request, a related notification to
        the stream of the request it relates to; anything else is dropped (no client can be
        told which request it belongs to)."""
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            exchange = self._waiting.pop(str(message.id), None)
            if exchange is not None:
                exchange.by_server = server_wrote(item)
                exchange.unsent = never_written(item)
                exchange.finish(self.seam.explain(item).message)
                return
        elif isinstance(message, JSONRPCNotification):
            related = self._related(message)
            if related is not None:
                exchange, rewritten = related
                exchange.relate(rewritten)
                return
        logger.debug("stateless upstream: a message no request waits for: dropped")

    def _related(self, message: JSONRPCNotification) -> tuple[_Exchange, Any] | None:
        params = message.params or {}
        if message.method == "notifications/progress":
            token = params.get("progressToken")
            exchange = self._waiting.get(token) if isinstance(token, str) else None
            if exchange is None or exchange.token is None:
                return None
            return exchange, _with_params(message, {**params, "progressToken": exchange.token})
        if message.method == "notifications/message":
            # Nothing on the wire names the request a log message belongs to: it goes to the
            # one request in flight that opted in, and is dropped when there are several
            # (another client's log never reaches the wrong client).
            opted = [e for e in self._waiting.values() if e.logs]
            return (opted[0], message) if len(opted) == 1 else None
        if message.method == "notifications/cancelled":
            # On stdio the server ends a subscriptions/listen stream so.
            exchange = self._waiting.get(str(params.get("requestId")))
            if exchange is not None and exchange.listen:
                self._waiting.pop(str(params.get("requestId")), None)
                exchange.finish(None)
            return None
        meta = params.get("_meta")
        if isinstance(meta, dict):
            subscription = meta.get(SUBSCRIPTION_ID_META_KEY)
            exchange = self._waiting.get(subscription) if isinstance(subscription, str) else None
            if exchange is not None and exchange.listen:
                meta = {**meta, SUBSCRIPTION_ID_META_KEY: exchange.client_id}
                return exchange, _with_params(message, {**params, "_meta": meta})
        return None

    async def handle(
        self,
        tg: anyio.abc.TaskGroup,
        raw_headers: list[tuple[str, str]],
        body: bytes,
        receive: Any,
        send: Any,
        peer: Any = None,
        headers: dict[str, str] | None = None,
        admitted: bool = False,
        per_caller: PerCaller | None = None,
    ) -> None:
        """Answer one stateless POST body on the ASGI `send`: 202 for a notification, a JSON
        object, or an event stream when the client accepts `text/event-stream` and messages
        related to the request come before its response (or it runs past
        `SSE_PING_INTERVAL`); 429 or 503 past the client's budget (`_budget`).

        Args:
            tg: where the shared upstream runs (started on the first request).
            raw_headers: the request's headers, names lower-cased, repeats kept.
            body: the request body.
            receive: the ASGI receive callable (watched for the client going away).
            send: the ASGI send callable.
            peer: the ASGI `scope["client"]` (who the client is, without credentials).
            headers: `raw_headers` as a dict (the last of repeats), when the caller has it.
            admitted: the caller counted the request in the budget already (before reading
                its body, by its `Mcp-Method` header, which the SDK's ladder then holds to
                the body's method) and releases it: not counted again.
            per_caller: the caller's hooks: its answer as it may see it, its listen streams
                told when a new tool policy changes its view (`PerCaller`).
        """
        if headers is None:
            headers = dict(raw_headers)
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            await write_json(
                send, 400, _error(None, PARSE_ERROR, "Parse error: the body is not JSON")
            )
            return
        if null_id_request(value):  # never a notification with its id dropped
            await write_json(send, 400, null_id_answer())
            return
        if self.direct is not None and _is_message(value):  # exactly what the SDK reads
            await self._handle_direct(
                tg,
                self.direct,
                value,
                raw_headers,
                headers,
                send,
                receive,
                peer,
                admitted,
                per_caller,
            )
            return
        rid = value.get("id") if isinstance(value, dict) else None
        try:
            message = jsonrpc_message_adapter.validate_python(value, by_name=False)
        except Exception:
            await write_json(send, 400, _error(_plain_id(rid), INVALID_REQUEST, "Invalid Request"))
            return
        if self.direct is not None:  # the SDK's reading of it
            value = message.model_dump(by_alias=True, exclude_unset=True)
            await self._handle_direct(
                tg,
                self.direct,
                value,
                raw_headers,
                headers,
                send,
                receive,
                peer,
                admitted,
                per_caller,
            )
            return
        if not isinstance(self.target, HttpUpstream) and not self._ready.is_set():
            await self._connect(tg)  # a server process: asked server/discover first
        if self.legacy is not None:
            rid = message.id if isinstance(message, JSONRPCRequest) else None
            requested = headers.get("mcp-protocol-version") or LATEST_MODERN_VERSION
            if per_caller is not None and rid is not None:  # a call never sent on: its row
                per_caller.refused("unsupported_protocol_version")
            await write_json(send, 400, unsupported_version(rid, requested, self.legacy))
            return
        if not isinstance(message, JSONRPCRequest):
            if (
                isinstance(message, JSONRPCNotification)
                and message.method != "notifications/cancelled"
            ):
                await self._forward(tg, message, headers)
            # A response has no request of the shared upstream to answer (2026-07-28 servers
            # send none); a posted cancellation could name another client's request (closing
            # the response stream is this version's cancellation): both acknowledged, dropped.
            await write_empty(send, 202)
            return
        rejection = _check_headers(value, raw_headers, self.seam)
        if rejection is not None:
            if per_caller is not None:  # a call never sent on: its row
                per_caller.refused(ladder_reason(rejection.code))
            error = _error(message.id, rejection.code, rejection.message, rejection.data)
            await write_json(send, 400, error)
            return
        if admitted:
            await self._exchange(tg, message, headers, receive, send, per_caller)
            return
        client = self.budget.client(headers.get("authorization"), peer)
        listen = message.method == "subscriptions/listen"
        refusal = self.budget.admit(client, listen)
        if refusal is not None:
            await write_refusal(send, message.id, refusal)
            return
        try:
            await self._exchange(tg, message, headers, receive, send, per_caller)
        finally:
            self.budget.release(client, listen)

    async def _handle_direct(
        self,
        tg: anyio.abc.TaskGroup,
        direct: DirectUpstream,
        value: dict[str, Any],
        raw_headers: list[tuple[str, str]],
        headers: dict[str, str],
        send: Any,
        receive: Any,
        peer: Any,
        admitted: bool = False,
        per_caller: PerCaller | None = None,
    ) -> None:
        """`handle` over the pooled POST path for `value`, a JSON-RPC message as the SDK reads
        it (`_message._is_message`)."""
        method = value.get("method")
        if method is None or "id" not in value:
            if method is not None and method != "notifications/cancelled":
                await direct.notify(
                    value, headers.get("authorization"), headers.get("mcp-protocol-version")
                )
            await write_empty(send, 202)  # as `handle`
            return
        rejection = _check_headers(value, raw_headers, self.seam, headers)
        if rejection is not None:
            if per_caller is not None:  # a call never sent on: its row
                per_caller.refused(ladder_reason(rejection.code))
            error = _error(value["id"], rejection.code, rejection.message, rejection.data)
            await write_json(send, 400, error)
            return
        if admitted:
            await self._exchange_direct(tg, direct, value, headers, receive, send, per_caller)
            return
        client = self.budget.client(headers.get("authorization"), peer)
        listen = method == "subscriptions/listen"
        refusal = self.budget.admit(client, listen)
        if refusal is not None:
            await write_refusal(send, value["id"], refusal)
            return
        try:
            await self._exchange_direct(tg, direct, value, headers, receive, send, per_caller)
        finally:
            self.budget.release(client, listen)

    async def _exchange(
        self,
        tg: anyio.abc.TaskGroup,
        message: JSONRPCRequest,
        headers: dict[str, str],
        receive: Any,
        send: Any,
        per_caller: PerCaller | None = None,
    ) -> None:
        accepts_json, accepts_sse = accepted(headers.get("accept", ""))
        params = message.params or {}
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, str | int):
            token = None
        upstream_id = f"conduit-{next(self._ids)}"
        listen = message.method == "subscriptions/listen"
        exchange = _Exchange(
            message.id, token, isinstance(meta, dict) and LOG_LEVEL_META_KEY in meta, listen
        )
        if token is not None:  # unique upstream: two clients may both use token 1
            meta = {**meta, "progressToken": upstream_id}  # type: ignore[dict-item]
            params = {**params, "_meta": meta}
        request = message.model_copy(update={"id": upstream_id, "params": params or message.params})
        self._waiting[upstream_id] = exchange
        streaming = gone = timed_out = forwarded = False
        ended = None
        if per_caller is not None and listen and _wants_list_changed(params):
            notice = JSONRPCNotification(
                jsonrpc="2.0",
                method="notifications/tools/list_changed",
                params={"_meta": {SUBSCRIPTION_ID_META_KEY: message.id}},
            )
            ended = per_caller.listening(lambda: exchange.relate(notice))
        tracing = self.tracing
        caller_left = _Departure(per_caller)
        left = False  # the client left while the proxy listed the tools before its call
        try:
            if not self._ready.is_set():
                await self._connect(tg)
            token = None
            if tracing is not None:  # current while the guard decides (its spans' parent)
                token = _traced(tracing, message, upstream_id, headers)
            try:
                if message.method == "tools/call" and lists_first(self.seam, params):
                    # The proxy's own tools/list first: its client may leave meanwhile.
                    listing = functools.partial(self.seam.before_call, request, self._write)
                    _, left = await _unless_left(listing, receive, caller_left)
                else:
                    await self.seam.before_call(request, self._write)
                if not left:  # a call whose client left is never written
                    forwarded = True  # from here the server may get it: every end is audited
                    await self._forward(tg, request, headers)
            finally:
                if token is not None:
                    tracing.leave(token)
            if left:
                gone = True
            else:
                streaming, gone, timed_out = await _relay_related(
                    exchange, receive, send, accepts_sse, listen
                )
        except BaseException:
            # Cancelled (the listener stopping) or failed with the call perhaps sent: its row
            # (one the guard refused on the way counts as sent: the row says less was stopped);
            # a call not handed to the guard yet (the proxy's own listing first) was never
            # written: `refused`.
            if per_caller is not None and not caller_left.recorded:
                if forwarded:
                    per_caller.unanswered("session_closed")
                else:
                    per_caller.ended("refused", "session_closed")
            raise
        finally:
            if tracing is not None:
                _traced_end(tracing, upstream_id, exchange.answer, gone)
            if ended is not None:
                ended()
            still_waiting = self._waiting.pop(upstream_id, None) is not None
            exchange.send.close()
            exchange.receive.close()
            if (
                still_waiting
                and forwarded
                and self._write is not None
                and (gone or exchange.answer is None)
            ):
                await self._cancel_upstream(upstream_id)
        answer = exchange.answer
        if answer is not None:
            answer = answer.model_copy(update={"id": message.id})
        if per_caller is not None:
            if answer is not None:  # its own verdict, whether or not its client is still there
                answer = per_caller.answer(answer, exchange.by_server, exchange.unsent)
            elif left:  # never written to the server: its row written when its client left
                pass
            elif gone:
                per_caller.unanswered("caller_gone")
            elif not listen:  # no answer by the time limit, or the server's connection ended
                per_caller.unanswered("timeout" if timed_out else "session_closed")
        if gone:
            return
        await _answer(send, message.id, answer, streaming, listen, accepts_json, accepts_sse)

    async def _exchange_direct(
        self,
        tg: anyio.abc.TaskGroup,
        direct: DirectUpstream,
        value: dict[str, Any],
        headers: dict[str, str],
        receive: Any,
        send: Any,
        per_caller: PerCaller | None = None,
    ) -> None:
        """`_exchange` over the pooled POST path (`upstream/_direct`): the guard on the request, one
        POST, the answer's messages through the guard, the related ones streamed to the
        client as they come."""
        accepts_json, accepts_sse = accepted(headers.get("accept", ""))
        client_id = value["id"]
        upstream_id = direct.upstream_id()
        authorization = headers.get("authorization")
        version = headers.get("mcp-protocol-version")
        tracing = self.tracing
        token = trace = None
        if tracing is not None:  # current while the guard decides (its spans' parent)
            token = _traced(tracing, value, upstream_id, headers)
        gate = functools.partial(direct.gate, {**value, "id": upstream_id}, authorization, version)
        caller_left = _Departure(per_caller)
        left = False  # the client left while the proxy listed the tools before its call
        try:
            if value.get("method") == "tools/call" and lists_first(self.seam, value.get("params")):
                # The proxy's own tools/list first (its POSTs): its client may leave meanwhile.
                (action, request), left = await _unless_left(gate, receive, caller_left)
            else:
                action, request = await gate()
        except BaseException:
            # Cancelled (the listener stopping) or failed before the POST: never written.
            if per_caller is not None and not caller_left.recorded:
                per_caller.ended("refused", "session_closed")
            raise
        finally:
            if token is not None:
                tracing.leave(token)
        if left:  # never POSTed (its row written when its client left)
            if tracing is not None:
                tracing.answered(upstream_id, "cancelled", scope=TRACE_SCOPE)
            if action != "answer":  # the guard passed it: it stops waiting for it
                with anyio.CancelScope(shield=True):
                    await direct.forget(upstream_id)
            return
        assert request is not None
        if tracing is not None:
            trace = _trace_headers(tracing, action, request, upstream_id)
        if action == "answer":  # never written to the server: the guard's refusal
            refusal = restore(request, upstream_id, client_id)
            if per_caller is not None:
                refusal = per_caller.answer(refusal, unsent=True)
            await write_json(send, 200, refusal)
            return
        listen = value.get("method") == "subscriptions/listen"
        stream = _EventStream(send, accepts_sse)
        answer: dict[str, Any] | None = None
        by_server = False  # the answer is an error the upstream wrote
        failure: str | None = None
        refused: Refused | None = None
        #: the audit's verdict and reason when no JSON-RPC answer can say (`PerCaller.ended`)
        outcome: tuple[str, str | None] | None = None

        async def related(message: dict[str, Any]) -> None:
            await stream.event(restore(message, upstream_id, client_id))

        if listen:  # the guard's own list_changed goes on this stream too
            direct.listening[upstream_id] = lambda message: tg.start_soon(
                _notice, stream, restore(message, upstream_id, client_id)
            )
        ended = None
        if per_caller is not None and listen and _wants_list_changed(value.get("params")):
            notice = {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: client_id}},
            }

            def tell() -> None:
                tg.start_soon(_notice, stream, notice)

            ended = per_caller.listening(tell)

        try:
            with anyio.CancelScope() as scope:
                watch = _ClientWatch(
                    receive, stream, scope, None if listen else REQUEST_TIMEOUT, self._watchers
                )
                try:
                    answer, by_server = await direct.post(
                        request, authorization, version, related, trace
                    )
                    if answer is None:
                        failure = "the guard withheld the upstream server's answer"
                        outcome = ("withheld", None)  # the server answered; the guard dropped it
                    else:
                        answer = restore(answer, upstream_id, client_id)
                except UpstreamRefused as exc:  # 401 / 403: the client gets it as sent
                    logger.warning("stateless upstream: %s", exc)
                    refused, failure = exc.refused, str(exc)
                    outcome = ("error", f"upstream_http_{exc.refused.status}")
                except UpstreamFailed as exc:
                    if not (listen and stream.streaming):
                        logger.warning("stateless upstream: %s", exc)
                        failure = str(exc)
                finally:
                    watch.stop()
            if watch.failure is not None and answer is None:
                failure = watch.failure
                outcome = ("unanswered", "timeout")
        except BaseException:
            # Cancelled (the listener stopping) or failed with the POST perhaps made: its row.
            if per_caller is not None:
                per_caller.unanswered("session_closed")
            raise
        finally:
            if tracing is not None:  # not answered (nothing when `_guarded` ended it)
                verdict = "error" if failure is not None else "cancelled"
                tracing.answered(upstream_id, verdict, scope=TRACE_SCOPE)
            if ended is not None:
                ended()
            direct.listening.pop(upstream_id, None)
            if answer is None:
                with anyio.CancelScope(shield=True):
                    await direct.forget(upstream_id)
        if outcome is None and answer is None and watch.gone:
            outcome = ("unanswered", "caller_gone")
        if per_caller is not None:
            if outcome is not None:
                per_caller.ended(*outcome)
            elif answer is not None:  # its own verdict, whether or not its client is still there
                answer = per_caller.answer(answer, by_server)
        if watch.gone:
            stream.done = True
            return
        if refused is not None and not stream.streaming and self.pass_refusals:
            stream.done = True
            await write_refused(send, refused, client_id)
            return
        if answer is None and failure is not None:
            answer = _error(client_id, -32603, f"conduit-mcp proxy: {failure}")
            if per_caller is not None and outcome is None:  # the upstream failed: no answer
                per_caller.ended("error", "upstream_failed")
        status = 502 if failure is not None else 200
        stream.done = True  # no event or keep-alive ping from now on
        if stream.lock is None:  # nothing else ever wrote: nothing to wait for
            await _answer(
                send, client_id, answer, stream.streaming, listen, accepts_json, accepts_sse, status
            )
            return
        async with stream.lock:  # a ping being written ends before the last event
            await _answer(
                send, client_id, answer, stream.streaming, listen, accepts_json, accepts_sse, status
            )

    async def _cancel_upstream(self, upstream_id: str) -> None:
        cancel = JSONRPCNotification(
            jsonrpc="2.0",
            method="notifications/cancelled",
            params={"requestId": upstream_id, "reason": "the client closed the response stream"},
        )
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await self._write.send(SessionMessage(cancel))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

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


class _EventStream:
    """The response of one request as an event stream, started at its first event or
    keep-alive ping (a client that does not accept `text/event-stream` gets neither: the
    response alone); sends from the request's task and a ping never interleave (`lock`, made
    at the first event or ping: a request answered at once never needs it)."""

    def __init__(self, send: Any, accepts_sse: bool) -> None:
        self._send = send
        self._accepts_sse = accepts_sse
        self.lock: anyio.Lock | None = None
        self.streaming = False
        self.done = False  # the response is being written: no more events or pings
        self.quiet = 0.0  # seconds since the last event

    async def event(self, message: Any) -> None:
        self.quiet = 0.0
        if self._accepts_sse:
            await self._write(sse_event(message))

    async def ping(self) -> None:
        if self._accepts_sse:
            await self._write(_PING)

    async def _write(self, data: bytes) -> None:
        if self.lock is None:
            self.lock = anyio.Lock()
        async with self.lock:
            if self.done:
                return
            if not self.streaming:
                await send_sse_start(self._send)
                self.streaming = True
            await self._send({"type": "http.response.body", "body": data, "more_body": True})


async def _notice(stream: _EventStream, message: dict[str, Any]) -> None:
    """One of the guard's own notifications on a listen stream (a task of the listener's:
    a client gone meanwhile ends it quietly)."""
    try:
        await stream.event(message)
    except Exception:  # the client's connection is gone
        logger.debug("a list_changed notice for a stream that closed: dropped")


class _Cancellable(Protocol):
    """What `_ClientWatch` cancels: an `anyio.CancelScope`, or a lean request's `Waiter`."""

    def cancel(self) -> Any: ...


class _ClientWatch:
    """The client of one request in flight on the pooled POST path: its leaving (the ASGI
    `http.disconnect` before the response is written) cancels `scope`, which closes the
    upstream POST (2026-07-28's cancellation); each `SSE_PING_INTERVAL` a keep-alive ping goes
    on the event stream, and past `limit` seconds without an event (`None`: no limit) the
    request fails with `failure`.

    One asyncio task waits on `receive` and ends by itself (the server reports the
    connection's end once the response is complete), started `WATCH_AFTER` seconds into the
    request: an answer sooner than that (most are) needs no task at all, and a client that
    left meanwhile is seen as soon as the task starts. The interval is a timer of the event
    loop, not a task: nothing is cancelled per request.

    Args:
        receive: the request's ASGI receive callable.
        stream: the request's `_EventStream`.
        scope: the scope of the upstream POST (anything with `cancel()`: a lean request's
            `Waiter`, whose wait it ends).
        limit: seconds of quiet before the request fails, or `None`.
        watchers: where the waiting task is kept while it runs (the router cancels what is
            left when it closes).
        after: seconds into the request before the task starts (`WATCH_AFTER`).
    """

    def __init__(
        self,
        receive: Any,
        stream: _EventStream,
        scope: _Cancellable,
        limit: float | None,
        watchers: set[asyncio.Task[None]],
        after: float = WATCH_AFTER,
    ) -> None:
        self.gone = False
        self.failure: str | None = None
        self._stream = stream
        self._scope = scope
        self._limit = limit
        self._loop = asyncio.get_running_loop()
        self._pings: set[asyncio.Task[None]] = set()
        self._receive = receive
        self._watchers = watchers
        self._after = min(after, SSE_PING_INTERVAL)
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(self._after, self._watch)

    def _watch(self) -> None:
        self._timer = None
        task = self._loop.create_task(self._disconnect(self._receive))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)
        interval = SSE_PING_INTERVAL
        self._timer = self._loop.call_later(max(interval - self._after, 0.0), self._quiet)

    async def _disconnect(self, receive: Any) -> None:
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        except Exception:  # the server's receive failed: as good as gone
            logger.debug("the client's connection could not be read", exc_info=True)
        if not self._stream.done:
            self.gone = True
            self._scope.cancel()

    def _quiet(self) -> None:
        self._timer = None
        stream = self._stream
        if stream.done or self.gone:
            return
        stream.quiet += SSE_PING_INTERVAL
        if self._limit is not None and stream.quiet >= self._limit:
            self.failure = "the upstream server did not answer in time"
            self._scope.cancel()
            return
        ping = self._loop.create_task(self._ping())
        self._pings.add(ping)
        ping.add_done_callback(self._pings.discard)
        self._timer = self._loop.call_later(SSE_PING_INTERVAL, self._quiet)

    async def _ping(self) -> None:
        try:
            await self._stream.ping()
        except Exception:  # the client went away: its `http.disconnect` says so
            logger.debug("a keep-alive ping could not be written", exc_info=True)

    def stop(self) -> None:
        """No more pings or time limit (the POST ended)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


async def _relay_related(
    exchange: _Exchange,
    receive: Any,
    send: Any,
    accepts_sse: bool,
    listen: bool,
) -> tuple[bool, bool, bool]:
    """Messages related to the request onto its event stream (started at the first one, or
    at the first keep-alive ping) until its answer, its client leaving, or
    `REQUEST_TIMEOUT` of quiet. Returns `(streaming, gone, timed_out)`: an event stream was
    started, the client left, the time limit ended the wait."""
    streaming = gone = timed_out = False
    async with anyio.create_task_group() as watch:

        async def disconnected() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            watch.cancel_scope.cancel()

        watch.start_soon(disconnected)
        limit = None if listen else REQUEST_TIMEOUT
        quiet = 0.0
        while True:
            with anyio.move_on_after(SSE_PING_INTERVAL) as waited:
                try:
                    related = await exchange.receive.receive()
                except anyio.EndOfStream:
                    break
            if waited.cancelled_caught:
                quiet += SSE_PING_INTERVAL
                if limit is not None and quiet >= limit:
                    timed_out = True
                    break
                if accepts_sse:
                    if not streaming:
                        await send_sse_start(send)
                        streaming = True
                    await send({"type": "http.response.body", "body": _PING, "more_body": True})
                continue
            quiet = 0.0
            if not accepts_sse:
                continue  # a JSON-only client gets the response alone
            if not streaming:
                await send_sse_start(send)
                streaming = True
            await send(
                {"type": "http.response.body", "body": sse_event(related), "more_body": True}
            )
        watch.cancel_scope.cancel()
    return streaming, gone, timed_out


class _Departure:
    """What `_unless_left` calls when a call's client leaves during the proxy's own listing
    before it: the call's row, `refused` `caller_gone` (it is never sent on); `recorded` then
    tells the request's end that its row is written."""

    def __init__(self, per_caller: PerCaller | None) -> None:
        self._per_caller = per_caller
        self.recorded = False

    def __call__(self) -> None:
        self.recorded = True
        if self._per_caller is not None:
            self._per_caller.ended("refused", "caller_gone")


async def _unless_left(
    step: Callable[[], Awaitable[Any]], receive: Any, left: Callable[[], None]
) -> tuple[Any, bool]:
    """`await step()` while the request's ASGI `receive` is watched for its client leaving
    (`http.disconnect`, its body read already): `left()` is called the moment it leaves. For
    a wait before a call is written to the server (the proxy's own listing): the call's row
    is written then, and the call is never sent. The step itself goes on to its end (a
    listing written, or POSTed on the pooled path, ends as it would have, its answer read by
    the guard; the request holds its client's share until then, as before).

    Returns:
        `(the step's result, whether the client left)`.

    Raises:
        What the step raised.
    """
    gone = False
    result: Any = None
    failed: Exception | None = None
    async with anyio.create_task_group() as watch:

        async def disconnected() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            left()

        watch.start_soon(disconnected)
        try:
            result = await step()
        except Exception as exc:  # raised as the step raised it (not in an exception group)
            failed = exc
        watch.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return result, gone


async def _answer(
    send: Any,
    client_id: Any,
    answer: Any,
    streaming: bool,
    listen: bool,
    accepts_json: bool,
    accepts_sse: bool,
    status: int = 200,
) -> None:
    """The end of an exchange: the response as the last event, as JSON, or (`answer` `None`
    outside a listen stream) an error: the upstream did not answer. `status`: the HTTP status
    of a JSON answer."""
    if answer is None and not (listen and streaming):
        answer, status = _error(client_id, -32603, "The upstream server did not answer"), 502
    if streaming:
        if answer is None:
            await send_body(send, b"")
        else:
            await send_last_event(send, answer)
    elif status != 200:
        await write_json(send, status, answer)
    elif accepts_json or not accepts_sse:
        await write_json(send, 200, answer)
    else:  # the client takes only an event stream
        await send_sse_start(send)
        await send_last_event(send, answer)


def accepted(accept: str) -> tuple[bool, bool]:
    """`(accepts application/json, accepts text/event-stream)` from an `Accept` value (RFC 9110
    section 12.5.1, wildcards included, `q=0` as refused). No `Accept` accepts both. A short
    value is remembered (clients send a few, again and again); a long one is never kept."""
    if len(accept) <= _ACCEPT_CACHED:
        return _accepted_cached(accept)
    return _accepted(accept)


#: The longest `Accept` value `accepted` remembers (256 of them at most: 64 KiB in all).
_ACCEPT_CACHED: Final = 256


@functools.lru_cache(maxsize=256)
def _accepted_cached(accept: str) -> tuple[bool, bool]:
    return _accepted(accept)


def _accepted(accept: str) -> tuple[bool, bool]:
    if not accept.strip():
        return True, True
    types = set()
    for part in accept.split(","):
        media, _, rest = part.partition(";")
        if rest.replace(" ", "").lower() in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            continue
        types.add(media.strip().lower())
    wild = "*/*" in types
    return (
        wild or bool(types & {"application/json", "application/*"}),
        wild or bool(types & {"text/event-stream", "text/*"}),
    )


def dump(message: Any) -> bytes:
    """A JSON-RPC message model or a plain object as JSON bytes (`by_alias`, unset fields left
    out, as the SDK writes), made once (no intermediate `str` of a large result); a lone
    surrogate, which UTF-8 cannot carry, is written as a `\\u` escape."""
    if isinstance(message, dict):
        try:
            return orjson.dumps(message)
        except orjson.JSONEncodeError:  # a lone surrogate read from a \\ud800 escape
            return json.dumps(message).encode()
    try:
        data: bytes = message.__pydantic_serializer__.to_json(
            message, by_alias=True, exclude_unset=True
        )
        return data
    except PydanticSerializationError:
        plain = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return json.dumps(plain).encode()


def sse_event(message: Any) -> bytes:
    """One SSE `message` event carrying `message` (WHATWG HTML "Server-sent events": the JSON
    has no line break, so it is one `data:` line)."""
    return b"event: message\r\ndata: " + dump(message) + b"\r\n\r\n"


async def send_body(send: Any, data: bytes, *, more_body: bool = False) -> None:
    """`data` as ASGI body messages of at most `BODY_PIECE` bytes: the server's flow control
    (it waits for the socket to drain between messages) then bounds what it buffers."""
    if len(data) <= BODY_PIECE:  # one message, `data` itself (no copy)
        await send({"type": "http.response.body", "body": data, "more_body": more_body})
        return
    view = memoryview(data)
    for start in range(0, max(len(data), 1), BODY_PIECE):
        last = start + BODY_PIECE >= len(data)
        piece = bytes(view[start : start + BODY_PIECE])
        await send(
            {"type": "http.response.body", "body": piece, "more_body": more_body or not last}
        )


async def send_last_event(send: Any, message: Any) -> None:
    """`message` as the event that ends an event stream, its JSON made once and sent in
    pieces (`send_body`)."""
    await send(
        {"type": "http.response.body", "body": b"event: message\r\ndata: ", "more_body": True}
    )
    await send_body(send, dump(message), more_body=True)
    await send({"type": "http.response.body", "body": b"\r\n\r\n", "more_body": False})


async def send_sse_start(send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})


async def write_json(send: Any, status: int, body: Any) -> None:
    """An `application/json` response."""
    data = dump(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send_body(send, data)


async def write_empty(send: Any, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _traced(tracing: Any, request: Any, upstream_id: str, headers: dict[str, str]) -> Any:
    """Start the span of a stateless request (`request`: the client's, a model or a `dict`;
    the span kept under its `upstream_id`), its parent from the `traceparent` header, else
    `_meta.traceparent`; make it current: the token to leave (`None`: no span)."""
    if not isinstance(request, dict):
        request = {"method": request.method, "id": request.id, "params": request.params}
    version = headers.get("mcp-protocol-version")
    span = tracing.request(
        request, headers, version, scope=TRACE_SCOPE, header_first=True, key=upstream_id
    )
    return tracing.enter(span) if span is not None else None


def _trace_headers(
    tracing: Any, action: str, request: dict[str, Any], upstream_id: str
) -> dict[str, str] | None:
    """The guard's decision on a stateless request on the pooled POST path: its answer (a
    refusal) ends the span, else the `traceparent` header the POST carries."""
    if action == "answer":
        error = request.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        reason = data.get("reason") if isinstance(data, dict) else None
        reason = reason if isinstance(reason, str) else None
        tracing.answered(upstream_id, "refused", reason, scope=TRACE_SCOPE)
        return None
    span = tracing.sent(upstream_id, TRACE_SCOPE)
    return tracing.traceparent(span) if span is not None else None


def _traced_end(tracing: Any, upstream_id: str, answer: Any, gone: bool) -> None:
    """End the span of a stateless request on the shared upstream: by its answer (the verdict
    `Tracing.verdict` reads), `cancelled` when its client left, `error` when none came."""
    if answer is None or gone:
        tracing.answered(upstream_id, "cancelled" if gone else "error", scope=TRACE_SCOPE)
        return
    error = getattr(answer, "error", None)
    plain = error.model_dump(exclude_none=True) if error is not None else None
    ended = tracing.verdict(upstream_id, answer, plain, TRACE_SCOPE)
    if ended is not None:
        tracing.answered(upstream_id, *ended, scope=TRACE_SCOPE)


def _with_params(message: JSONRPCNotification, params: dict[str, Any]) -> JSONRPCNotification:
    return message.model_copy(update={"params": params})


#: The call audit's reason for a request the SDK's ladder rejected, by its JSON-RPC error code
#: (2026-07-28: HEADER_MISMATCH -32020, UNSUPPORTED_PROTOCOL_VERSION -32022; a missing
#: `_meta` key, -32602); any other code: `invalid_request`.
_LADDER_REASONS: Final = {
    HEADER_MISMATCH: "header_mismatch",
    UNSUPPORTED_PROTOCOL_VERSION: "unsupported_protocol_version",
    INVALID_PARAMS: "invalid_params",
}


def ladder_reason(code: int) -> str:
    """The call audit's reason (verdict `refused`) for a request the SDK's inbound ladder
    rejected with the JSON-RPC error `code` (`_LADDER_REASONS`, else `invalid_request`)."""
    return _LADDER_REASONS.get(code, "invalid_request")


def _check_headers(
    body: dict[str, Any],
    raw_headers: list[tuple[str, str]],
    seam: GuardSeam,
    headers: dict[str, str] | None = None,
) -> InboundLadderRejection | None:
    """The SDK's modern ladder: envelope, header/body agreement, version; then Mcp-Param-*.
    `headers`: `raw_headers` as a dict, when the caller has it."""
    duplicated = find_duplicated_routing_header(raw_headers)
    if duplicated is not None:
        return InboundLadderRejection(code=-32020, message=f"duplicated header {duplicated}")
    if headers is None:
        headers = dict(raw_headers)
    verdict = classify_inbound_request(body, headers=headers)
    if isinstance(verdict, InboundLadderRejection):
        return verdict
    params = body.get("params") or {}
    if body.get("method") == "tools/call" and isinstance(params.get("name"), str):
        definition = seam.raw_tool(params["name"])
        schema = definition.get("inputSchema") if isinstance(definition, dict) else None
        arguments = params.get("arguments")
        if isinstance(schema, dict) and mentions_x_mcp_header(schema):
            pairs = [(name, value) for name, value in raw_headers]
            return validate_mcp_param_headers(
                schema, arguments if isinstance(arguments, dict) else {}, dict(pairs)
            )
    return None


async def _speaks_no_modern_version(read: Any, write: Any) -> str | None:
    """Ask a server process `server/discover` (MCP 2026-07-28: servers MUST implement it; a
    client MAY send it first, as the SDKs' clients do before falling back to `initialize`);
    its answer, on the raw streams before the guard sees any message. Returns why the server
    speaks no version of `MODERN_PROTOCOL_VERSIONS` (an error, or a result that names none),
    or `None`: it does, or it did not answer within `DISCOVER_TIMEOUT` seconds (then its
    requests go on as before). Other messages meanwhile are dropped (no client is waiting)."""
    request = JSONRPCRequest(
        jsonrpc="2.0",
        id=_DISCOVER_ID,
        method="server/discover",
        params={
            "_meta": {
                PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
                CLIENT_CAPABILITIES_META_KEY: {},
                CLIENT_INFO_META_KEY: {"name": "conduit-mcp-proxy", "version": "0"},
            }
        },
    )
    try:
        await write.send(SessionMessage(request))
        with anyio.move_on_after(DISCOVER_TIMEOUT):
            while True:
                item = await read.receive()
                message = getattr(item, "message", None)
                if isinstance(message, JSONRPCError) and message.id == _DISCOVER_ID:
                    return f"error {message.error.code}: {message.error.message}"[:200]
                if isinstance(message, JSONRPCResponse) and message.id == _DISCOVER_ID:
                    versions = message.result.get("supportedVersions")
                    if isinstance(versions, list) and set(versions) & set(MODERN_PROTOCOL_VERSIONS):
                        return None
                    return f"supportedVersions {versions!r}"[:200]
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return None  # the process ended: its requests fail as before
    logger.warning("the server did not answer server/discover in %g s", DISCOVER_TIMEOUT)
    return None


def unsupported_version(rid: Any, requested: str, why: str) -> dict[str, Any]:
    """The answer to a 2026-07-28 request when the server behind speaks no such version:
    UNSUPPORTED_PROTOCOL_VERSION (-32022, MCP 2026-07-28 schema
    `UnsupportedProtocolVersionError`: `data.requested`, `data.supported`) naming the versions
    the listener still serves, in a session (an `initialize`), which the server may speak."""
    return _error(
        _plain_id(rid),
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version: the server behind this proxy does not speak "
        f"{requested} ({why}); start a session with initialize at a version of data.supported",
        {"requested": requested, "supported": sorted(HANDSHAKE_PROTOCOL_VERSIONS)},
    )


def _wants_list_changed(params: Any) -> bool:
    """Whether a `subscriptions/listen` request's params ask for `toolsListChanged` (2026-07-28
    schema `SubscriptionFilter`)."""
    wanted = params.get("notifications") if isinstance(params, dict) else None
    return isinstance(wanted, dict) and wanted.get("toolsListChanged") is True


def _plain_id(rid: Any) -> Any:
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}
