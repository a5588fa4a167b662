"""OpenTelemetry traces of the stdio proxy (`proxy/_tracing.py`), end to end: the real proxy in
a subprocess with the standard `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at an OTLP/HTTP receiver
the test starts on loopback (tests/proxy/otlp_receiver.py, decoding the export with the
official protobuf messages), a client that starts a trace (`_meta.traceparent`, W3C Trace
Context), and a stdio server that records the `_meta` it receives. Also: the line the proxy
leaves on stderr when it stops, and traces off without the variables."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from tests.forkserver import spawn
from tests.proxy.conftest import header_log, proxy_argv
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


# -- `--listen` ------------------------------------------------------------------------------

#: SERVER, also answering `server/discover` (2026-07-28: the listener asks a server process
#: before its first stateless request) and stamping 2026-07-28 results with `resultType`; each
#: record names the request's id too. A second tool, `hang`, is never answered.
LISTEN_SERVER = r"""
import json, sys
seen = open(sys.argv[1], "a", encoding="utf-8")
TOOL = {"name": "echo", "inputSchema": {"type": "object",
        "properties": {"text": {"type": "string"}}, "required": ["text"]}}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    seen.write(json.dumps({"method": message["method"], "id": message["id"], "meta": meta}) + "\n")
    seen.flush()
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "echo", "version": "1"}}
    elif message["method"] == "server/discover":
        result = {"supportedVersions": ["2025-11-25", "2026-07-28"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [TOOL, {"name": "hang", "inputSchema": {"type": "object"}}]}
    elif params.get("name") == "hang":
        continue  # never answered
    else:
        result = {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
    if meta.get("io.modelcontextprotocol/protocolVersion") == "2026-07-28":
        result["resultType"] = "complete"
        if message["method"] in ("tools/list", "server/discover"):
            result.update({"ttlMs": 0, "cacheScope": "private"})
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

SESSION_TRACE, STATELESS_TRACE, META_TRACE = (
    "11111111111111111111111111111111",
    "22222222222222222222222222222222",
    "33333333333333333333333333333333",
)
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _traceparent(trace_id: str) -> str:
    return f"00-{trace_id}-{PARENT_ID}-01"


def _listen(
    tmp_path: Path, receiver_url: str | None, *target: str, server_id: str = "demo"
) -> tuple[str, Any]:
    """`conduit-mcp proxy --server-id SERVER_ID --listen` with traces exported to
    `receiver_url` (`None`: no `OTEL_*` variable): (its URL, the process; terminating it
    flushes the spans)."""
    from tests.guard.conftest import free_port, wait_for_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if receiver_url is not None:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver_url
    argv = [*proxy_argv(server_id, "--listen", f"127.0.0.1:{port}"), *target]
    # Forked from a warm interpreter (tests/forkserver.py): the SDK's import is ~2 s of CPU.
    process = spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wait_for_port(port, process)
    return f"http://127.0.0.1:{port}/mcp", process


def _stop(process: Any) -> str:
    """Stop the listener (SIGTERM: it flushes its spans as it ends); its stderr."""
    process.terminate()
    _, stderr = process.communicate(timeout=60)
    return str(stderr.decode())


def _post(url: str, body: Any, headers: dict[str, str]) -> tuple[dict[str, str], Any]:
    """One POST; (the response's headers, lower-cased; the JSON-RPC message it carries, from
    a JSON body or the last event of an event stream), `None` for a 202."""
    import urllib.request

    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, json.dumps(body).encode(), {**sent, **headers})
    with urllib.request.urlopen(request, timeout=60) as response:
        got = {k.lower(): v for k, v in response.headers.items()}
        data = response.read()
    if not data.strip():
        return got, None
    if got.get("content-type", "").startswith("text/event-stream"):
        events = [
            line[5:].strip()
            for line in data.replace(b"\r\n", b"\n").split(b"\n")
            if line.startswith(b"data:") and line[5:].strip()
        ]
        return got, json.loads(events[-1])
    return got, json.loads(data)


def _session(url: str, tool: str, good: Any, bad: Any) -> list[Any]:
    """A 2025-11-25 session over Streamable HTTP: initialize, tools/list (trace context only
    in `_meta`), a call of `tool` with `good` arguments and one with `bad` (the
    `traceparent` header on both; the bad one's `_meta` names another trace); the answers."""
    head, _ = _post(url, _messages()[0], {})
    session = {"mcp-session-id": head["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    _post(url, _messages()[1], session)
    listing = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/list",
        "params": {"_meta": {"traceparent": _traceparent(META_TRACE)}},
    }
    answers = [_post(url, listing, session)[1]]
    traced = {**session, "traceparent": _traceparent(SESSION_TRACE)}
    for rid, arguments, meta in (
        (3, good, {}),
        (4, bad, {"traceparent": _traceparent(META_TRACE)}),
    ):
        call = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta},
        }
        answers.append(_post(url, call, traced)[1])
    return answers


