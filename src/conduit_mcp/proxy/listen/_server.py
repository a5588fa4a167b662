"""The HTTP listener: `conduit-mcp proxy --listen HOST:PORT` serves MCP over Streamable HTTP to
its clients, each session with its own upstream (a child process per session, or a session on
the `--upstream` server), one guard for all.

Not a public module.

Spec: MCP 2025-11-25 basic/transports "Streamable HTTP" (POST with JSON or SSE responses, the
GET stream, `Mcp-Session-Id`, DELETE, `MCP-Protocol-Version`; "Security Warning": validate
`Origin`, bind to localhost when local) through the SDK's own `StreamableHTTPServerTransport`,
but for a session's POST of one message to a server process, which the listener answers itself
(`_lean`: the SDK transport's per-POST machinery was most of a call's CPU);
`Authorization` is forwarded to an HTTP upstream per request, never logged. A session belongs
to the credential that opened it (`_budget`'s keyed hash; or to none): a request naming it with
another credential, or none, is answered 404 as an unknown session ("Session Management": the
client then starts a new one), before its body is read. Sessions are budgeted per client, per
address and in all (`_budget`); past a cap the session idle the longest makes room. Each
session stamps the version it negotiated on its own upstream requests.
2026-07-28 stateless requests go to `_stateless.ModernRouter` (one shared upstream, or one
pooled POST each to an HTTP upstream: `upstream/_direct`); a version the proxy knows neither way
is answered UNSUPPORTED_PROTOCOL_VERSION (-32022). With traces on (`seam.tracing`,
`_tracing.py`) each request is a span, keyed by its session (ids overlap between sessions),
continuing the `traceparent` header's trace (else `_meta.traceparent`'s), passed upstream.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import secrets
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
import orjson
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types.jsonrpc import (
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request

from .._message import null_id_answer, null_id_request
from .._metrics import Metrics
from .._pump import pump
from .._seam import GuardSeam, answer_key
from .._settings import HttpUpstream
from .._tracing import TraceEnd, TraceStamp, TraceTap
from ..stdio._child import child_upstream
from ..upstream._headers import HeaderStamp
from ..upstream._refused import SCOPE_KEY, RefusalSlot, UpstreamMetadata, serve_metadata
from ..upstream._session import http_upstream
from ._auth import Authenticator, AuthError, AuthMiddleware
from ._budget import MAX_SESSIONS, ClientBudget, Refusal, Who, shown, write_refusal
from ._callers import IDENTITY_KEY, CallerGate, caller_of, shown_caller
from ._gated import GatedSink, InUse, id_in_use
from ._lean import Inbox, Waiter, lean_message
from ._lean import accept as lean_accept
from ._lean import answer as lean_answer
from ._limits import HttpLimits
from ._protocol import http_protocol
from ._stateless import MAX_BODY, ModernRouter

logger = logging.getLogger("conduit_mcp.proxy")

MCP_PATH: Final = "/mcp"
#: Headers of a downstream request passed on to an HTTP upstream with the message.
_FORWARDED: Final = ("authorization",)
#: Seconds a stopping listener (SIGINT / SIGTERM) waits for the requests under way.
SHUTDOWN_GRACE: Final = 5
#: The largest body of a request that opens a session (an initialize request is small).
MAX_OPENING_BODY: Final = 1024 * 1024
#: Seconds a session may stay without a request in flight before it is closed.
SESSION_IDLE_TIMEOUT: Final = 30 * 60.0
#: Seconds without a POST in flight after which a session may be closed to make room for a new
#: one when a session cap is reached (the longest idle first; its open GET stream, if any,
#: does not count as activity).
SESSION_IDLE_UNDER_PRESSURE: Final = 60.0
#: Client messages waiting for a session's pump (from lean requests and the SDK's transport).
_INBOX: Final = 64
#: The headers the SDK's Host / Origin / content-type check reads (the first of repeats).
_CHECKED_HEADERS: Final = ("content-type", "host", "origin")
#: Combinations of those that passed, remembered (64 at most, each at most 512 characters).
_PASSED_KEPT: Final = 64
_PASSED_LONGEST: Final = 512


class _Session:
    """One open session: its transport, who opened it, its activity, its version, its
    lean requests (`_lean`).

    Attributes:
        transport: the SDK's server transport of the session.
        owner: the client that opened it (`_budget.Who`: its credential's keyed hash, or
            none, and its address).
        counted: the session holds its owner's count in the budget (from its accepted
            `initialize` until it is forgotten; before, the opening request holds it).
        posts: POST requests of the session in flight now.
        idle_since: the event loop's time its last POST ended (or it opened).
        version: the protocol version its upstream's `initialize` answer chose (`None`
            before it): stamped on its own upstream requests, never another session's.
        initialize_ids: ids of the session's `initialize` requests sent upstream.
        idle: cancelled once no request (an open GET stream included) has been in flight
            for `SESSION_IDLE_TIMEOUT` seconds: the session's task ends (its own, not the
            SDK transport's `idle_timeout`, which counts only what the transport serves).
        in_flight: requests of the session in flight now (POST, GET, DELETE).
        waiting: lean requests in flight by id (`_lean.Waiter`).
        inbox: the send side its pump reads (`None` before it runs and after it ends).
        related: its requests in flight as the pump sent them (`_Related`; `None` before
            the pump runs).
    """

    __slots__ = (
        "caller",
        "counted",
        "idle",
        "idle_since",
        "in_flight",
        "inbox",
        "initialize_ids",
        "owner",
        "posts",
        "related",
        "transport",
        "version",
        "waiting",
    )

    def __init__(self, transport: StreamableHTTPServerTransport, owner: Who) -> None:
        self.transport = transport
        self.owner = owner
        self.counted = False
        self.posts = 0
        self.idle_since = anyio.current_time()
        self.version: str | None = None
        self.initialize_ids: set[Any] = set()
        #: who opened it (`--auth jwt`), else `None`
        self.caller: Any = None
        self.idle = anyio.CancelScope()
        self.in_flight = 0
        self.waiting: dict[Any, Waiter] = {}
        self.inbox: Any = None
        self.related: _Related | None = None

    def begin(self) -> None:
        """A request of the session is in flight: no idle countdown meanwhile."""
        self.in_flight += 1
        if self.in_flight == 1:  # else no countdown runs (`end` starts one at 0 only)
            self.idle.deadline = math.inf

    def end(self) -> float:
        """A request ended: the idle countdown starts again when none is left. Returns the
        event loop's time now."""
        now = asyncio.get_running_loop().time()  # `anyio.current_time()`, without its lookup
        self.in_flight -= 1
        if not self.in_flight:
            self.idle.deadline = now + SESSION_IDLE_TIMEOUT
        return now


