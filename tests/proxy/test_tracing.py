"""OpenTelemetry traces of the stdio proxy (`proxy/_tracing.py`), end to end: the real proxy in
a subprocess with the standard `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at an OTLP/HTTP receiver
the test starts on loopback (tests/proxy/otlp_receiver.py, decoding the export with the
official protobuf messages), a client that starts a trace (`_meta.traceparent`, W3C Trace
Context), and a stdio server that records the `_meta` it receives. Also: the line the proxy
leaves on stderr when it stops, and traces off without the variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.proxy.conftest import header_log
from tests.proxy.otlp_receiver import otlp_receiver

#: A stdio MCP server without an SDK: answers initialize, tools/list (one tool), tools/call,
#: and appends each request's `params._meta` to the file named by its argument.
SERVER = r"""
import json, sys
seen = open(sys.argv[1], "a", encoding="utf-8")
TOOL = {"name": "echo", "inputSchema": {"type": "object",
        "properties": {"text": {"type": "string"}}, "required": ["text"]}}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    params = message.get("params") or {}
    seen.write(json.dumps({"method": message["method"], "meta": params.get("_meta")}) + "\n")
    seen.flush()
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "echo", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [TOOL]}
    else:
        result = {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

#: An argument value no span may carry.
SECRET = "s3cr3t-argument-value"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


def _messages() -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": SECRET},
                "_meta": {"traceparent": TRACEPARENT},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": 5},
                "_meta": {"traceparent": TRACEPARENT},
            },
        },
    ]