def _stateless(url: str, tool: str, arguments: Any) -> Any:
    """One 2026-07-28 stateless tools/call, id 3 (as the session's), with its own
    `traceparent` header; its answer."""
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": MODERN_META},
    }
    headers = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": tool,
        "traceparent": _traceparent(STATELESS_TRACE),
    }
    return _post(url, call, headers)[1]


def _by_trace(spans: list[dict[str, Any]], trace_id: str, name: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["trace_id"] == trace_id and s["name"] == name]


def _check_spans(spans: list[dict[str, Any]], tool: str) -> tuple[Any, Any]:
    """What both `--listen` tests assert of the spans: the session's call and the stateless
    call (both id 3) each under its own client's trace, the refused call's span and its guard
    decision, `_meta.traceparent` read when the header is absent; (session call, stateless
    call)."""
    name = f"tools/call {tool}"
    session_calls = _by_trace(spans, SESSION_TRACE, name)
    by_id = {s["attributes"]["jsonrpc.request.id"]: s for s in session_calls}
    passed, refused = by_id["3"], by_id["4"]  # the header wins over `_meta`
    (stateless,) = _by_trace(spans, STATELESS_TRACE, name)
    for span in (passed, refused, stateless):
        assert span["parent_span_id"] == PARENT_ID
        assert span["kind"] == 2  # SPAN_KIND_SERVER
        assert span["attributes"]["conduit_mcp.server_id"] == "demo"
        assert span["attributes"]["gen_ai.tool.name"] == tool
        assert span["attributes"]["mcp.method.name"] == "tools/call"
    assert passed["attributes"]["conduit_mcp.verdict"] == "passed"
    assert passed["attributes"]["mcp.protocol.version"] == "2025-11-25"
    assert stateless["attributes"]["conduit_mcp.verdict"] == "passed"
    assert stateless["attributes"]["jsonrpc.request.id"] == "3"  # the client's id
    assert stateless["attributes"]["mcp.protocol.version"] == "2026-07-28"
    assert refused["attributes"]["conduit_mcp.verdict"] == "refused"
    assert refused["attributes"]["conduit_mcp.reason"] == "invalid_arguments"
    assert refused["status"] == 2  # STATUS_CODE_ERROR
    (decision,) = [s for s in spans if s["name"] == "guard call_refused"]
    assert (decision["trace_id"], decision["parent_span_id"]) == (
        SESSION_TRACE,
        refused["span_id"],
    )
    assert decision["attributes"]["conduit_mcp.reason"] == "invalid_arguments"
    (listing,) = _by_trace(spans, META_TRACE, "tools/list")  # no header: `_meta`'s context
    assert listing["parent_span_id"] == PARENT_ID
    assert listing["attributes"]["conduit_mcp.verdict"] == "passed"
    assert SECRET not in json.dumps(spans)
    return passed, stateless


