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
