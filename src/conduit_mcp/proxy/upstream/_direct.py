"""2026-07-28 stateless requests to a Streamable HTTP upstream without the SDK's client: each
client request is one POST on a pooled keep-alive connection (`_pool.H1Pool`), its answer read
as one JSON object or as an event stream, every message through the guard as a plain
JSON-RPC `dict` (`GuardSeam.connect`, the engine the stdio relay uses).

Not a public module.

Spec: MCP 2026-07-28 basic/transports "Streamable HTTP": a request is POSTed with `Accept:
application/json, text/event-stream`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
`Mcp-Param-*` headers its tool's `x-mcp-header` arguments call for (`_headers.request_headers`,
computed from the message the guard let through); the answer is `application/json` (the
response) or `text/event-stream` (messages related to the request, last the response); closing
the response stream cancels the request. `Authorization` from the client is forwarded with the
request, never logged. Request ids are made unique on the way up (one guard engine serves every
client) and restored on the way down; the `subscriptionId` a listen stream's notifications name
is mapped back alike.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Callable
from typing import Any, Final

from .._seam import GuardSeam, MessageLink
from .._settings import HttpUpstream
from ._headers import request_headers_for
from ._pool import H1Pool, UpstreamUnreachable, shown_url
from ._refused import REFUSALS, Refused, refused_from
from ._sse import EventReader, EventTooLarge
from ._wire import answer_to, dump, parse

logger = logging.getLogger("conduit_mcp.proxy")

#: The scope of the listener's stateless requests' spans (`_tracing.Tracing.request`): their
#: upstream ids are unique across clients; a session's scope is its id (32 hex digits).
TRACE_SCOPE: Final = "stateless"
#: `_meta` key naming the `subscriptions/listen` request a notification belongs to.
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"
#: The largest answer (JSON body or one SSE event) read from the upstream (bytes).
MAX_ANSWER: Final = 512 * 1024 * 1024
_ACCEPT: Final = "application/json, text/event-stream"
#: The credentials of the client request being gated: a listing the guard makes for that
#: request goes with them (never with another client's).
_AUTHORIZATION: contextvars.ContextVar[tuple[str | None, str | None]] = contextvars.ContextVar(
    "conduit_mcp_proxy_authorization", default=(None, None)
)


class UpstreamFailed(Exception):
    """The upstream did not answer with a JSON-RPC message: `message` says how (the URL and
    the status; no credentials, no body content)."""


class UpstreamRefused(UpstreamFailed):
    """The upstream refused the request's credentials (HTTP 401 / 403): `refused` is its
    answer, for the client as sent."""

    def __init__(self, refused: Refused, method: str) -> None:
        super().__init__(refused.describe(method))
        self.refused = refused


class DirectUpstream:
    """The guard and a connection pool for one `HttpUpstream`, shared by every stateless
    request of the listener.

    Args:
        seam: the guard.
        upstream: the server (its `headers` go with every request).
    """

    def __init__(self, seam: GuardSeam, upstream: HttpUpstream) -> None:
        self.seam = seam
        self.url = upstream.url
        self.where = shown_url(upstream.url)
        self.pool = H1Pool(upstream.url, {**upstream.headers, "accept": _ACCEPT})
        self.link: MessageLink = seam.connect(self._own, transport="streamable-http")
        self._ids = itertools.count(1)
        #: open `subscriptions/listen` streams: upstream id -> writes one of the guard's own
        #: notifications (`notifications/tools/list_changed`) on that client's stream.
        self.listening: dict[str, Callable[[dict[str, Any]], object]] = {}
        self._delivering = False
        #: the proxy's traces (`_tracing.Tracing`), else `None`
        self.tracing: Any = getattr(seam, "tracing", None)

    def _deliver(self, messages: list[dict[str, Any]]) -> None:
        """The guard's own notifications, each stamped with the listen stream it is for
        (`guard._notify`): handed to that stream's writer; one whose stream has closed is
        dropped (its client sees the change at its next listing)."""
        for message in messages:
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            stream = meta.get(SUBSCRIPTION_ID_META_KEY) if isinstance(meta, dict) else None
            write = self.listening.get(stream) if isinstance(stream, str) else None
            if write is not None:
                write(message)

    def upstream_id(self) -> str:
        """A request id no other request in flight upstream has."""
        return f"conduit-{next(self._ids)}"

    async def _own(self, request: dict[str, Any]) -> None:
        """A request of the guard's own (the listing before an unlisted call): POSTed with the
        credentials of the call that needed it, every message it brings back through the
        guard (which keeps the answer from any client)."""

        async def ignore(message: dict[str, Any]) -> None:
            return None

        authorization, version = _AUTHORIZATION.get()
        try:
            await self.post(request, authorization, version, ignore)
        except UpstreamFailed as exc:
            logger.warning("the guard's own listing failed: %s", exc)

    async def notify(
        self, message: dict[str, Any], authorization: str | None, version: str | None
    ) -> None:
        """A client notification: through the guard, then POSTed (the answer, 202, unread).
        `version`: the client's `MCP-Protocol-Version`."""
        action, replaced = await self.link.from_client(message)
        if action in ("drop", "answer"):
            return
        sent = replaced if replaced is not None else message
        headers = _headers(sent, self.seam, authorization, version)
        try:
            async with self.pool.post(dump(sent), headers) as response:
                response.done()
        except UpstreamUnreachable as exc:
            logger.warning("a notification could not reach the upstream %s: %s", self.where, exc)

    async def gate(
        self, request: dict[str, Any], authorization: str | None, version: str | None
    ) -> tuple[str, dict[str, Any] | None]:
        """The guard on a client request (ids already made unique): `("pass", message to
        send)` or `("answer", the guard's response)`; a request the guard drops is answered
        with an error. `authorization`, `version`: the client's headers (for a listing the
        guard makes first)."""
        if not self._delivering:  # the first request: on the loop the guard's notices use
            self._delivering = True
            self.link.send_notices_to(self._deliver)
        _AUTHORIZATION.set((authorization, version))
        action, replaced = await self.link.from_client(request)
        if action == "answer":
            return "answer", replaced
        if action == "drop":
            error = {"code": -32603, "message": "conduit-mcp proxy: the guard dropped the request"}
            return "answer", {"jsonrpc": "2.0", "id": request["id"], "error": error}
        return "pass", replaced if replaced is not None else request

    async def forget(self, upstream_id: str) -> None:
        """The guard stops waiting for `upstream_id` (its client left, or the upstream failed)."""
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": upstream_id},
        }
        await self.link.from_client(cancel)

    async def post(
        self,
        request: dict[str, Any],
        authorization: str | None,
        version: str | None,
        related: Callable[[dict[str, Any]], Any],
        trace: dict[str, str] | None = None,
    ) -> tuple[dict[str, Any] | None, bool]:
        """POST `request` (already through the guard); each message of the answer through the
        guard; `await related(message)` for each one before the response (those the guard
        lets through); returns the response as the guard let it through, or `None` when the
        guard kept it back (the answer to its own listing, or one it refused to pass), and
        whether it is an error the upstream wrote (sent as an error, passed on or cleaned by
        the guard: never the guard's refusal, whatever its `data.source` names; the guard's
        own error in place of a result it withheld is not). Only
        a response naming this request is its answer: one naming another request (in flight
        for another client, perhaps) is dropped before the guard reads it. `trace`: the
        request span's W3C trace context headers (`traceparent`), sent with it.

        Raises:
            UpstreamRefused: the upstream answered 401 or 403.
            UpstreamFailed: unreachable, an HTTP error without a JSON-RPC answer, an answer
                that is not JSON-RPC, or a stream that ended without the response.
        """
        upstream_id = request["id"]
        method = request.get("method", "the request")
        try:
            headers = _headers(request, self.seam, authorization, version)
            if trace:
                headers.update(trace)
            async with self.pool.post(dump(request), headers) as response:
                status = response.status
                if status in REFUSALS:
                    refused = await refused_from(
                        status, self.url, response.headers, response.read_all
                    )
                    raise UpstreamRefused(refused, method)
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "text/event-stream" and status == 200:
                    found = await self._events(response, upstream_id, related)
                    response.done()
                    return await self._answered(found)
                data = await response.read_all(MAX_ANSWER)
                if data is None:
                    raise UpstreamFailed("the answer is larger than the proxy accepts")
                if kind != "application/json":
                    raise UpstreamFailed(
                        f"the upstream server {self.where} answered HTTP {status} to {method}"
                        f" ({kind or 'no content type'})"
                    )
        except UpstreamUnreachable as exc:
            raise UpstreamFailed(
                f"the upstream server {self.where} could not be reached ({exc})"
            ) from None
        message = parse(data)
        del data  # the body is not held beside the parsed answer
        if message is None or "method" in message:
            raise UpstreamFailed(
                f"the upstream server {self.where} answered HTTP {status} to {method} with no"
                " JSON-RPC response in the body"
            )
        answer = answer_to(message, upstream_id)
        if answer is None:
            raise UpstreamFailed("the response names another request")
        return await self._answered(answer)

    async def _answered(self, answer: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        """The upstream's response through the guard, and whether what the client gets is an
        error the upstream wrote (`post`)."""
        seen = await self._guarded(answer)
        return seen, seen is not None and "error" in seen and "error" in answer

    async def _events(
        self, response: Any, upstream_id: str, related: Callable[[dict[str, Any]], Any]
    ) -> dict[str, Any]:
        """The response to `upstream_id` in an event stream (as the upstream sent it: not yet
        through the guard); the other messages through the guard to `related`."""
        reader = EventReader(MAX_ANSWER)
        unread = 0  # events the reader kept that are no JSON-RPC message after all
        try:
            async for piece in response.body():
                for data in reader.feed(piece):
                    message = parse(data)
                    del data
                    if message is None:
                        unread += 1
                        continue
                    if "method" not in message:
                        answer = answer_to(message, upstream_id)
                        if answer is None:
                            logger.warning(
                                "a response on another request's stream from %s: dropped",
                                self.where,
                            )
                            continue
                        return answer
                    seen = await self._guarded(message)
                    if seen is not None and "method" in seen:
                        await related(seen)
        except EventTooLarge:
            raise UpstreamFailed("an event is larger than the proxy accepts") from None
        finally:
            if reader.dropped_events or unread:
                logger.warning(
                    "%s events that are no JSON-RPC message from %s: dropped",
                    reader.dropped_events + unread,
                    self.where,
                )
        last = reader.close()
        if last is not None and (message := parse(last)) is not None:
            answer = answer_to(message, upstream_id)
            if answer is not None:
                return answer
        raise UpstreamFailed("the event stream ended without the response")

    async def _guarded(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """One message from the upstream through the guard: what the client may see, or
        `None` (dropped by the guard)."""
        tracing = self.tracing
        if tracing is None or "method" in message:
            action, replaced = await self.link.from_server(message)
        else:  # an answer: the guard's decisions under its request's span, which it ends
            span = tracing.span_of(message.get("id"), TRACE_SCOPE)
            token = tracing.enter(span) if span is not None else None
            try:
                action, replaced = await self.link.from_server(message)
            finally:
                if token is not None:
                    tracing.leave(token)
            if span is not None:
                _trace_end(tracing, message, action, replaced)
        if action == "drop":
            return None
        return replaced if replaced is not None else message


def _trace_end(tracing: Any, message: dict[str, Any], action: str, replaced: Any) -> None:
    """End the span of the request `message` answers: `error` for the server's own error,
    `withheld` when the guard replaced or dropped the answer, else `passed`."""
    request_id = message.get("id")
    if action == "pass":
        verdict = "error" if "error" in message else "passed"
        tracing.answered(request_id, verdict, scope=TRACE_SCOPE)
        return
    error = replaced.get("error") if isinstance(replaced, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    reason = data.get("reason") if isinstance(data, dict) else None
    reason = reason if isinstance(reason, str) else None
    tracing.answered(request_id, "withheld", reason, scope=TRACE_SCOPE)


def restore(message: dict[str, Any], upstream_id: str, client_id: Any) -> dict[str, Any]:
    """`message` with the client's ids: a response's `id`, a listen stream notification's
    `subscriptionId`."""
    if "method" not in message:
        return {**message, "id": client_id}
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID_META_KEY) == upstream_id:
        meta = {**meta, SUBSCRIPTION_ID_META_KEY: client_id}
        return {**message, "params": {**params, "_meta": meta}}  # type: ignore[dict-item]
    return message


def _headers(
    message: dict[str, Any], seam: GuardSeam, authorization: str | None, version: str | None
) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        **request_headers_for(message, seam.raw_tool, version),
    }
    if authorization:
        headers["authorization"] = authorization
    return headers