class Listener:
    """The ASGI application: `/mcp` (the MCP endpoint), `/healthz`, `/metrics`.

    Args:
        seam: the guard (shared by every session).
        target: the server command (a child process per session) or an `HttpUpstream`.
        host, port: where it listens (for the DNS-rebinding check of `Host` and `Origin`).
        max_sessions: sessions open at once when `budget` is not given (else the budget's
            `max_sessions`); past it a new one is refused with 503.
        metrics: served at `/metrics` (Prometheus text format) when given.
        budget: each client's caps, stateless requests and sessions (`_budget`; default: its
            defaults).
        limits: the HTTP bounds (`_limits`; here: the body sizes read).
        idle_under_pressure: seconds without a POST in flight after which a session may be
            closed to make room when a session cap is reached.
    """

    def __init__(
        self,
        seam: GuardSeam,
        target: Sequence[str] | HttpUpstream,
        *,
        host: str,
        port: int,
        max_sessions: int = MAX_SESSIONS,
        metrics: Metrics | None = None,
        budget: ClientBudget | None = None,
        limits: HttpLimits | None = None,
        idle_under_pressure: float = SESSION_IDLE_UNDER_PRESSURE,
        gate: CallerGate | None = None,
    ) -> None:
        self.seam = seam
        self.metrics = metrics
        self.target = target
        self.sessions: dict[str, _Session] = {}
        budget = budget if budget is not None else ClientBudget(max_sessions=max_sessions)
        if metrics is not None and budget.on_refused is None:
            budget.on_refused = metrics.refused
        self.budget = budget
        self.limits = limits if limits is not None else HttpLimits()
        self.idle_under_pressure = idle_under_pressure
        #: the tool policy per caller, the call audit (`--auth jwt`), else `None`
        self.gate = gate
        #: the proxy's traces (`_tracing.Tracing`, set on the seam by `_launch`), else `None`
        self.tracing: Any = getattr(seam, "tracing", None)
        #: an HTTP upstream's 401 / 403 reaches the client as sent, so it can log in there;
        #: not with `--auth jwt`: the client's token is the proxy's, and an upstream refusing
        #: the proxy's own credential is the proxy's failure (a JSON-RPC error, HTTP 502 when
        #: stateless), never a login the client could run
        self._passes_refusals = isinstance(target, HttpUpstream) and gate is None
        self.modern = ModernRouter(seam, target, budget)
        self.modern.pass_refusals = self._passes_refusals
        self._task_group: anyio.abc.TaskGroup | None = None
        names = [host, "localhost", "127.0.0.1", "[::1]"]
        self.security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:{port}" for name in names] + names,
            allowed_origins=[f"http://{name}:{port}" for name in names],
        )
        #: the SDK's Host / Origin / content-type check (it holds only the settings)
        self._security = TransportSecurityMiddleware(self.security)
        #: (POST, Content-Type, Host, Origin) combinations that check passed (`_stateless`)
        self._passed: set[tuple[bool, str | None, str | None, str | None]] = set()
        #: a session's POST of a request answered past the SDK's transport (`_lean`): with a
        #: server process per session (an HTTP upstream's refusals travel the SDK's path)
        self._lean = not isinstance(target, HttpUpstream)
        #: the lean requests' `_ClientWatch` tasks while they run
        self._watchers: set[asyncio.Task[None]] = set()

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold the task group the sessions run in (until cancelled)."""
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            await self.modern.aclose()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        if path == "/healthz":
            await _json(send, 200, {"status": "ok", "sessions": len(self.sessions)})
            return
        if path == "/metrics" and self.metrics is not None:
            exposition = self.metrics.render()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", self.metrics.content_type.encode()),
                        (b"content-length", str(len(exposition)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": exposition})
            return
        if path.rstrip("/") != MCP_PATH:
            # RFC 9728: an HTTP upstream's protected-resource metadata, served through.
            if not isinstance(self.target, HttpUpstream) or not await serve_metadata(
                self.target, scope, send
            ):
                await _json(send, 404, {"error": "not found"})
            return
        raw = _decoded(scope["headers"])
        headers = dict(raw)
        version = headers.get("mcp-protocol-version")
        if version in MODERN_PROTOCOL_VERSIONS and "mcp-session-id" not in headers:
            await self._stateless(scope, receive, send, raw, headers)
            return
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _unsupported(send, version)
            return
        session_id = headers.get("mcp-session-id")
        if session_id is not None:
            await self._in_session(session_id, scope, receive, send, raw, headers)
            return
        # A new session starts a server process (or an upstream session): only for a request
        # that can open one, checked (Host, Origin, the client's share) before its body is
        # read and before anything is started.
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=request.method == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return
        if request.method != "POST":
            await _rpc_error(send, 400, -32600, "Bad Request: Missing session ID")
            return
        who = self._who(scope, headers)
        for _cap in range(3):  # the client's, its address's, the total: room made in each
            refusal = self.budget.session_refusal(who)
            if refusal is None or not self._reap(refusal, who):
                break
        refusal = self.budget.open_session(who)
        if refusal is not None:
            await write_refusal(send, None, refusal)
            return
        opened = False
        try:
            body = await _body(receive, min(MAX_OPENING_BODY, self.limits.max_body_bytes))
            if body is not None and _null_id(body):
                await _json(send, 400, null_id_answer())
                return
            if body is None or not _is_initialize(body):
                await _rpc_error(send, 400, -32600, "Bad Request: Missing session ID")
                return
            opened = await self._open(scope, _replay(body), send, who)
        finally:
            if not opened:
                self.budget.close_session(who)

    def _who(self, scope: Any, headers: dict[str, str]) -> Who:
        """Who sent a request: with `--auth jwt`, the verified subject (a session belongs to
        it: a fresh token of the same subject continues it; another subject's is answered as
        an unknown session), else its `Authorization` credential, else its address."""
        identity = scope.get(IDENTITY_KEY)
        if identity is not None:
            return self.budget.client(None, scope.get("client"), subject=subject_key(identity))
        return self.budget.client(headers.get("authorization"), scope.get("client"))

    async def _in_session(
        self,
        session_id: str,
        scope: Any,
        receive: Any,
        send: Any,
        raw: list[tuple[str, str]],
        headers: dict[str, str],
    ) -> None:
        """A request naming a session: 404 when there is none (or it is closing), or when its
        credential is not the one that opened it (none when it was opened without one),
        before its body is read; else a POST of one request is answered here (`_lean`), and
        anything else by the session's transport."""
        session = self.sessions.get(session_id)
        if session is not None and session.idle.cancel_called:
            session = None  # its idle time ran out (or it made room): it is closing
        if session is not None:
            who = self._who(scope, headers)
            if who.credential != session.owner.credential:
                caller = caller_of(scope)
                logger.warning(
                    "session %s…: a request from %s, not the client that opened it: answered "
                    "as an unknown session",
                    session_id[:8],
                    f"subject {shown_caller(caller)}" if caller is not None else shown(who),
                )
                session = None
        if session is None:
            await _rpc_error(send, 404, -32600, "Session not found")
            return
        post = scope.get("method") == "POST"
        if post:
            body = await _body(receive, None)  # bounded by the HTTP protocol's limits
            if body is None:
                return  # the client went away
            if _null_id(body):
                await _json(send, 400, null_id_answer())
                return
            if self._lean and session.inbox is not None and not session.transport.is_terminated:
                message = lean_message(body, headers)
                request = isinstance(message, JSONRPCRequest)
                if message is not None:
                    if not await self._checked(scope, receive, send, raw, True):
                        return
                    if request and _in_flight(session, message.id):
                        await self._reused(send, message, scope, session)
                        return
                    session.posts += 1
                    session.begin()
                    try:
                        if request:
                            sent = await lean_answer(
                                session.waiting,
                                session.inbox,
                                message,
                                scope,
                                headers,
                                receive,
                                send,
                                self._watchers,
                            )
                        else:
                            sent = await lean_accept(session.inbox, message, scope, headers, send)
                    finally:
                        session.posts -= 1
                        session.idle_since = session.end()
                    if not sent:
                        await _rpc_error(send, 404, -32600, "Session not found")
                    return
            receive = _replay(body, receive)
            if self._passes_refusals:  # an upstream 401 / 403 passed back
                scope[SCOPE_KEY] = send = RefusalSlot(send)
            session.posts += 1
        session.begin()
        try:
            await session.transport.handle_request(scope, receive, send)
        finally:
            session.end()
            if post:
                session.posts -= 1
                session.idle_since = anyio.current_time()
        if session.transport.is_terminated:
            self._forget(session_id, session)

    async def _reused(self, send: Any, message: Any, scope: Any, session: _Session) -> None:
        """A session's POST of a request whose id a request of the session in flight has:
        answered -32600 Invalid Request at once (MCP basic "Requests": ids are not reused
        within a session), never sent on, counted and in the call audit (`refused`). Handed on,
        its refusal would answer the first request's POST, and its own never come."""
        await _json(send, 200, id_in_use(message.id).model_dump(by_alias=True, exclude_none=True))
        caller = caller_of(scope) or session.caller
        if self.gate is not None and caller is not None and message.method == "tools/call":
            raw = message.model_dump(by_alias=True, exclude_none=True)
            self.gate.refused_here(raw, caller, "request_id_in_use")

    async def _checked(
        self, scope: Any, receive: Any, send: Any, raw: list[tuple[str, str]], post: bool
    ) -> bool:
        """The SDK's Host / Origin / Content-Type check (`TransportSecurityMiddleware`), its
        refusal written when it fails. A combination it passed once passes again (the
        settings never change); a refusal is never remembered."""
        checked = (post, *_first_values(raw, _CHECKED_HEADERS))
        if checked in self._passed:
            return True
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=post)
        if refused is not None:
            await refused(scope, receive, send)
            return False
        if sum(len(value or "") for value in checked[1:]) <= _PASSED_LONGEST:
            if len(self._passed) >= _PASSED_KEPT:
                self._passed.clear()
            self._passed.add(checked)
        return True

    def _forget(self, session_id: str, session: _Session) -> None:
        """`session_id` is no longer open: out of the table, out of its owner's count."""
        if self.sessions.get(session_id) is session:
            del self.sessions[session_id]
        if session.counted:
            session.counted = False
            self.budget.close_session(session.owner)

    def _reap(self, refusal: Refusal, who: Who) -> bool:
        """Make room past a session cap: close the session, among those that count against
        `refusal`'s cap, idle (no POST in flight) the longest, when it has been idle at least
        `idle_under_pressure` seconds. Returns whether one was closed."""
        if refusal.reason == "too_many_sessions_per_client":

            def under(owner: Who) -> bool:
                return owner.key == who.key

        elif refusal.reason == "too_many_sessions_per_address":

            def under(owner: Who) -> bool:
                return owner.address == who.address

        else:

            def under(owner: Who) -> bool:
                return True

        latest = anyio.current_time() - self.idle_under_pressure
        candidates = [
            (session.idle_since, session_id)
            for session_id, session in self.sessions.items()
            if session.posts == 0 and session.idle_since <= latest and under(session.owner)
        ]
        if not candidates:
            return False
        _, session_id = min(candidates)
        session = self.sessions[session_id]
        logger.info(
            "session %s… closed to make room (%s): idle the longest", session_id[:8], refusal.reason
        )
        self._forget(session_id, session)
        session.idle.cancel()  # the session's task ends as at its idle timeout
        return True

    async def _stateless(
        self,
        scope: Any,
        receive: Any,
        send: Any,
        raw: list[tuple[str, str]],
        headers: dict[str, str],
    ) -> None:
        """A 2026-07-28 request: checked like a new session's (Host, Origin) and counted in
        its client's budget (by its `Mcp-Method` header) before its body is read, then
        routed. `headers`: `raw` as a dict (the last of repeats)."""
        post = scope.get("method") == "POST"
        if not await self._checked(scope, receive, send, raw, post):
            return
        if not post:
            await _json(send, 405, {"error": "method not allowed"}, [(b"allow", b"POST")])
            return
        who = self._who(scope, headers)
        listen = headers.get("mcp-method") == "subscriptions/listen"
        refusal = self.budget.admit(who, listen)
        if refusal is not None:
            await write_refusal(send, None, refusal)
            return
        try:
            body = await _body(receive, min(MAX_BODY, self.limits.max_body_bytes))
            if body is None:
                await _rpc_error(send, 413, -32600, "Request body too large")
                return
            assert self._task_group is not None
            # `find`, not `in`: bytes `in` bytes formats a TypeError first (`_message._WIDE_BREAK`)
            if self.metrics is not None and body.find(b'"tools/call"') != -1:
                self.metrics.call()
            per_caller = None
            caller = caller_of(scope) if self.gate is not None else None
            if caller is not None and self.gate is not None:
                gate = self.gate
                try:
                    asked: Any = orjson.loads(body)
                except orjson.JSONDecodeError:
                    asked = None  # the router answers it
                watched = gate.watches(asked) and "id" in asked
                if watched:
                    denied = gate.refuse(asked, caller)
                    if denied is not None:
                        if self.tracing is not None:
                            _refused_span(self.tracing, asked, headers, denied)
                        await _json(send, 200, denied)
                        return
                per_caller = _StatelessCaller(gate, caller, asked if watched else None, self.seam)

            await self.modern.handle(
                self._task_group,
                raw,
                body,
                receive,
                send,
                scope.get("client"),
                headers,
                admitted=True,
                per_caller=per_caller,
            )
        finally:
            self.budget.release(who, listen)

    async def _open(self, scope: Any, receive: Any, send: Any, who: Who) -> bool:
        """Open a session for `who` (counted in the budget already) with the initialize
        request in `receive`; whether it opened (its upstream started and the initialize was
        accepted): from then on the session owns the count."""
        session_id = secrets.token_hex(16)
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, security_settings=self.security
        )
        session = _Session(transport, who)
        session.caller = caller_of(scope)
        assert self._task_group is not None
        opening = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        forwarded = {k: opening[k] for k in _FORWARDED if k in opening}
        try:
            await self._task_group.start(self._session, session_id, session, forwarded)
        except Exception as exc:
            logger.error("cannot open the upstream for a new session: %s", type(exc).__name__)
            await _rpc_error(send, 502, -32603, "The upstream server could not be reached")
            return False
        self.sessions[session_id] = session
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        session.posts += 1
        session.begin()
        respond: Any = watch
        if self._passes_refusals:  # an upstream 401 / 403, passed back
            scope[SCOPE_KEY] = respond = RefusalSlot(watch)
        try:
            await transport.handle_request(scope, receive, respond)
        finally:
            session.posts -= 1
            session.end()
            session.idle_since = anyio.current_time()
            if not status or status[0] >= 400:  # only an accepted initialize opens a session
                if self.sessions.get(session_id) is session:
                    del self.sessions[session_id]
                with anyio.CancelScope(shield=True):
                    await transport.terminate()
        # From here the session holds its owner's count (unless it ended meanwhile: then
        # the caller gives the count back).
        session.counted = self.sessions.get(session_id) is session
        if session.counted and session.caller is not None:
            logger.info(
                "session %s… opened by subject %s", session_id[:8], shown_caller(session.caller)
            )
        return session.counted

    async def _session(
        self,
        session_id: str,
        session: _Session,
        forwarded: dict[str, str],
        *,
        task_status: Any = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """One downstream session: its upstream, the guard, the pumps, until either side ends.
        `forwarded`: headers of the opening request for every upstream request of the session
        (the GET stream and DELETE included)."""
        transport = session.transport
        upstream: AbstractAsyncContextManager[tuple[Any, Any]]
        if isinstance(self.target, HttpUpstream):
            target = self.target
            upstream = http_upstream(HttpUpstream(target.url, {**target.headers, **forwarded}))
            kind = "streamable-http"
        else:
            upstream = child_upstream(self.target)
            kind = "stdio"
        started = False
        try:
            async with (
                upstream as (up_read, up_write),
                transport.connect() as (down_read, down_write),
            ):
                if kind == "streamable-http":
                    # This session's own negotiated version on its requests (the SDK's
                    # client takes the stamped one): never the version of whichever session
                    # initialized last.
                    up_read = _Negotiated(up_read, session)
                    up_write = HeaderStamp(up_write, self.seam.raw_tool, lambda: session.version)
                tracing = self.tracing
                if tracing is not None:  # beneath the guard: what it let through, as sent
                    up_read = TraceTap(up_read, tracing, session_id)
                    up_write = TraceStamp(up_write, tracing, session_id, stdio=kind == "stdio")
                guarded_read, guarded_write = self.seam.wrap(
                    up_read, up_write, transport=kind  # type: ignore[arg-type]
                )
                task_status.started()
                started = True
                if self.metrics is not None:
                    self.metrics.session_opened()
                # Client messages reach the pump through one stream: the SDK transport's
                # (forwarded) and the lean requests' (`_lean`), in the order they came.
                inbox = Inbox(_INBOX)
                gated: GatedSink | None = None
                try:
                    with session.idle:
                        async with anyio.create_task_group() as tg:
                            related = session.related = _Related()
                            tg.start_soon(_forward, down_read, inbox)
                            session.inbox = inbox
                            sink: Any = _RelatingSink(down_write, related, session.waiting)
                            if tracing is not None:
                                sink = TraceEnd(sink, tracing, session_id)
                            if self.gate is not None and session.caller is not None:
                                gated = GatedSink(sink, self.gate, session.caller, guarded_write)
                                sink = gated
                                tg.start_soon(gated.tell_changes)

                            async def upward() -> None:
                                await _pump_down_to_up(
                                    inbox,
                                    guarded_write,
                                    related,
                                    kind,
                                    self.metrics,
                                    self.seam,
                                    session,
                                    gated,
                                    tracing,
                                    session_id,
                                )
                                tg.cancel_scope.cancel()

                            tg.start_soon(upward)
                            await pump(guarded_read, sink, self.seam)
                            tg.cancel_scope.cancel()
                finally:
                    # Once neither pump runs: a client message the client pump took in the
                    # step the server's output ended (its wait had completed, so it ran on
                    # before its cancellation) is in the sink before its rows are written.
                    if gated is not None:
                        gated.close()
        except Exception:
            if not started:
                raise  # `_open` answers the opening request with 502
            # A session's end, however abrupt (the client's DELETE closes its streams under
            # the pumps), stays in that session: the listener and the others go on.
            logger.debug("session %s… ended with an error", session_id[:8], exc_info=True)
        finally:
            if session.inbox is not None:
                session.inbox.close()
            session.inbox = None
            for waiter in list(session.waiting.values()):
                waiter.end()  # answered 502: the upstream did not answer
            self._forget(session_id, session)
            if self.tracing is not None:  # the answers still awaited never come
                self.tracing.close_scope(session_id)
            if not transport.is_terminated:
                with anyio.CancelScope(shield=True):
                    await transport.terminate()
            if started:
                if session.caller is not None:
                    logger.info(
                        "session %s… of subject %s closed",
                        session_id[:8],
                        shown_caller(session.caller),
                    )
                else:
                    logger.info("session %s… closed", session_id[:8])
                if self.metrics is not None:
                    self.metrics.session_closed()


class _Negotiated:
    """An upstream read stream, watched: the answer to the session's `initialize` sets the
    session's version (`_Session.version`)."""

    def __init__(self, inner: Any, session: _Session) -> None:
        self._inner = inner
        self._session = session

    async def receive(self) -> Any:
        item = await self._inner.receive()
        message = getattr(item, "message", None)
        asked = self._session.initialize_ids
        if asked and isinstance(message, JSONRPCResponse) and message.id in asked:
            asked.discard(message.id)
            version = message.result.get("protocolVersion")
            if isinstance(version, str):
                self._session.version = version
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Related:
    """Which downstream request a server message belongs to, so the transport puts it on that
    request's SSE stream: a progress notification by its token, anything else by the request
    in flight most recently sent (the stdio and SDK transports do not say); a response by its
    id, as the client wrote it (`asked_as`). Holds the requests in flight only: an answer or
    the client's cancellation (`answered`) lets one go, so what it keeps, and each lookup,
    grows with the requests in flight, never with the session's history."""

    def __init__(self) -> None:
        self.in_flight: dict[Any, None] = {}
        #: `answer_key` of each id in flight -> the id as the client wrote it
        self.keys: dict[Any, Any] = {}
        #: progress token -> its request's id; and each id's tokens
        self.tokens: dict[Any, Any] = {}
        self._tokens_of: dict[Any, list[Any]] = {}

    def sent(self, message: Any) -> None:
        if isinstance(message, JSONRPCRequest):
            request_id = message.id
            self.in_flight[request_id] = None
            self.keys[request_id if type(request_id) is int else answer_key(request_id)] = (
                request_id
            )
            meta = (message.params or {}).get("_meta")
            if isinstance(meta, dict) and "progressToken" in meta:
                token = meta["progressToken"]
                if isinstance(token, str | int):  # the spec's; anything else names nothing
                    self.tokens[token] = request_id
                    self._tokens_of.setdefault(request_id, []).append(token)

    def answered(self, request_id: Any) -> None:
        """The request `request_id` is answered, or cancelled by its client: let it go."""
        if self.in_flight.pop(request_id, False) is not None:
            return  # not in flight (its tokens, if any, went with it)
        key = request_id if type(request_id) is int else answer_key(request_id)
        if self.keys.get(key) == request_id:
            del self.keys[key]
        for token in self._tokens_of.pop(request_id, ()):
            if self.tokens.get(token) == request_id:
                del self.tokens[token]

    def asked_as(self, answered: Any) -> Any:
        """The id, as the client wrote it, of the request in flight that a response with id
        `answered` answers as the guard and the SDK match ids (`answer_key`: a server may
        spell 5 as `" 5"`), or `None`."""
        asked = self.keys.get(answer_key(answered))
        return asked if asked is not None and asked in self.in_flight else None

    def of(self, message: Any) -> Any:
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/progress":
            token = (message.params or {}).get("progressToken")
            if isinstance(token, str | int) and token in self.tokens:
                return self.tokens[token]
        if self.in_flight:
            return next(reversed(self.in_flight))
        return None


class _RelatingSink:
    """The downstream write stream, each message tagged with the request it relates to; the
    answer to a lean request (`_lean`) and the messages related to one go to its waiter."""

    def __init__(self, inner: Any, related: _Related, waiting: dict[Any, Waiter]) -> None:
        self._inner = inner
        self._related = related
        self._waiting = waiting

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if type(item) is InUse:
            # Its id is another request's in flight: nothing of that one's (its waiter, its
            # place in `_Related`) is this answer's; the SDK's transport routes it.
            await self._inner.send(SessionMessage(message))
            return
        request_id = getattr(message, "id", None)
        if request_id is not None and not isinstance(message, JSONRPCRequest):
            if request_id not in self._related.in_flight:
                asked = self._related.asked_as(request_id)
                if asked is not None:  # respelled by the server (" 5" for 5): the client's
                    message = message.model_copy(update={"id": asked})
                    item = SessionMessage(message, metadata=item.metadata)
                    request_id = asked
            self._related.answered(request_id)  # a response: routed by its id
            waiter = self._waiting.pop(request_id, None) if self._waiting else None
            if waiter is not None:
                waiter.finish(message)
                return
            await self._inner.send(SessionMessage(message))
            return
        related = self._related.of(message)
        if related is not None and self._waiting:
            waiter = self._waiting.get(related)
            if waiter is not None:
                waiter.relate(message)
                return
        metadata = (
            ServerMessageMetadata(related_request_id=related) if related is not None else None
        )
        await self._inner.send(SessionMessage(message, metadata=metadata))

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _forward(down_read: Any, inbox: Inbox) -> None:
    """The SDK transport's client messages into the session's inbox; its end (DELETE, the
    session's termination) closes the inbox, which ends the pump."""
    try:
        async for item in down_read:
            await inbox.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        inbox.close()


async def _pump_down_to_up(
    down_read: Any,
    guarded_write: Any,
    related: _Related,
    kind: str,
    metrics: Metrics | None,
    seam: GuardSeam,
    session: _Session | None = None,
    gated: GatedSink | None = None,
    tracing: Any = None,
    scope: Any = None,
) -> None:
    """Client -> guard -> upstream, in order, each message stripped of the downstream
    transport's metadata; `Authorization` kept for an HTTP upstream; the id of an
    `initialize` noted in `session` (its answer sets the session's version); with `gated`
    (`--auth jwt`), a `tools/call` outside the caller's policy answered at once, unsent;
    with `tracing`, each request a span (keyed in `scope`, the session) current while the
    tool policy and the guard decide on it, a cancelled request's span ended."""
    while True:
        try:
            item = await down_read.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the session ended (DELETE, idle timeout)
        if isinstance(item, Exception):
            logger.warning("client message unreadable: %s: dropped", type(item).__name__)
            continue
        message = item.message
        related.sent(message)
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if type(cancelled) is int or isinstance(cancelled, str):
                related.answered(cancelled)  # its answer, if one still comes, is routed by id
        if session is not None and isinstance(message, JSONRPCRequest):
            if message.method == "initialize" and len(session.initialize_ids) < 8:
                session.initialize_ids.add(message.id)
        if metrics is not None and isinstance(message, JSONRPCRequest):
            if message.method == "tools/call":
                metrics.call()
        token = None
        if tracing is not None:
            if isinstance(message, JSONRPCRequest):
                token = _traced(tracing, item, session, scope)
            elif isinstance(message, JSONRPCNotification):
                _cancelled(tracing, message, scope)
        try:
            if not await _gated_and_sent(item, guarded_write, related, kind, seam, gated):
                return
        finally:
            if token is not None:
                tracing.leave(token)


def _in_flight(session: _Session, request_id: Any) -> bool:
    """Whether a request of `session` with `request_id` (as the SDK reads ids: `" 5"` is 5) is
    in flight: a lean one, or one the pump sent on."""
    if request_id in session.waiting:
        return True
    related = session.related
    return related is not None and related.asked_as(request_id) is not None


def _refused_span(
    tracing: Any, request: dict[str, Any], headers: dict[str, str], answer: dict[str, Any]
) -> None:
    """The span of a stateless request the tool policy refused (never routed): `refused`,
    with the reason of the refusal's `error.data.reason`, when it gives one."""
    scope = object()  # its own: nothing else answers it
    version = headers.get("mcp-protocol-version")
    if tracing.request(request, headers, version, scope=scope, header_first=True) is None:
        return
    data = answer.get("error", {}).get("data")
    reason = data.get("reason") if isinstance(data, dict) else None
    tracing.answered(request.get("id"), "refused", reason, scope=scope)


def _traced(tracing: Any, item: Any, session: _Session | None, scope: Any) -> Any:
    """Start the span of a session's request (its parent from the HTTP request's
    `traceparent` header, else `_meta.traceparent`); make it current: the token to leave."""
    message = item.message
    request = getattr(item.metadata, "request_context", None)
    headers = getattr(request, "headers", None)
    plain = {"method": message.method, "id": message.id, "params": message.params}
    # the version the client names on each request after `initialize` (the spec's header)
    version = headers.get("mcp-protocol-version") if headers is not None else None
    if version is None and session is not None:
        version = session.version
    span = tracing.request(plain, headers, version, scope=scope, header_first=True)
    return tracing.enter(span) if span is not None else None


def _cancelled(tracing: Any, message: JSONRPCNotification, scope: Any) -> None:
    """`notifications/cancelled` from the client: the span of the request it names ends."""
    if message.method == "notifications/cancelled":
        request_id = (message.params or {}).get("requestId")
        if isinstance(request_id, str | int) and not isinstance(request_id, bool):
            tracing.answered(request_id, "cancelled", scope=scope)


async def _gated_and_sent(
    item: Any,
    guarded_write: Any,
    related: _Related,
    kind: str,
    seam: GuardSeam,
    gated: GatedSink | None,
) -> bool:
    """One client message of `_pump_down_to_up` past the tool policy and the guard to the
    upstream; `False`: the upstream is closed."""
    message = item.message
    if gated is not None and isinstance(message, JSONRPCRequest):
        request = getattr(item.metadata, "request_context", None)
        scope = getattr(request, "scope", None)
        if await gated.refused(message, caller_of(scope)):
            if not gated.reused(message.id):  # else the id is another request's in flight
                related.answered(message.id)
            return True
    elif gated is not None and isinstance(message, JSONRPCNotification):
        if message.method == "notifications/cancelled":
            gated.cancelled(message)
    metadata = None
    if kind == "streamable-http":
        request = getattr(item.metadata, "request_context", None)
        headers = getattr(request, "headers", None)
        forwarded = {k: headers[k] for k in _FORWARDED if headers is not None and k in headers}
        scope = getattr(request, "scope", None)
        slot = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
        if forwarded or slot is not None:
            metadata = UpstreamMetadata(headers=forwarded or None, refusal=slot)
    try:
        await seam.before_call(message, guarded_write)
        if gated is not None and isinstance(message, JSONRPCRequest):
            gated.writing(message.id)  # from here the guard's record says if it was written
        await guarded_write.send(SessionMessage(message, metadata=metadata))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    return True


class _StatelessCaller:
    """A stateless request's caller (`_stateless.PerCaller`): its answer as the tool policy
    lets it see it; its `subscriptions/listen` stream told when a new policy version changes
    what it would see of the tools the guard knows (`Sessions`, as a session)."""

    def __init__(self, gate: CallerGate, caller: Any, request: Any, seam: GuardSeam) -> None:
        self._gate = gate
        self._caller = caller
        self._request = request  # a tools/list or tools/call request, else `None`
        self._seam = seam

    def answer(self, answer: Any, by_server: bool = False, unsent: bool = False) -> Any:
        if answer is None or self._request is None:
            return answer
        plain = (
            answer
            if isinstance(answer, dict)
            else answer.model_dump(by_alias=True, exclude_none=True)
        )
        seen = self._gate.answered(
            self._request, self._caller, plain, by_server=by_server, unsent=unsent
        )
        return answer if seen is plain else seen

    def unanswered(self, reason: str) -> None:
        if self._request is not None:
            self._gate.unanswered(self._request, self._caller, reason)

    def ended(self, verdict: str, reason: str | None) -> None:
        if self._request is not None:
            self._gate.ended(self._request, self._caller, verdict, reason)

    def refused(self, reason: str) -> None:
        if self._request is not None:
            self._gate.refused_here(self._request, self._caller, reason)

    def listening(self, tell: Any) -> Any:
        loop = asyncio.get_running_loop()

        def notify() -> None:  # from the policy follower's thread
            try:
                loop.call_soon_threadsafe(tell)
            except RuntimeError:  # the loop is closed: the proxy is stopping
                pass

        sessions = self._gate.sessions
        key = sessions.opened(self._caller, notify, names=self._seam.tool_names)
        names = self._seam.tool_names()
        sessions.listed(key, names, self._gate.access.visible(self._caller, names))
        return lambda: sessions.closed(key)


def subject_key(identity: Any) -> str:
    """What a session and a budget belong to with `--auth jwt`: the token's subject (one
    issuer per proxy); a token without `sub`, its claims (that token alone)."""
    if identity.subject is not None:
        return "sub\x00" + str(identity.subject)
    claims = json.dumps(identity.claims, sort_keys=True, default=str)
    return "claims\x00" + hashlib.sha256(claims.encode()).hexdigest()


#: Header lines `_decoded` remembers (each at most `_DECODED_LONGEST` bytes; 64 KiB in all at
#: most): a client sends the same few, request after request.
_DECODED_KEPT: Final = 256
_DECODED_LONGEST: Final = 256
_decoded_lines: dict[tuple[bytes, bytes], tuple[str, str]] = {}


def _decoded(headers: Any) -> list[tuple[str, str]]:
    """ASGI header lines as `(lower-cased name, value)` strings (ISO-8859-1, as RFC 9110
    section 5.5 reads field values). `authorization` is never remembered."""
    known = _decoded_lines
    raw = []
    for line in headers:
        try:
            pair = known.get(line)
        except TypeError:  # a line given as a list (ASGI allows any two-item iterable)
            pair = None
        if pair is None:
            name, value = line
            pair = (name.decode("latin-1").lower(), value.decode("latin-1"))
            if len(name) + len(value) <= _DECODED_LONGEST and pair[0] != "authorization":
                if len(known) >= _DECODED_KEPT:
                    known.clear()
                known[(bytes(name), bytes(value))] = pair
        raw.append(pair)
    return raw


def _first_values(raw: list[tuple[str, str]], names: tuple[str, str, str]) -> tuple[Any, ...]:
    """The first value of each of `names` in `raw` (`None` when absent), as starlette's
    `Headers.get` reads them."""
    found: dict[str, str] = {}
    for name, value in raw:
        if name in names and name not in found:
            found[name] = value
    return tuple(found.get(name) for name in names)


async def _body(receive: Any, limit: int | None) -> bytes | None:
    """The request body, or `None` past `limit` bytes (`None`: no limit of the listener's) or
    when the client went away."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, then: Any = None) -> Any:
    """An ASGI `receive` that gives `body` once, then the connection's own `then` (its
    disconnect), or waits like a live connection."""
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if then is not None:
            return await then()
        await anyio.sleep_forever()

    return receive


def _null_id(body: bytes) -> bool:
    """Whether `body` is a request whose id is null (`_message.null_id_request`): answered
    -32600 here, since the SDK's transport reads it as a notification and drops the id."""
    if body.find(b"null") == -1:  # `find`, not `in`: see proxy/_message.py
        return False
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return null_id_request(value)


