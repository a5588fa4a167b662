"""`proxy/_tracing.py` in process: when the `OTEL_*` variables turn traces on (the
specification's names: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and the spans a connection keeps open bounded whatever its
history (an in-memory exporter of the OpenTelemetry SDK reads them)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from conduit_mcp.proxy import _tracing
from conduit_mcp.proxy._tracing import Tracing, configured


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, True),
    ],
)
def test_traces_are_on_only_when_configured(environ: dict[str, str], expected: bool) -> None:
    """Spec-mandated (OpenTelemetry SDK environment variables): disabled wins, `none`
    exporter off, an OTLP endpoint on."""
    assert configured(environ) is expected


def _in_memory() -> tuple[Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing("demo", provider), exporter


def test_open_spans_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """conduit-defined: past the bound the oldest request's span ends as `abandoned`; memory
    follows the requests in flight, not the connection's history."""
    monkeypatch.setattr(_tracing, "MAX_OPEN_SPANS", 8)
    tracing, exporter = _in_memory()
    for n in range(20):
        tracing.request({"jsonrpc": "2.0", "id": n, "method": "ping"})
    assert len(tracing._open) == 8
    ended = exporter.get_finished_spans()
    assert [s.attributes["jsonrpc.request.id"] for s in ended] == [str(n) for n in range(12)]
    assert {s.attributes["conduit_mcp.verdict"] for s in ended} == {"abandoned"}
    tracing.answered(19, "passed")
    tracing.answered(19, "passed")  # answered twice (a forged answer): nothing more
    assert len(exporter.get_finished_spans()) == 13
    tracing.shutdown()
    assert len(exporter.get_finished_spans()) == 20


def test_ids_of_other_types_are_other_requests() -> None:
    """Spec-mandated (JSON-RPC 2.0 section 4: an id is a string or a number): `1` and `"1"`
    are two requests; notifications and answers start no span."""
    tracing, exporter = _in_memory()
    assert tracing.request({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert tracing.request({"jsonrpc": "2.0", "id": 1, "result": {}}) is None
    tracing.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    tracing.request({"jsonrpc": "2.0", "id": "1", "method": "tools/call", "params": {"name": "x"}})
    tracing.answered("1", "refused", "tool_held")
    (span,) = exporter.get_finished_spans()
    assert span.name == "tools/call x"
    assert span.attributes["conduit_mcp.reason"] == "tool_held"
    assert tracing.span_of(1) is not None


def test_scoped_ids_are_apart_and_a_closed_scope_ends_its_spans() -> None:
    """conduit-defined (the listener's keys): the same id in two sessions is two requests; a
    session that ends ends its open spans (`abandoned`), the other session's stay open; a
    cancelled request's span ends `cancelled`."""
    tracing, exporter = _in_memory()
    for scope in ("a", "b"):
        tracing.request({"jsonrpc": "2.0", "id": 1, "method": "ping"}, scope=scope)
        tracing.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}, scope=scope)
    tracing.request({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # no scope: apart too
    assert len(tracing._open) == 5
    tracing.answered(2, "cancelled", scope="b")
    tracing.close_scope("a")
    ended = {
        (s.attributes["jsonrpc.request.id"], s.attributes["conduit_mcp.verdict"])
        for s in exporter.get_finished_spans()
    }
    assert ended == {("1", "abandoned"), ("2", "abandoned"), ("2", "cancelled")}
    assert tracing.span_of(1, "b") is not None and tracing.span_of(1) is not None
    assert tracing.span_of(1, "a") is None


def test_a_stateless_span_is_kept_under_its_upstream_id() -> None:
    """conduit-defined: the span names the client's id (`jsonrpc.request.id`) and is found by
    the unique id the router gave the request upstream."""
    tracing, exporter = _in_memory()
    tracing.request({"jsonrpc": "2.0", "id": 1, "method": "ping"}, scope="s", key="conduit-7")
    assert tracing.span_of(1, "s") is None
    tracing.answered("conduit-7", "passed", scope="s")
    (span,) = exporter.get_finished_spans()
    assert span.attributes["jsonrpc.request.id"] == "1"


TRACE_A = "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-00f067aa0ba902b7-01"
TRACE_B = "00-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-00f067aa0ba902b7-01"


@pytest.mark.parametrize(
    ("meta", "headers", "header_first", "trace_id"),
    [
        ({"traceparent": TRACE_A}, {"traceparent": TRACE_B}, False, "a" * 32),  # stdio: _meta
        ({"traceparent": TRACE_A}, {"traceparent": TRACE_B}, True, "b" * 32),  # HTTP: header
        ({"traceparent": TRACE_A}, {}, True, "a" * 32),  # no header: _meta
        ({}, {"traceparent": TRACE_B}, False, "b" * 32),  # no _meta: the header
    ],
)
def test_which_trace_context_a_request_continues(
    meta: dict[str, str], headers: dict[str, str], header_first: bool, trace_id: str
) -> None:
    """Spec-mandated (W3C Trace Context `traceparent`: version-traceid-parentid-flags); which
    carrier wins is conduit-defined: the HTTP listener reads the header first."""
    tracing, exporter = _in_memory()
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta}}
    tracing.request(message, headers, header_first=header_first)
    tracing.answered(1, "passed")
    (span,) = exporter.get_finished_spans()
    assert format(span.context.trace_id, "032x") == trace_id
    assert format(span.parent.span_id, "016x") == "00f067aa0ba902b7"


def test_verdict_from_what_was_sent_and_answered() -> None:
    """conduit-defined: never sent upstream -> refused (with the guard's reason); the server's
    own answer untouched -> passed (error for its error); another object -> withheld."""
    tracing, _ = _in_memory()
    for n in range(4):
        tracing.request({"jsonrpc": "2.0", "id": n, "method": "tools/call"}, scope="s")
    refusal = {"code": -32602, "message": "no", "data": {"reason": "invalid_arguments"}}
    assert tracing.verdict(0, object(), refusal, "s") == ("refused", "invalid_arguments")
    answer, error = object(), {"code": -1, "message": "server's"}
    for n, seen, err in ((1, answer, None), (2, answer, error), (3, object(), None)):
        tracing.sent(n, "s")
        tracing.server_answered(n, answer, "s")
        assert (
            tracing.verdict(n, seen, err, "s")
            == [None, ("passed", None), ("error", None), ("withheld", None)][n]
        )
    assert tracing.verdict(9, answer, None, "s") is None
