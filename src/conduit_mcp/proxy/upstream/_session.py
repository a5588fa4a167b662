"""The proxy's client of a Streamable HTTP `--upstream`: each message it sends on is one request
on the pooled keep-alive connections (`_pool`), each answer read as one JSON object or as an
event stream (`_sse`), a session the server lost opened again.

Not a public module. The stdio proxy drives it with plain JSON-RPC `dict`s (`stdio/_remote`);
each session of the HTTP listener through the `SessionMessage` stream pair `http_upstream`
yields. The stateless 2026-07-28 requests of the listener are `_direct`'s.

Spec: MCP 2025-11-25 basic/transports "Streamable HTTP": every message is POSTed with `Accept:
application/json, text/event-stream`; a notification or a response is answered 202; a request
with one JSON object or with an event stream whose events are the messages related to the
request and last its response (a response on a request's stream is taken only as the answer
to that request); after `initialize` every request carries the `Mcp-Session-Id` the server
gave and the `MCP-Protocol-Version` negotiated (this session's own); the server's own messages
come on a GET stream (405: none offered); DELETE ends the session. "Session Management" 3-4:
a server that terminated a session MUST answer 404 to requests carrying its id, and the client
MUST then start a new session with a new `InitializeRequest` without a session id. "Resumability
and Redelivery": a stream that ended after events with ids is resumed with a GET carrying
`Last-Event-ID`. 2026-07-28 (no session): each request carries its own version and the
routing headers its caller gives; closing a request's stream is its cancellation.

What the proxy does on a 404 for its session (decided from "Session Management" 3: the server
answers 404 *instead of* processing a request naming a session it terminated, so a request
answered 404 never ran): it initializes again with the client's own `initialize` parameters
(same version and capabilities, a new id of the proxy's), checks the server chose the same
version, sends `notifications/initialized`, resends each request that was answered 404 (once),
tells the client `notifications/tools/list_changed` (the restarted server's tools are listed
through the guard again), and lets what the client sends meanwhile wait and go to the new
session. A request whose answer was under way when the session was lost (its stream cut) may
have run: it is answered with an error, never sent again. Notifications and responses answered
404 belonged to the lost session and are dropped. At most `MAX_REOPENS` sessions are opened
again until a request succeeds; past that each request is answered with an error naming the
upstream.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

import anyio
import anyio.abc
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp.types.jsonrpc import jsonrpc_message_adapter
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._settings import HttpUpstream
from ._pool import H1Pool, H1Response, UpstreamUnreachable, direct_available, shown_url
from ._refused import REFUSALS, RefusalSlot, UpstreamMetadata, refused_from
from ._sdk import sdk_upstream
from ._sse import EventReader, EventTooLarge
from ._wire import answer_to, dump, parse

logger = logging.getLogger("conduit_mcp.proxy")

#: Called with each message from the upstream (in the order of its stream).
Deliver = Callable[[dict[str, Any]], Awaitable[None]]

#: The largest answer (a JSON body, or one event's data) read from the upstream (bytes).
MAX_ANSWER: Final = 512 * 1024 * 1024
#: Sessions opened again (after HTTP 404 for the session) until a request succeeds.
MAX_REOPENS: Final = 3
#: Times a request's stream is resumed (`Last-Event-ID`) after it ended without the response.
MAX_RESUMES: Final = 2
#: Consecutive failures to open the GET stream before it is given up (until a new session).
MAX_LISTEN_FAILURES: Final = 2
#: Milliseconds before a stream is resumed or reopened when the server named none (`retry`).
DEFAULT_RETRY_MS: Final = 1000
#: Seconds the client's next message waits for the GET stream's answer after
#: `notifications/initialized` (so the stream does not race it to a second connection).
LISTEN_HEAD_WAIT: Final = 1.0
#: Seconds the session's DELETE may take when the proxy ends.
DELETE_TIMEOUT: Final = 5.0
#: Redirect targets followed per session, at most (each once).
_MOVES_KEPT: Final = 8
#: Distinct warnings logged per session (the rest are counted only).
_WARNINGS_KEPT: Final = 64
_ACCEPT: Final = "application/json, text/event-stream"
_INITIALIZE: Final = "initialize"
_INITIALIZED: Final = "notifications/initialized"
_CANCELLED: Final = "notifications/cancelled"
_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"


class _Lost(Exception):
    """The upstream answered 404 to a request carrying the session's id."""