def _run_proxy(tmp_path: Path, env: dict[str, str]) -> tuple[list[dict[str, Any]], str, Path]:
    """Run the proxy over the server with the client's messages, one at a time (each waits
    for its answer), then close its stdin; its answers, stderr and the server's record."""
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    seen = tmp_path / "seen.jsonl"
    command = [sys.executable, "-c", "from conduit_mcp.cli import main; main()"]
    proxy = subprocess.Popen(
        [*command, "proxy", "--server-id", "demo", "--", sys.executable, str(server), str(seen)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, **env},
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    answers = []
    for message in _messages():
        proxy.stdin.write(json.dumps(message).encode() + b"\n")
        proxy.stdin.flush()
        if "id" in message:
            answers.append(json.loads(proxy.stdout.readline()))
    _, stderr = proxy.communicate(timeout=60)
    assert proxy.returncode == 0
    return answers, stderr.decode(), seen


def test_spans_arrive_at_an_otlp_receiver_continuing_the_clients_trace(tmp_path: Path) -> None:
    """Real parts: the OTLP/HTTP exporter configured by the standard variable, a receiver
    decoding the official protobuf; W3C Trace Context (trace id and parent span id taken from
    the client's `traceparent`, by the spec's layout `00-TRACEID-PARENTID-FLAGS`)."""
    with otlp_receiver() as receiver:
        answers, stderr, seen = _run_proxy(
            tmp_path,
            {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SERVICE_NAME": "proxy-demo"},
        )
    assert answers[2]["result"]["content"][0]["text"] == SECRET
    assert answers[3]["error"]["data"]["reason"] == "invalid_arguments"
    spans = {(s["name"], s["attributes"].get("jsonrpc.request.id")): s for s in receiver.spans}
    passed = spans[("tools/call echo", "3")]
    refused = spans[("tools/call echo", "4")]
    for span in (passed, refused):
        assert (span["trace_id"], span["parent_span_id"]) == (TRACE_ID, PARENT_ID)
        assert span["attributes"]["gen_ai.tool.name"] == "echo"
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["conduit_mcp.server_id"] == "demo"
        assert span["resource"]["service.name"] == "proxy-demo"
        assert span["kind"] == 2  # SPAN_KIND_SERVER (opentelemetry-proto trace.proto)
    assert passed["attributes"]["conduit_mcp.verdict"] == "passed"
    assert SECRET not in json.dumps(receiver.spans)  # never an argument in a span
    assert refused["attributes"]["conduit_mcp.verdict"] == "refused"
    assert refused["attributes"]["conduit_mcp.reason"] == "invalid_arguments"
    assert refused["status"] == 2  # STATUS_CODE_ERROR
    (decision,) = [s for s in receiver.spans if s["name"] == "guard call_refused"]
    assert decision["parent_span_id"] == refused["span_id"]
    assert decision["trace_id"] == TRACE_ID
    assert decision["attributes"]["conduit_mcp.reason"] == "invalid_arguments"
    assert decision["attributes"]["conduit_mcp.verdict"] == "refused"
    # the server continues the trace: its _meta.traceparent names the proxy's span
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    (call,) = [r for r in records if r["method"] == "tools/call"]  # the refused one never came
    version, trace_id, parent_id, _ = call["meta"]["traceparent"].split("-")
    assert (version, trace_id, parent_id) == ("00", TRACE_ID, passed["span_id"])
    # a request without a trace context starts a trace of its own, which the server continues
    for record in records:
        if record["method"] != "tools/call":
            span = spans[(record["method"], "1" if record["method"] == "initialize" else "2")]
            assert record["meta"]["traceparent"].split("-")[1:3] == [
                span["trace_id"],
                span["span_id"],
            ]
            assert span["trace_id"] != TRACE_ID and span["parent_span_id"] == ""
    assert (
        "stopped (server 'demo'): the client closed the connection; "
        "the server exited with code 0; exit code 0"
    ) in stderr


def test_without_otel_variables_nothing_is_traced_and_bytes_pass_as_sent(tmp_path: Path) -> None:
    """conduit-defined: traces are off unless configured; the server gets `_meta` exactly as
    the client sent it."""
    answers, _, seen = _run_proxy(tmp_path, {})
    assert answers[2]["result"]["content"][0]["text"] == SECRET
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    (call,) = [r for r in records if r["method"] == "tools/call"]
    assert call["meta"] == {"traceparent": TRACEPARENT}


def test_an_http_upstream_gets_the_traceparent_header(
    tmp_path: Path, sdk_http_server: tuple[str, Path]
) -> None:
    """Real parts: the stdio proxy in front of the official SDK's server over Streamable HTTP
    (tests/proxy/http_server.py records each request's headers); the tools/call goes upstream
    with a `traceparent` header (W3C Trace Context) continuing the client's trace from the
    proxy's span, and the spans reach the OTLP receiver."""
    url, log = sdk_http_server
    command = [sys.executable, "-c", "from conduit_mcp.cli import main; main()"]
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "add",
            "arguments": {"a": 2, "b": 3},
            "_meta": {"traceparent": TRACEPARENT},
        },
    }
    with otlp_receiver() as receiver:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
        proxy = subprocess.Popen(
            [*command, "proxy", "--server-id", "sdk", "--upstream", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proxy.stdin is not None and proxy.stdout is not None
        bad = {
            **call,
            "id": 4,
            "params": {**call["params"], "arguments": {"a": "two", "b": 3}},
        }
        answers = []
        for message in [*_messages()[:3], call, bad]:
            proxy.stdin.write(json.dumps(message).encode() + b"\n")
            proxy.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proxy.stdout.readline()))
        assert answers[-2]["result"]["content"][0]["text"] == "5"
        assert answers[-1]["error"]["data"]["reason"] == "invalid_arguments"
        proxy.communicate(timeout=60)
    spans = {s["attributes"].get("jsonrpc.request.id"): s for s in receiver.spans}
    span, refused = spans["3"], spans["4"]
    assert span["name"] == refused["name"] == "tools/call add"
    assert (span["trace_id"], span["parent_span_id"]) == (TRACE_ID, PARENT_ID)
    assert span["attributes"]["conduit_mcp.verdict"] == "passed"
    # refused by the guard: ended by its answer, with the guard's reason, and never sent
    assert refused["attributes"]["conduit_mcp.verdict"] == "refused"
    assert refused["attributes"]["conduit_mcp.reason"] == "invalid_arguments"
    assert refused["status"] == 2  # STATUS_CODE_ERROR
    assert f"00-{TRACE_ID}-{refused['span_id']}-01" not in json.dumps(header_log(log))
    sent = [r for r in header_log(log) if (r.get("headers") or {}).get("traceparent")]
    traceparents = [r["headers"]["traceparent"] for r in sent]
    assert f"00-{TRACE_ID}-{span['span_id']}-01" in traceparents