def test_listen_traces_a_session_and_a_stateless_client_over_a_child_server(
    tmp_path: Path,
) -> None:
    """Real parts: `conduit-mcp proxy --listen` in front of a server process, the OTLP/HTTP
    exporter configured by the standard variable, the receiver decoding the official
    protobuf. A 2025-11-25 session and a 2026-07-28 stateless client use the same request id
    (3), each with its own `traceparent` header (W3C Trace Context): each span continues its
    own client's trace, and the server (a process per session, one shared by the stateless
    requests) receives `_meta.traceparent` naming that span."""
    server = tmp_path / "server.py"
    server.write_text(LISTEN_SERVER, encoding="utf-8")
    seen = tmp_path / "seen.jsonl"
    with otlp_receiver() as receiver:
        url, process = _listen(tmp_path, receiver.url, "--", sys.executable, str(server), str(seen))
        try:
            answers = _session(url, "echo", {"text": SECRET}, {"text": 5})
            modern = _stateless(url, "echo", {"text": "modern"})
        finally:
            stderr = _stop(process)
    assert answers[1]["result"]["content"][0]["text"] == SECRET, stderr
    assert answers[2]["error"]["data"]["reason"] == "invalid_arguments"
    assert modern["result"]["content"][0]["text"] == "modern" and modern["id"] == 3
    passed, stateless = _check_spans(receiver.spans, "echo")
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    calls = {r["meta"]["traceparent"] for r in records if r["method"] == "tools/call"}
    assert calls == {  # the refused call never reached the server
        f"00-{SESSION_TRACE}-{passed['span_id']}-01",
        f"00-{STATELESS_TRACE}-{stateless['span_id']}-01",
    }


def test_listen_passes_the_trace_to_an_http_upstream_as_a_header(
    tmp_path: Path, sdk_http_server: tuple[str, Path]
) -> None:
    """Real parts: `--listen` in front of the official SDK's server over Streamable HTTP
    (tests/proxy/http_server.py records each request's headers): the session's call and the
    stateless call go upstream with a `traceparent` header continuing each client's trace
    from the proxy's span; the refused call never goes."""
    upstream, log = sdk_http_server
    with otlp_receiver() as receiver:
        url, process = _listen(tmp_path, receiver.url, "--upstream", upstream)
        try:
            answers = _session(url, "add", {"a": 2, "b": 3}, {"a": "two", "b": 3})
            modern = _stateless(url, "add", {"a": 1, "b": 1})
        finally:
            stderr = _stop(process)
    assert answers[1]["result"]["content"][0]["text"] == "5", stderr
    assert answers[2]["error"]["data"]["reason"] == "invalid_arguments"
    assert modern["result"]["content"][0]["text"] == "2" and modern["id"] == 3
    passed, stateless = _check_spans(receiver.spans, "add")
    calls = [r for r in header_log(log) if r.get("rpc") == "tools/call"]
    assert {r["headers"].get("traceparent") for r in calls} == {
        f"00-{SESSION_TRACE}-{passed['span_id']}-01",
        f"00-{STATELESS_TRACE}-{stateless['span_id']}-01",
    }


def test_listen_untraced_without_otel_variables(tmp_path: Path) -> None:
    """conduit-defined: traces are off unless configured; the server gets each request's
    `_meta` as the client sent it (no `traceparent` added, the client's own kept)."""
    server = tmp_path / "server.py"
    server.write_text(LISTEN_SERVER, encoding="utf-8")
    seen = tmp_path / "seen.jsonl"
    url, process = _listen(tmp_path, None, "--", sys.executable, str(server), str(seen))
    try:
        answers = _session(url, "echo", {"text": SECRET}, {"text": 5})
    finally:
        _stop(process)
    assert answers[1]["result"]["content"][0]["text"] == SECRET
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    metas = {r["method"]: r["meta"] for r in records}
    assert metas["tools/list"] == {"traceparent": _traceparent(META_TRACE)}
    assert metas["tools/call"] == {}