class _Moved(Exception):
    """The upstream answered 307 / 308 to a place on its origin: sent there instead."""


class _Post:
    """One message on its way: what is sent, and who is answered."""

    __slots__ = ("body", "headers", "id", "is_request", "method", "modern", "refusal", "scope")

    def __init__(
        self,
        message: dict[str, Any],
        body: bytes,
        headers: dict[str, str],
        refusal: RefusalSlot | None,
    ) -> None:
        self.method: str | None = message.get("method")
        self.id: Any = message.get("id")
        self.is_request = self.method is not None and "id" in message
        self.body = body
        self.headers = headers
        self.refusal = refusal
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(_VERSION_KEY) if isinstance(meta, dict) else None
        self.modern = (
            version in MODERN_PROTOCOL_VERSIONS
            or headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS
        )
        self.scope: anyio.CancelScope | None = None


class UpstreamSession:
    """The client side of one connection to a Streamable HTTP server (see the module
    docstring). Use as an async context manager; `send` each message in the client's order.

    Args:
        upstream: the server (its `headers` go with every request; never logged).
        deliver: awaited with each message from the server, in its stream's order (a
            request's related messages before its response).
    """

    def __init__(self, upstream: HttpUpstream, deliver: Deliver) -> None:
        self.url = upstream.url
        self.where = shown_url(upstream.url)
        self.pool = H1Pool(upstream.url, {**upstream.headers, "accept": _ACCEPT})
        self._deliver = deliver
        #: the session the server gave (`Mcp-Session-Id`), and the version it negotiated
        self.session_id: str | None = None
        self.version: str | None = None
        #: the client's `initialize` request (its parameters open a lost session again)
        self._initialize: dict[str, Any] | None = None
        self._generation = 0  # sessions opened so far, lost ones included
        self._ready = anyio.Event()
        self._ready.set()
        self._reopen_lock = anyio.Lock()
        self._reopens = 0  # sessions opened again since a request last succeeded
        #: the session ended and was not opened again (`MAX_REOPENS`): why. Requests are
        #: answered with it, unsent, until the client initializes again.
        self._ended: str | None = None
        self._reopen_ids = itertools.count(1)
        self._reached = False  # a request was answered 2xx (the URL serves MCP)
        self._in_flight: dict[str, _Post] = {}  # 2026-07-28 requests, for cancellation
        self._warned: dict[str, int] = {}
        self._moves: set[str] = set()  # redirect targets followed (each once)
        self._tg: anyio.abc.TaskGroup | None = None
        self._listening: anyio.CancelScope | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> UpstreamSession:
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            with anyio.CancelScope(shield=True):
                await self._delete()
        finally:
            assert self._tg is not None
            self._tg.cancel_scope.cancel()
            await self._stack.aclose()
            await self.pool.aclose()

    async def send(
        self,
        message: dict[str, Any],
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        refusal: RefusalSlot | None = None,
    ) -> None:
        """Send one message: a request's answer is delivered later (`deliver`), a
        notification or a response is written before this returns (so the next message
        goes after it, as the SDK's transport does).

        Args:
            message: the JSON-RPC message (as the guard let it through).
            body: its bytes, when the caller has them (else they are written from `message`).
            headers: this message's own headers (`Authorization`, 2026-07-28 routing).
            refusal: where an HTTP client behind the listener gets a 401 / 403 as sent.
        """
        if not self._ready.is_set():
            await self._ready.wait()  # the session is being opened again: sent after
        own = {k.lower(): v for k, v in headers.items()} if headers else {}
        post = _Post(message, body if body is not None else dump(message), own, refusal)
        if post.method == _CANCELLED and self._cancels_a_stream(message, post):
            return
        assert self._tg is not None
        if post.method == _INITIALIZE and post.is_request:
            # What the client sends next needs the session this opens (its id): it waits.
            self._initialize = message
            self.session_id = None
            self._ended = None
            self._reopens = 0
            ready = self._ready = anyio.Event()
            self._tg.start_soon(self._opening, post, ready)
            return
        if self._ended is not None:
            await self._fail(post, self._ended, {"url": self.where, "status": 404})
            return
        if post.is_request:
            self._tg.start_soon(self._exchange, post)
            return
        await self._exchange(post)

    async def _opening(self, post: _Post, ready: anyio.Event) -> None:
        try:
            await self._exchange(post)
        finally:
            ready.set()

    def _cancels_a_stream(self, message: dict[str, Any], post: _Post) -> bool:
        """A `notifications/cancelled` for a 2026-07-28 request: closing that request's
        stream is its cancellation, and nothing is POSTed (the version has no client
        notifications over HTTP). Earlier versions POST it."""
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        cancelled = self._in_flight.get(_key(request_id))
        if cancelled is not None:
            if cancelled.scope is not None:
                cancelled.scope.cancel()
            return True
        return post.modern or (self.version is None and self._initialize is None)

    async def _exchange(self, post: _Post) -> None:
        """One message to its answer (for a request), through a lost session opened again."""
        key = _key(post.id) if post.is_request and post.modern else None
        if key is not None:
            self._in_flight[key] = post
        try:
            with anyio.CancelScope() as post.scope:
                for attempt in (1, 2, 3):  # once, once more after a 404 or a redirect
                    generation = self._generation
                    try:
                        await self._post(post)
                        return
                    except _Moved:
                        continue
                    except _Lost:
                        if not post.is_request:  # the lost session's: nobody is answered
                            self._warn("lost", f"session lost (HTTP 404): {post.method} dropped")
                            await self._reopen(generation)
                            return
                        if attempt == 3 or not await self._reopen(generation):
                            break
                await self._fail(
                    post,
                    f"the upstream server {self.where} ended the session (HTTP 404) and a new "
                    "one could not be opened",
                    {"url": self.where, "status": 404},
                )
        except UpstreamUnreachable as exc:
            self._warn("unreachable", f"upstream {self.where} unreachable: {exc}")
            await self._fail(post, f"the upstream server {self.where} could not be reached ({exc})")
        except Exception:  # a bug of the proxy's: this request fails, the session goes on
            logger.exception("upstream %s: a request failed inside the proxy", self.where)
            await self._fail(post, "the proxy failed on this request (see its log)")
        finally:
            if key is not None and self._in_flight.get(key) is post:
                del self._in_flight[key]

    def _headers(self, post: _Post, *, session: bool = True) -> dict[str, str]:
        headers = {"content-type": "application/json", **post.headers}
        if post.modern:
            return headers
        if self.version is not None and post.method != _INITIALIZE:
            headers["mcp-protocol-version"] = self.version  # this session's own
        if session and self.session_id is not None and post.method != _INITIALIZE:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def _post(self, post: _Post) -> None:
        """POST `post` and handle its answer.

        Raises:
            _Lost: HTTP 404 to a request that carried the session's id.
            UpstreamUnreachable: no connection, or it failed before the response head.
        """
        headers = self._headers(post)
        async with self.pool.post(post.body, headers) as response:
            status = response.status
            if status == 404 and "mcp-session-id" in headers:
                raise _Lost
            if status in (307, 308) and self._moved(response.headers.get("location")):
                raise _Moved
            if status in REFUSALS:
                await self._refused(post, response)
                return
            if 200 <= status < 300 and post.method == _INITIALIZE:
                self.session_id = response.headers.get("mcp-session-id") or self.session_id
            if not post.is_request:
                if status >= 400:
                    self._warn(f"http-{status}", self._status_text(status, post.method))
                elif post.method == _INITIALIZED:
                    self._reached = True
                    await self._listen_now()
                await _finish(response)
                return
            if status == 202:
                await self._fail(post, f"the upstream server {self.where} answered 202")
                return
            if not 200 <= status < 300:
                await self._http_error(post, response)
                return
            try:
                answer = await self._answer(post.id, response, post.method)
            except UpstreamUnreachable:  # after the head: the request may have run
                await self._fail(
                    post,
                    f"the connection to the upstream server {self.where} was cut while the "
                    "answer was under way; the request may have run and is not sent again",
                    {"url": self.where},
                )
                return
        if answer is None:
            return
        if post.method == _INITIALIZE:
            result = answer.get("result")
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(version, str):
                self.version = version
        self._reached = True
        self._reopens = 0
        await self._deliver(answer)

    async def _answer(
        self,
        request_id: Any,
        response: H1Response,
        method: str | None,
        resumed: int = 0,
        fail: Callable[[Any, str], Awaitable[None]] | None = None,
    ) -> dict[str, Any] | None:
        """The response to `request_id` read from `response` (a JSON object, or an event
        stream whose other messages are delivered as they come): `None` when it never came,
        after `fail(request_id, why)` (default: the client is answered with an error of the
        proxy's; a request of the proxy's own logs it instead)."""
        fail = fail or self._fail_id
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            reader = EventReader(MAX_ANSWER)
            try:
                async for piece in response.body():
                    for data in reader.feed(piece):
                        answer = await self._event(request_id, data)
                        if answer is not None:
                            response.done()
                            return answer
                last = reader.close()
                if last is not None and (answer := await self._event(request_id, last)):
                    return answer
            except EventTooLarge:
                await fail(request_id, "an event is larger than the proxy reads")
                return None
            finally:
                if reader.dropped_events:
                    self._warn(
                        "junk",
                        f"{reader.dropped_events} events that are no JSON-RPC message "
                        f"dropped from {self.where}",
                    )
            if reader.last_id is not None and resumed < MAX_RESUMES:
                return await self._resume(request_id, method, reader, resumed + 1, fail)
            await fail(request_id, "the upstream's event stream ended without the response")
            return None
        body = await response.read_all(MAX_ANSWER)
        if body is None:
            await fail(request_id, "the answer is larger than the proxy reads")
            return None
        response.done()
        message = parse(body)
        del body
        if kind != "application/json" or message is None:
            await fail(
                request_id,
                f"the upstream server {self.where} answered {method} with no JSON-RPC "
                f"message ({kind or 'no content type'})",
            )
            return None
        answer = answer_to(message, request_id)
        if answer is None:
            await fail(request_id, "the upstream's answer names another request")
            return None
        return answer

    async def _event(self, request_id: Any, data: bytearray) -> dict[str, Any] | None:
        """One event of a request's stream: its response (returned), or a related message
        (delivered); a response naming another request is dropped, never anyone's answer."""
        message = parse(data)
        del data
        if message is None:
            self._warn("junk-event", f"an event that is no JSON-RPC message from {self.where}")
            return None
        if "method" in message:
            await self._deliver(message)
            return None
        answer = answer_to(message, request_id)
        if answer is None:
            self._warn("other-id", "a response on another request's stream: dropped")
        return answer

    async def _resume(
        self,
        request_id: Any,
        method: str | None,
        reader: EventReader,
        resumed: int,
        fail: Callable[[Any, str], Awaitable[None]],
    ) -> dict[str, Any] | None:
        """The stream ended after events with ids: GET it again from the last one."""
        await anyio.sleep((reader.retry or DEFAULT_RETRY_MS) / 1000)
        post = _Post({"jsonrpc": "2.0"}, b"", {}, None)
        headers = self._headers(post)
        headers.update({"accept": "text/event-stream", "last-event-id": reader.last_id or ""})
        headers.pop("content-type", None)
        async with self.pool.request("GET", b"", headers) as response:
            if response.status != 200:
                await fail(
                    request_id,
                    f"the upstream's event stream ended without the response and could not "
                    f"be resumed (HTTP {response.status})",
                )
                return None
            return await self._answer(request_id, response, method, resumed, fail)

    async def _refused(self, post: _Post, response: H1Response) -> None:
        refused = await refused_from(response.status, self.url, response.headers, response.read_all)
        self._warn(f"refused-{refused.status}", refused.describe(post.method or "a message"))
        if post.refusal is not None:
            post.refusal.refuse(refused)
        if post.is_request:
            await self._deliver(refused.error(post.id, post.method or "the request"))

    async def _http_error(self, post: _Post, response: H1Response) -> None:
        """A request answered with an HTTP error: the server's JSON-RPC error when its body
        holds one (with the request's id), else one of the proxy's naming the URL and the
        status."""
        status = response.status
        data = await response.read_all(64 * 1024)
        message = parse(data) if data else None
        text = self._status_text(status, post.method)
        self._warn(f"http-{status}", text)
        if message is not None and "error" in message and "method" not in message:
            await self._deliver({**message, "id": post.id})
            return
        await self._fail(post, text, {"url": self.where, "status": status})

    def _moved(self, location: str | None) -> bool:
        """A 307 / 308 to `location`: followed when it stays on the upstream's origin (once
        per place), and said in the log (the URL to configure)."""
        if not location or location in self._moves or len(self._moves) >= _MOVES_KEPT:
            return False
        self._moves.add(location)
        if not self.pool.moved_to(location):
            return False
        where = shown_url(self.pool.url)
        logger.warning("upstream %s redirects to %s: requests go there", self.where, where)
        self.url, self.where = self.pool.url, where
        return True

    def _status_text(self, status: int, method: str | None) -> str:
        if status in (404, 405) and not self._reached:
            return (
                f"no MCP endpoint at {self.where}: HTTP {status} to {method} (check the "
                "URL's path)"
            )
        return f"the upstream server {self.where} answered HTTP {status} to {method}"

    async def _fail(self, post: _Post, text: str, data: Any = None) -> None:
        if post.is_request:
            await self._fail_id(post.id, text, data)

    async def _log_failure(self, request_id: Any, text: str) -> None:
        """`_fail_id` for a request of the proxy's own: no client waits for its answer."""
        logger.warning("upstream %s: %s (%s)", self.where, text, request_id)

    async def _fail_id(self, request_id: Any, text: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": -32603, "message": f"conduit-mcp proxy: {text}"}
        error["data"] = data if data is not None else {"url": self.where}
        await self._deliver({"jsonrpc": "2.0", "id": request_id, "error": error})
        return None

    # -- a lost session opened again ---------------------------------------------------------

    async def _reopen(self, generation: int) -> bool:
        """After a 404 for the session of `generation`: open a new one (once, however many
        requests saw the 404); whether requests can go to it."""
        async with self._reopen_lock:
            if self._generation != generation:
                return self.session_id is not None  # another request opened it already
            ready = self._ready = anyio.Event()
            try:
                opened = await self._open_again()
            finally:
                ready.set()
            return opened

    async def _open_again(self) -> bool:
        lost, self.session_id = self.session_id, None
        self._stop_listening()
        if self._initialize is None or self._reopens >= MAX_REOPENS:
            why = (
                "no initialize to repeat"
                if self._initialize is None
                else f"opened again {MAX_REOPENS} times without a request succeeding"
            )
            self._ended = (
                f"the upstream server {self.where} ended the session (HTTP 404), {why}: "
                "not opened again until the client initializes"
            )
            logger.warning("%s", self._ended)
            return False
        self._reopens += 1
        logger.warning(
            "upstream %s ended session %s... (HTTP 404): initializing again",
            self.where,
            (lost or "")[:8],
        )
        request = {**self._initialize, "id": f"conduit-mcp-reinitialize-{next(self._reopen_ids)}"}
        post = _Post(request, dump(request), {}, None)
        try:
            async with self.pool.post(post.body, self._headers(post)) as response:
                if not 200 <= response.status < 300:
                    logger.warning(
                        "upstream %s: initialize again answered HTTP %s",
                        self.where,
                        response.status,
                    )
                    return False
                session = response.headers.get("mcp-session-id")
                answer = await self._answer(
                    request["id"], response, _INITIALIZE, fail=self._log_failure
                )
            result = answer.get("result") if answer is not None else None
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if version != self.version:
                logger.warning(
                    "upstream %s: the new session chose protocol version %r, the client's is "
                    "%r: not used",
                    self.where,
                    version,
                    self.version,
                )
                return False
            self.session_id = session
            self._generation += 1
            initialized = {"jsonrpc": "2.0", "method": _INITIALIZED}
            note = _Post(initialized, dump(initialized), {}, None)
            async with self.pool.post(note.body, self._headers(note)) as response:
                await _finish(response)
            await self._listen_now()
        except UpstreamUnreachable as exc:
            logger.warning("upstream %s unreachable while initializing again: %s", self.where, exc)
            return False
        await self._deliver({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return True

    # -- the GET stream ------------------------------------------------------------------

    async def _listen_now(self) -> None:
        """Open the GET stream for the server's own messages; wait (at most
        `LISTEN_HEAD_WAIT`) until its answer head came, so the client's next request finds
        its connection free again when the server offers no stream (405)."""
        if self.session_id is None or self._tg is None:
            return
        self._stop_listening()
        headed = anyio.Event()
        scope = self._listening = anyio.CancelScope()
        self._tg.start_soon(self._listen, self._generation, scope, headed)
        with anyio.move_on_after(LISTEN_HEAD_WAIT):
            await headed.wait()

    def _stop_listening(self) -> None:
        if self._listening is not None:
            self._listening.cancel()
            self._listening = None

    async def _listen(self, generation: int, scope: anyio.CancelScope, headed: anyio.Event) -> None:
        failures = 0
        last_id: str | None = None
        retry: int | None = None
        with scope:
            while failures < MAX_LISTEN_FAILURES and generation == self._generation:
                post = _Post({"jsonrpc": "2.0"}, b"", {}, None)
                headers = self._headers(post)
                headers["accept"] = "text/event-stream"
                headers.pop("content-type", None)
                if last_id is not None:
                    headers["last-event-id"] = last_id
                try:
                    async with self.pool.request("GET", b"", headers) as response:
                        headed.set()
                        status = response.status
                        kind = response.headers.get("content-type", "").split(";")[0].strip()
                        if status == 405:
                            await _finish(response)
                            return  # the server offers no stream
                        if status == 404:
                            await _finish(response)
                            self._tg.start_soon(self._reopen, generation)  # type: ignore[union-attr]
                            return
                        if status != 200 or kind.lower() != "text/event-stream":
                            failures += 1
                        else:
                            reader = EventReader(MAX_ANSWER)
                            async for piece in response.body():
                                for data in reader.feed(piece):
                                    await self._server_message(data)
                            failures = 0
                            last_id, retry = reader.last_id or last_id, reader.retry or retry
                except (UpstreamUnreachable, EventTooLarge):
                    headed.set()
                    failures += 1
                await anyio.sleep((retry or DEFAULT_RETRY_MS) / 1000)

    async def _server_message(self, data: bytearray) -> None:
        """One event of the GET stream: a request or a notification of the server's (a
        response has no request there to answer: dropped)."""
        message = parse(data)
        del data
        if message is None or "method" not in message:
            self._warn("get-junk", "an event on the GET stream that is no server message: dropped")
            return
        await self._deliver(message)

    async def _delete(self) -> None:
        """End the session (DELETE), when there is one; then the GET stream."""
        try:
            await self._send_delete()
        finally:
            self._stop_listening()

    async def _send_delete(self) -> None:
        if self.session_id is None:
            return
        post = _Post({"jsonrpc": "2.0"}, b"", {}, None)
        headers = self._headers(post)
        headers.pop("content-type", None)
        with anyio.move_on_after(DELETE_TIMEOUT):
            try:
                async with self.pool.request("DELETE", b"", headers) as response:
                    await _finish(response)
            except UpstreamUnreachable:
                pass

    def _warn(self, key: str, text: str) -> None:
        """Log `text` once per session per `key` (the rest are counted)."""
        seen = self._warned.get(key)
        if seen is None and len(self._warned) < _WARNINGS_KEPT:
            self._warned[key] = 1
            logger.warning("%s", text)
        elif seen is not None:
            self._warned[key] = seen + 1


async def _finish(response: H1Response) -> None:
    """Read a small body to its end (the connection is kept), or leave it to be drained."""
    response.done()


def _key(request_id: Any) -> str:
    return f"{type(request_id).__name__}:{request_id}"


@asynccontextmanager
async def http_upstream(upstream: HttpUpstream) -> AsyncIterator[tuple[Any, Any]]:
    """A session to `upstream` as the SDK's stream pair: yields `(read, write)`, a receive
    stream of `SessionMessage | Exception` and a send stream of `SessionMessage` (what
    `GuardSeam.wrap` takes; each session of the HTTP listener). A message's
    `ClientMessageMetadata.headers` go with it; an `UpstreamMetadata.refusal` gets a 401 / 403
    as the upstream sent it. An upstream only an environment HTTP proxy reaches goes through
    the SDK's client instead (`_sdk`; `_pool.direct_available`)."""
    if not direct_available(upstream.url):
        async with sdk_upstream(upstream) as pair:
            yield pair
        return
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def deliver(message: dict[str, Any]) -> None:
        item: SessionMessage | Exception
        try:
            item = SessionMessage(jsonrpc_message_adapter.validate_python(message, by_name=False))
        except Exception as exc:  # pydantic.ValidationError: what the SDK could not read
            item = exc
        try:
            await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is ending

    with send, receive:
        async with UpstreamSession(upstream, deliver) as session:
            yield receive, _Writer(session)


class _Writer:
    """The send side of `http_upstream`: each `SessionMessage` to the session client."""

    def __init__(self, session: UpstreamSession) -> None:
        self._session = session

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        metadata = item.metadata
        headers = metadata.headers if isinstance(metadata, ClientMessageMetadata) else None
        refusal = metadata.refusal if isinstance(metadata, UpstreamMetadata) else None
        await self._session.send(message, None, headers, refusal)

    async def aclose(self) -> None:
        return None
