"""OpenTelemetry traces of the proxy: a span per request relayed and per guard decision.

Not a public module. Off unless the standard variables configure an exporter
(`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
`OTEL_TRACES_EXPORTER=otlp`; `OTEL_SDK_DISABLED=true` wins): `Tracing.from_env` then builds a
tracer provider exporting over OTLP/HTTP (the `otel` extra: opentelemetry-sdk and its OTLP
exporter, which read the other `OTEL_*` variables themselves), else returns `None` and the
proxy pays one `is None` test per message.

A request span (kind SERVER, named `"{method} {tool}"` or `"{method}"`) continues the trace
its client started: W3C trace context from the request's `params._meta.traceparent` (and
`tracestate`; MCP's `_meta` carries it, as the SDKs' own instrumentation writes it), else from
the HTTP request's `traceparent` header (the HTTP listener reads the header first, `_meta`
when it is absent). The request goes on with the span's own context: to a stdio server as
`params._meta.traceparent`, to an HTTP upstream as the `traceparent` header. A guard decision
(a `GuardEvent`) is a span of its own under the request it concerns.

Open spans are keyed by request id within a `scope`: the stdio proxy has one connection (no
scope); the HTTP listener keys each session's requests by the session (ids overlap between
sessions) and its stateless requests by the unique ids the router gives them upstream.

Attributes follow OpenTelemetry's MCP semantic conventions where they name a thing
(`mcp.method.name`, `gen_ai.tool.name`, `mcp.protocol.version`, `jsonrpc.request.id`), and
`conduit_mcp.*` for the guard's (`server_id`, `verdict`, `reason`, `event.kind`). Never an
argument, a result or a header value.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from .._program import install_command

logger = logging.getLogger("conduit_mcp.proxy")

#: Requests in flight whose spans are kept (the guard's own table is 4,096): past it the
#: oldest is ended as `abandoned`, so memory never grows with a connection's history.
MAX_OPEN_SPANS: Final = 4096
_NAMES: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


def configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the `OTEL_*` variables ask for traces (see the module docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return exporter == "otlp" or bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


class Tracing:
    """The proxy's tracer (one per proxy process).

    Args:
        server_id: the operator-assigned server id, on every span.
        provider: an OpenTelemetry `TracerProvider` (tests pass one with an in-memory
            exporter); `None`: one exporting over OTLP/HTTP as the `OTEL_*` variables say.

    Raises:
        ImportError: the `otel` extra is not installed (the message names the install line).
    """

    def __init__(self, server_id: str, provider: Any = None) -> None:
        try:
            from opentelemetry import context, trace
            from opentelemetry.trace.propagation.tracecontext import (
                TraceContextTextMapPropagator,
            )
        except ImportError as exc:
            raise ImportError(f"traces need the otel extra: {install_command('otel')}") from exc
        if provider is None:
            provider = _otlp_provider()
        self.server_id = server_id
        self.provider = provider
        self._trace = trace
        self._context = context
        self._tracer = provider.get_tracer("conduit_mcp.proxy")
        self._propagator = TraceContextTextMapPropagator()
        #: open request spans by `_key`: `[span, tool, sent upstream, the server's answer]`
        self._open: OrderedDict[Any, list[Any]] = OrderedDict()

    @classmethod
    def from_env(cls, server_id: str) -> Tracing | None:
        """A `Tracing` when the `OTEL_*` variables configure one, else `None`.

        Raises:
            ImportError: configured, and the `otel` extra is missing.
        """
        return cls(server_id) if configured() else None

    # -- requests --------------------------------------------------------------------------

    def request(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        protocol_version: str | None = None,
        *,
        scope: Any = None,
        header_first: bool = False,
        key: Any = None,
    ) -> Any:
        """Start the span of a client's request (`None` for a message that is no request),
        its parent from `params._meta.traceparent` or `headers["traceparent"]` (the header
        first with `header_first`); kept until `answered(id, ...)` (or `close_scope`).

        Args:
            message: the request as a JSON-RPC `dict` (`method`, `id`, `params`).
            headers: the HTTP request's headers (names lower-cased), or `None`.
            protocol_version: the connection's MCP version, when known.
            scope: what the request id is unique within (a listener session), or `None`.
            header_first: read the `traceparent` header before `_meta` (the HTTP listener).
            key: the id the span is kept under (the unique id a stateless request has
                upstream), when not the message's own (`jsonrpc.request.id`, the client's).

        Returns:
            The span.
        """
        method = message.get("method")
        request_id = message.get("id")
        if not isinstance(method, str) or request_id is None or isinstance(request_id, bool):
            return None
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        carrier = _carrier(params.get("_meta"), headers, header_first)
        parent = self._propagator.extract(carrier) if carrier else None
        tool = params.get("name") if method in _NAMES else None
        tool = tool if isinstance(tool, str) else None
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "jsonrpc.request.id": str(request_id)[:64],
            "conduit_mcp.server_id": self.server_id,
        }
        if tool is not None:
            attributes["gen_ai.tool.name"] = tool[:256]
        if protocol_version:
            attributes["mcp.protocol.version"] = protocol_version
        name = f"{method} {tool[:128]}" if tool is not None else method
        span = self._tracer.start_span(
            name[:200], context=parent, kind=self._trace.SpanKind.SERVER, attributes=attributes
        )
        key = _key(request_id if key is None else key, scope)
        earlier = self._open.pop(key, None)
        if earlier is not None:  # the same id again before its answer: the first is over
            _end(earlier[0], "abandoned")
        self._open[key] = [span, tool, False, None]
        if len(self._open) > MAX_OPEN_SPANS:
            _, oldest = self._open.popitem(last=False)
            _end(oldest[0], "abandoned")
        return span

    def span_of(self, request_id: Any, scope: Any = None) -> Any:
        """The open span of the request `request_id` (in `scope`), or `None`."""
        found = self._open.get(_key(request_id, scope))
        return None if found is None else found[0]

    def sent(self, request_id: Any, scope: Any = None) -> Any:
        """The request went upstream (past the guard): its open span, or `None`."""
        found = self._open.get(_key(request_id, scope))
        if found is None:
            return None
        found[2] = True
        return found[0]

    def server_answered(self, request_id: Any, answer: Any, scope: Any = None) -> Any:
        """The server's answer `answer` (any object; compared by identity in `verdict`) to the
        request came, before the guard read it: its open span, or `None`."""
        found = self._open.get(_key(request_id, scope))
        if found is None:
            return None
        found[3] = answer
        return found[0]

    def verdict(
        self, request_id: Any, answer: Any, error: Any, scope: Any = None
    ) -> tuple[str, str | None] | None:
        """What the client's answer `answer` (after the guard) says of the request, from what
        `sent` and `server_answered` noted: `("refused", reason)` (never sent: the guard or
        the tool policy answered), `("passed" | "error", None)` (the server's own answer,
        untouched), `("withheld", reason)` (the guard replaced it); `None` when no span is
        open. `error`: the answer's JSON-RPC `error` object as a `dict`, or `None`."""
        found = self._open.get(_key(request_id, scope))
        if found is None:
            return None
        data = error.get("data") if isinstance(error, dict) else None
        reason = data.get("reason") if isinstance(data, dict) else None
        reason = reason if isinstance(reason, str) else None
        if not found[2]:
            return "refused", reason
        if found[3] is answer:
            return ("error" if error is not None else "passed"), None
        return "withheld", reason

    def close_scope(self, scope: Any, verdict: str = "abandoned") -> None:
        """End every open span of `scope` (a session that ended: its answers never come)."""
        keys = [
            key
            for key in self._open
            if isinstance(key, tuple) and key[0] is _SCOPED and key[1] == scope
        ]
        for key in keys:
            _end(self._open.pop(key)[0], verdict)

    def answered(
        self, request_id: Any, verdict: str, reason: str | None = None, scope: Any = None
    ) -> None:
        """End the span of `request_id` (in `scope`; nothing when none is open): `verdict` is
        `"passed"` (the server's answer went on), `"refused"` (the guard answered),
        `"withheld"` (the guard replaced the answer), `"error"` (the server answered an
        error), `"cancelled"` (the client gave up on it, or left)."""
        found = self._open.pop(_key(request_id, scope), None)
        if found is None:
            return
        span = found[0]
        span.set_attribute("conduit_mcp.verdict", verdict)
        if reason:
            span.set_attribute("conduit_mcp.reason", reason[:64])
        if verdict in ("refused", "error"):
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, reason or verdict))
        span.end()

    def traceparent(self, span: Any) -> dict[str, str]:
        """The W3C trace context of `span` (`traceparent`, and `tracestate` when any): the
        headers for an HTTP upstream, or the members for `_meta`."""
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=self._trace.set_span_in_context(span))
        return carrier

    def with_meta(self, message: Mapping[str, Any], span: Any) -> dict[str, Any]:
        """A copy of `message` whose `params._meta` carries `span`'s trace context (for a
        stdio server; the rest of the message unchanged)."""
        params = message.get("params")
        params = dict(params) if isinstance(params, dict) else {}
        meta = params.get("_meta")
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta.update(self.traceparent(span))
        params["_meta"] = meta
        return {**message, "params": params}

    def enter(self, span: Any) -> Any:
        """Make `span` current on this thread (guard decisions taken now are its children);
        returns the token for `leave`."""
        return self._context.attach(self._trace.set_span_in_context(span))

    def leave(self, token: Any) -> None:
        """Undo `enter`."""
        self._context.detach(token)

    def clear(self) -> None:
        """No span current in this task from now on (a long-lived task started while a
        request's span was current does not inherit it)."""
        self._context.attach(self._context.Context())

    # -- guard decisions ---------------------------------------------------------------------

    def on_event(self, event: Any) -> None:
        """One span per guard decision (the guard's `on_event` callback), under the request it
        concerns (its `details["request_id"]`), else under the current span."""
        parent = None
        request_id = event.details.get("request_id") if event.details else None
        if request_id is not None:
            span = self.span_of(request_id)
            if span is None and isinstance(request_id, str) and request_id.lstrip("-").isdigit():
                span = self.span_of(int(request_id))
            if span is not None:
                parent = self._trace.set_span_in_context(span)
        attributes: dict[str, Any] = {
            "conduit_mcp.server_id": event.server_id or self.server_id,
            "conduit_mcp.event.kind": event.kind,
            "conduit_mcp.verdict": event.decision,
            "conduit_mcp.reason": event.reason,
        }
        if event.tool is not None:
            attributes["gen_ai.tool.name"] = str(event.tool)[:256]
        version = event.details.get("protocol_version") if event.details else None
        if isinstance(version, str):
            attributes["mcp.protocol.version"] = version
        span = self._tracer.start_span(f"guard {event.kind}", context=parent, attributes=attributes)
        if event.decision in ("refused", "withheld", "blocked", "removed"):
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.reason))
        span.end()

    def shutdown(self) -> None:
        """End what is open (`abandoned`) and flush the exporter (bounded by the SDK's own
        export timeout)."""
        while self._open:
            _, found = self._open.popitem(last=False)
            _end(found[0], "abandoned")
        try:
            self.provider.shutdown()
        except Exception:  # an exporter that cannot reach its collector: logged by the SDK
            logger.warning("traces: the exporter could not flush at exit")