def test_listen_ends_the_span_of_a_request_its_closed_session_never_answered(
    tmp_path: Path,
) -> None:
    """conduit-defined (bounded): a session closed by its client (DELETE, MCP 2025-11-25
    basic/transports "Session Management") while the server never answered one of its
    calls: the call's span ends `abandoned` with the session, and is exported."""
    import urllib.error
    import urllib.request

    server = tmp_path / "server.py"
    server.write_text(LISTEN_SERVER, encoding="utf-8")
    seen = tmp_path / "seen.jsonl"

    def hang(session: dict[str, str]) -> None:
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {}},
        }
        try:
            _post(url, call, {**session, "traceparent": _traceparent(SESSION_TRACE)})
        except (OSError, ValueError, IndexError):  # the stream ends with the session
            pass

    async def main() -> None:
        head, _ = await anyio.to_thread.run_sync(_post, url, _messages()[0], {})
        session = {"mcp-session-id": head["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        await anyio.to_thread.run_sync(_post, url, _messages()[1], session)
        await anyio.to_thread.run_sync(_post, url, _messages()[2], session)  # tools/list
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(anyio.to_thread.run_sync, hang, session))
                while '"id": 9' not in (seen.read_text() if seen.exists() else ""):
                    await anyio.sleep(0.01)  # the server has the call
                delete = urllib.request.Request(url, headers=session, method="DELETE")
                await anyio.to_thread.run_sync(functools.partial(urllib.request.urlopen, delete))

    with otlp_receiver() as receiver:
        url, process = _listen(tmp_path, receiver.url, "--", sys.executable, str(server), str(seen))
        try:
            anyio.run(main)
        finally:
            _stop(process)
    (span,) = _by_trace(receiver.spans, SESSION_TRACE, "tools/call hang")
    assert span["attributes"]["conduit_mcp.verdict"] == "abandoned"
    assert span["parent_span_id"] == PARENT_ID


def test_listen_a_call_the_tool_policy_refuses_is_a_refused_span_without_the_subject(
    tmp_path: Path,
) -> None:
    """Real parts: `--listen --auth jwt --policy FILE` in front of the hostile server's mixed
    page, a JWKS server on loopback, the official SDK client in a session and stateless: the
    call the policy refuses (POLICY of test_listen_identity, read by hand: ops may not call
    weather) is a span `refused` with the policy's reason (`policy_denied`) in each mode; the
    caller's subject is in no span."""
    from tests.guard.conftest import Hostile
    from tests.proxy.jwks import serve_issuer

    from .conftest import hostile_argv
    from .test_listen_identity import KEY, POLICY, _listed_and_refused, auth_args, token

    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    server = Hostile("mixed", tmp_path / "server.jsonl")
    with serve_issuer(KEY) as issuer, otlp_receiver() as receiver:
        alice = token(issuer, "alice-subject", "ops")
        options = ["--new", "pin", "--policy", str(policy), *auth_args(issuer)]
        url, process = _listen(
            tmp_path, receiver.url, *options, "--", *hostile_argv(server), server_id="mixed"
        )
        try:
            results = [
                anyio.run(_listed_and_refused, url, alice, mode, "weather")
                for mode in ("legacy", "2026-07-28")
            ]
        finally:
            _stop(process)
    for _, echoed, error in results:
        assert echoed == "hi" and error.data["reason"] == "policy_denied"
    refused = [s for s in receiver.spans if s["name"] == "tools/call weather"]
    assert len(refused) == 2
    for span in refused:
        assert span["attributes"]["conduit_mcp.verdict"] == "refused"
        assert span["attributes"]["conduit_mcp.reason"] == "policy_denied"
    assert [
        s["attributes"]["conduit_mcp.verdict"]
        for s in receiver.spans
        if s["name"] == "tools/call echo"
    ] == ["passed", "passed"]
    assert "alice-subject" not in json.dumps(receiver.spans)
    assert alice not in json.dumps(receiver.spans)