def _is_initialize(body: bytes) -> bool:
    try:
        value = orjson.loads(body)  # a depth limit of its own: a deep body is just an error
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("method") == "initialize"


async def _json(
    send: Any, status: int, body: Any, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _rpc_error(send: Any, status: int, code: int, message: str, data: Any = None) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    await _json(send, status, {"jsonrpc": "2.0", "id": None, "error": error})


async def _unsupported(send: Any, requested: str) -> None:
    """UNSUPPORTED_PROTOCOL_VERSION (MCP 2026-07-28 schema `UnsupportedProtocolVersionError`:
    HTTP 400, `data.requested` and `data.supported` both required)."""
    await _rpc_error(
        send,
        400,
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {
            "requested": requested,
            "supported": sorted({*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS}),
        },
    )


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _announce(server: Any, url: str) -> None:
    """Log "listening on URL" once uvicorn has bound its socket (never for a failed bind)."""
    while not server.started:
        await anyio.sleep(0.01)
    logger.info("listening on %s", url)


class _AuthRefused:
    """An `AuthError` as the budget metrics count it: `reason` one of `auth_missing` (no
    token), `auth_invalid_request`, `auth_invalid_token`."""

    def __init__(self, refused: AuthError) -> None:
        self.reason = f"auth_{refused.error or 'missing'}"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _stops_quietly(server: Any) -> None:
    """uvicorn's `server` stops on SIGINT / SIGTERM without raising the signal again once it
    has stopped (its default: the process would then die of it before the proxy closes the
    guard, flushes its traces and says why it stopped)."""
    handle = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        handle(sig, frame)
        captured = getattr(server, "_captured_signals", None)
        if isinstance(captured, list):
            captured.clear()

    server.handle_exit = handle_exit


async def serve(
    seam: GuardSeam,
    target: Sequence[str] | HttpUpstream,
    host: str,
    port: int,
    metrics: Metrics | None = None,
    budget: ClientBudget | None = None,
    limits: HttpLimits | None = None,
    auth: Authenticator | None = None,
    public_url: str | None = None,
    gate: CallerGate | None = None,
) -> int:
    """Listen on `host:port` until SIGINT/SIGTERM; returns 0. `metrics` are served at
    `/metrics` when given; `budget`: each client's caps (`_budget`); `limits`: the HTTP
    bounds (`_limits`); `auth`: every request's bearer token checked before anything else
    reads it (`_auth.AuthMiddleware`; its keys fetched here first), the protected-resource
    metadata of `public_url` (default `http://HOST:PORT/mcp`) served; `gate`: the tool
    policy per caller and the call audit (`_callers`).

    Raises:
        OSError: the address cannot be bound.
        AuthConfigError: `auth`'s keys (or its OpenID discovery) cannot be read.
    """
    import uvicorn

    limits = limits if limits is not None else HttpLimits()
    listener = Listener(
        seam,
        target,
        host=host,
        port=port,
        metrics=metrics,
        budget=budget,
        limits=limits,
        gate=gate,
    )
    app: Any = listener
    if auth is not None:
        await auth.start()
        url = public_url or f"http://{_url_host(host)}:{port}{MCP_PATH}"
        app = AuthMiddleware(
            listener,
            auth,
            url,
            on_refused=(
                (lambda refused: metrics.refused(_AuthRefused(refused))) if metrics else None
            ),
        )
        logger.info("bearer tokens checked on every request (issuer %s)", auth.settings.issuer)
    protocol = http_protocol(limits, metrics.refused if metrics is not None else None)
    if isinstance(protocol, str):
        logger.warning(
            "--listen without httptools (or with a uvicorn whose protocol changed): only the "
            "request head's size is bounded; install the proxy extra for the other bounds"
        )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # an access log could carry credentials in a query string
        # The client's address is the TCP peer's: any local client could write a made-up
        # X-Forwarded-For and so pass for another (each address has its own budget).
        proxy_headers=False,
        lifespan="on",
        http=protocol,  # bounded before it reads; a response's head and body in one write
        h11_max_incomplete_event_size=limits.max_head_bytes,  # h11 only (the fallback)
        timeout_keep_alive=limits.keep_alive_timeout,  # type: ignore[arg-type]
        ws="none",  # no upgrade: nothing leaves the bounded protocol
        # SIGTERM waits this long for requests under way, then ends them: a client holding
        # a request open (a body that never comes, a stream) cannot keep the proxy running.
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = uvicorn.Server(config)
    _stops_quietly(server)
    failed: OSError | None = None
    async with anyio.create_task_group() as tg:
        await tg.start(listener.run)
        tg.start_soon(_announce, server, f"http://{host}:{port}{MCP_PATH}")
        try:
            await server.serve()
        except SystemExit as exc:
            # uvicorn logs a failed bind and exits; the OSError it caught is the context.
            cause = exc.__context__
            failed = cause if isinstance(cause, OSError) else OSError(f"uvicorn exited ({exc})")
        tg.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return 0