#: The first member of a scoped key (no request id is this object).
_SCOPED: Final = object()


def _key(request_id: Any, scope: Any = None) -> Any:
    key = (type(request_id).__name__, request_id) if not isinstance(request_id, str) else request_id
    return key if scope is None else (_SCOPED, scope, key)


def _end(span: Any, verdict: str) -> None:
    span.set_attribute("conduit_mcp.verdict", verdict)
    span.end()


def _carrier(
    meta: Any, headers: Mapping[str, str] | None, header_first: bool = False
) -> dict[str, str]:
    carrier: dict[str, str] = {}
    in_meta = isinstance(meta, dict) and isinstance(meta.get("traceparent"), str)
    in_headers = headers is not None and bool(headers.get("traceparent"))
    if in_meta and not (header_first and in_headers):
        carrier["traceparent"] = meta["traceparent"][:256]
        if isinstance(meta.get("tracestate"), str):
            carrier["tracestate"] = meta["tracestate"][:512]
    elif in_headers:
        assert headers is not None
        carrier["traceparent"] = headers["traceparent"][:256]
        if headers.get("tracestate"):
            carrier["tracestate"] = headers["tracestate"][:512]
    return carrier


def _otlp_provider() -> Any:
    """A tracer provider exporting over OTLP/HTTP in batches (endpoint, headers, timeouts,
    service name and resource from the `OTEL_*` variables, read by the SDK)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME") or "conduit-mcp-proxy"}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


class TraceStamp:
    """An upstream send stream (of the SDK's `SessionMessage`s, beneath the guard: what it
    sends, the guard let through) that passes each request's trace on: a request whose span
    is open (`Tracing.sent`) goes to an HTTP upstream with the span's `traceparent` header
    (the message's other metadata kept), to a server process with it in
    `params._meta.traceparent`; everything else passes unchanged.

    Args:
        inner: the send stream (for an HTTP upstream, the `HeaderStamp` in front of the
            SDK's transport).
        tracing: the proxy's `Tracing`.
        scope: the scope of the connection's request ids (`Tracing.request`).
        stdio: the upstream is a server process (`_meta`), not an HTTP server (the header).
    """

    def __init__(self, inner: Any, tracing: Tracing, scope: Any = None, stdio: bool = False):
        self._inner = inner
        self._tracing = tracing
        self._scope = scope
        self._stdio = stdio

    async def send(self, item: Any, /) -> None:
        import dataclasses

        from mcp.shared.message import ClientMessageMetadata, SessionMessage
        from mcp.types.jsonrpc import JSONRPCRequest

        message = getattr(item, "message", None)
        if isinstance(item, SessionMessage) and isinstance(message, JSONRPCRequest):
            span = self._tracing.sent(message.id, self._scope)
            if span is not None and self._stdio:
                plain = {"params": message.params}
                params = self._tracing.with_meta(plain, span)["params"]
                item = SessionMessage(
                    message.model_copy(update={"params": params}), metadata=item.metadata
                )
            elif span is not None:
                old = item.metadata if isinstance(item.metadata, ClientMessageMetadata) else None
                headers = {**((old.headers or {}) if old is not None else {})}
                headers.update(self._tracing.traceparent(span))
                metadata = (  # a subclass's own fields kept (`_refused.UpstreamMetadata`)
                    dataclasses.replace(old, headers=headers)
                    if old is not None
                    else ClientMessageMetadata(headers=headers)
                )
                item = SessionMessage(message, metadata=metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TraceTap:
    """An upstream read stream (beneath the guard) that notes each server answer to a request
    whose span is open (`Tracing.server_answered`: `verdict` tells the guard's replacement
    from the server's own answer) and makes that span current until the next message is
    read, so the guard's decisions on the answer are the span's children.

    Args:
        inner: the receive stream of `SessionMessage | Exception` from the upstream.
        tracing: the proxy's `Tracing`.
        scope: the scope of the connection's request ids.
    """

    def __init__(self, inner: Any, tracing: Tracing, scope: Any = None) -> None:
        self._inner = inner
        self._tracing = tracing
        self._scope = scope
        self._token: Any = None

    async def receive(self) -> Any:
        if self._token is not None:
            token, self._token = self._token, None
            self._tracing.leave(token)
        item = await self._inner.receive()
        message = getattr(item, "message", None)
        if message is not None and not hasattr(message, "method"):
            request_id = getattr(message, "id", None)
            if request_id is not None:
                span = self._tracing.server_answered(request_id, message, self._scope)
                if span is not None:
                    self._token = self._tracing.enter(span)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TraceEnd:
    """A downstream send stream (after the guard) that ends the span of each request its
    answer goes by, with the verdict `Tracing.verdict` reads (refused, passed, error,
    withheld, and the guard's reason).

    Args:
        inner: the send stream to the client.
        tracing: the proxy's `Tracing`.
        scope: the scope of the connection's request ids.
    """

    def __init__(self, inner: Any, tracing: Tracing, scope: Any = None) -> None:
        self._inner = inner
        self._tracing = tracing
        self._scope = scope

    async def send(self, item: Any, /) -> None:
        message = getattr(item, "message", None)
        if message is not None and not hasattr(message, "method"):
            request_id = getattr(message, "id", None)
            if request_id is not None:
                error = getattr(message, "error", None)
                plain = error.model_dump(exclude_none=True) if error is not None else None
                ended = self._tracing.verdict(request_id, message, plain, self._scope)
                if ended is not None:
                    self._tracing.answered(request_id, *ended, scope=self._scope)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
