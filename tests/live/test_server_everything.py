"""Live: the real `@modelcontextprotocol/server-everything` 2026.8.31 over stdio.

The server is started by the fixtures in `conftest.py`; every `result` it sends is handed, exactly
as `json.loads` parsed it, to `Tool.from_wire` / `ToolResult.from_wire`. Expected values come from
the server's own source (dist/tools/*.js of the pinned package) and from the corpus capture of the
same version (tests/fixtures/corpus/**/server-everything), never from what our code printed.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from conduit_mcp.client import Tool, ToolResult

from .conftest import PROTOCOL_VERSION
from .stdio_driver import StdioDriver

# One worker runs the module (make test: --dist loadgroup): the two servers of its module
# fixtures start once, not once per xdist worker.
pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live-everything")]

SERVER_ID = "server-everything"
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
CAPTURED_TOOLS = CORPUS / "tools" / "server-everything"
CAPTURED_RESULTS = CORPUS / "results" / "server-everything"

#: `config.title` of every tool in the server's source (dist/tools/<name>.js).
TITLES = {
    "echo": "Echo Tool",
    "get-annotated-message": "Get Annotated Message Tool",
    "get-env": "Print Environment Tool",
    "get-resource-links": "Get Resource Links Tool",
    "get-resource-reference": "Get Resource Reference Tool",
    "get-structured-content": "Get Structured Content Tool",
    "get-sum": "Get Sum Tool",
    "get-tiny-image": "Get Tiny Image Tool",
    "gzip-file-as-resource": "GZip File as Resource Tool",
    "toggle-simulated-logging": "Toggle Simulated Logging",
    "toggle-subscriber-updates": "Toggle Subscriber Updates",
    "trigger-long-running-operation": "Trigger Long Running Operation Tool",
    "simulate-research-query": "Simulate Research Query",
    "get-roots-list": "Get Roots List Tool",
    "trigger-elicitation-request": "Trigger Elicitation Request Tool",
    "trigger-url-elicitation": "Trigger URL Elicitation Tool",
    "trigger-sampling-request": "Trigger Sampling Request Tool",
    "trigger-sampling-request-async": "Trigger Async Sampling Request Tool",
    "trigger-elicitation-request-async": "Trigger Async Elicitation Request Tool",
}

#: Tools registered only when the client declares the capability they need
#: (dist/tools/index.js `registerConditionalTools`; `simulate-research-query` is registered there
#: too, but unconditionally).
CONDITIONAL_TOOLS = {
    "get-roots-list",  # roots
    "trigger-elicitation-request",  # elicitation
    "trigger-url-elicitation",  # elicitation.url
    "trigger-sampling-request",  # sampling
    "trigger-sampling-request-async",  # sampling + tasks.requests.sampling.createMessage
    "trigger-elicitation-request-async",  # elicitation + tasks.requests.elicitation.create
}

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _expected_display_name(raw: dict[str, Any]) -> str:
    # 2025-11-25 schema BaseMetadata.title: title first, "except for Tool, where
    # `annotations.title` should be given precedence over using `name`".
    title = raw.get("title")
    if isinstance(title, str) and title:
        return title
    annotations = raw.get("annotations")
    if isinstance(annotations, dict):
        title = annotations.get("title")
        if isinstance(title, str) and title:
            return title
    name: str = raw["name"]
    return name


def _result(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in response, f"JSON-RPC error: {response['error']!r}"
    result: dict[str, Any] = response["result"]
    return result


@pytest.fixture(scope="module")
def pages_no_caps(everything_no_caps: StdioDriver) -> list[dict[str, Any]]:
    return everything_no_caps.list_tools_pages()


@pytest.fixture(scope="module")
def pages_full_caps(everything_full_caps: StdioDriver) -> list[dict[str, Any]]:
    return everything_full_caps.list_tools_pages()


@pytest.fixture(params=["no_caps", "full_caps"])
def raw_tools(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = request.getfixturevalue(f"pages_{request.param}")
    return [tool for page in pages for tool in page["tools"]]


# -- initialize and tools/list ----------------------------------------------------------------


def test_initialize_negotiates_the_requested_protocol_version(
    everything_full_caps: StdioDriver,
) -> None:
    """Spec-mandated (2025-11-25 basic/lifecycle "Version Negotiation"): a server that supports
    the requested version MUST respond with the same version."""
    init = everything_full_caps.initialize_result
    assert init is not None
    assert init["protocolVersion"] == PROTOCOL_VERSION
    # dist/server/index.js: new McpServer({name: "mcp-servers/everything", ...}, {tools: ...})
    assert init["serverInfo"]["name"] == "mcp-servers/everything"
    assert init["capabilities"]["tools"] == {"listChanged": True}


def test_every_listed_tool_passes_tool_from_wire_unchanged(raw_tools: list[dict[str, Any]]) -> None:
    """Spec-mandated (2025-11-25 schema `Tool`): `name` and `inputSchema` are required; a real
    server's tools/list must all be accepted, and `from_wire` must not alter what it was given."""
    assert raw_tools
    for raw in raw_tools:
        before = copy.deepcopy(raw)
        tool = Tool.from_wire(SERVER_ID, raw)
        assert tool.raw is raw
        assert tool.name == raw["name"]
        assert tool.server_id == SERVER_ID
        assert tool.input_schema["type"] == "object"
        _ = (tool.title, tool.annotations, tool.output_schema, tool.execution, tool.hints(True))
        assert raw == before


def test_listed_tool_names_are_unique(raw_tools: list[dict[str, Any]]) -> None:
    """Spec-mandated (2025-11-25 server/tools "Tool Names": tool names SHOULD be unique within a
    server)."""
    names = [raw["name"] for raw in raw_tools]
    assert len(names) == len(set(names))


def test_display_name_follows_title_then_annotations_title_then_name(
    raw_tools: list[dict[str, Any]],
) -> None:
    """Spec-mandated (2025-11-25 schema `BaseMetadata.title`: for a Tool, `title`, then
    `annotations.title`, then `name`)."""
    for raw in raw_tools:
        tool = Tool.from_wire(SERVER_ID, raw)
        assert tool.display_name == _expected_display_name(raw)
        assert tool.display_name == TITLES[raw["name"]]


def test_tools_list_without_client_capabilities_equals_the_capture(
    pages_no_caps: list[dict[str, Any]],
) -> None:
    """conduit-defined: with no client capabilities the live tools/list (one page, no
    `nextCursor`) is, as JSON, the captured `tools-list--none-client-caps.json`."""
    assert pages_no_caps == [_load(CAPTURED_TOOLS / "tools-list--none-client-caps.json")]


def test_tools_list_with_full_client_capabilities_equals_the_capture(
    pages_full_caps: list[dict[str, Any]],
) -> None:
    """conduit-defined: with the capture's "full" client capabilities the live tools/list is, as
    JSON, the captured `tools-list--full-client-caps.json` (same tools, same order)."""
    assert pages_full_caps == [_load(CAPTURED_TOOLS / "tools-list--full-client-caps.json")]


def test_conditional_tools_are_listed_only_for_clients_with_the_capability(
    pages_no_caps: list[dict[str, Any]], pages_full_caps: list[dict[str, Any]]
) -> None:
    """conduit-defined: server-everything registers six tools only when the client declares
    roots / sampling / elicitation (and task) capabilities (dist/tools/index.js)."""
    no_caps = {t["name"] for page in pages_no_caps for t in page["tools"]}
    full = {t["name"] for page in pages_full_caps for t in page["tools"]}
    assert full - no_caps == CONDITIONAL_TOOLS
    assert no_caps <= full
    assert full == set(TITLES)


# -- tools/call -------------------------------------------------------------------------------


def test_echo_returns_the_message_in_a_text_block(everything_full_caps: StdioDriver) -> None:
    """Spec-mandated (2025-11-25 server/tools "Tool Result"): a successful call is a result with
    content blocks; server-everything's echo answers `Echo: <message>` (dist/tools/echo.js)."""
    message = "Hello from the corpus capture"
    raw = _result(everything_full_caps.call_tool("echo", {"message": message}))
    result = ToolResult.from_wire(raw)
    assert result.is_error is False
    assert result.content[0]["type"] == "text"
    assert message in result.content[0]["text"]
    assert raw == _load(CAPTURED_RESULTS / "echo--ok.json")


def test_get_sum_of_2_and_3_says_5(everything_full_caps: StdioDriver) -> None:
    """conduit-defined: `get-sum` {"a": 2, "b": 3} is a text result naming the sum 5."""
    raw = _result(everything_full_caps.call_tool("get-sum", {"a": 2, "b": 3}))
    result = ToolResult.from_wire(raw)
    assert result.is_error is False
    assert "5" in result.content[0]["text"]
    assert raw == _load(CAPTURED_RESULTS / "get-sum--ok.json")


def test_get_tiny_image_returns_a_png_image_block_with_valid_base64(
    everything_full_caps: StdioDriver,
) -> None:
    """Spec-mandated (2025-11-25 server/tools "Image Content": `data` is base64-encoded image
    data with a `mimeType`)."""
    raw = _result(everything_full_caps.call_tool("get-tiny-image", {}))
    result = ToolResult.from_wire(raw)
    assert result.is_error is False
    images = [block for block in result.content if block.get("type") == "image"]
    assert len(images) == 1
    assert images[0]["mimeType"] == "image/png"
    try:
        data = base64.b64decode(images[0]["data"], validate=True)
    except binascii.Error as exc:  # pragma: no cover - the assertion below reports it
        pytest.fail(f"image data is not valid base64: {exc}")
    assert data.startswith(PNG_SIGNATURE)
    assert raw == _load(CAPTURED_RESULTS / "get-tiny-image--ok.json")


def test_get_structured_content_has_an_object_that_fits_the_output_schema(
    everything_full_caps: StdioDriver, pages_full_caps: list[dict[str, Any]]
) -> None:
    """Spec-mandated (2025-11-25 server/tools "Output Schema": servers MUST provide structured
    results that conform to the tool's output schema; clients SHOULD validate them)."""
    raw = _result(
        everything_full_caps.call_tool("get-structured-content", {"location": "New York"})
    )
    result = ToolResult.from_wire(raw)
    assert result.is_error is False
    assert result.has_structured is True
    assert isinstance(result.structured, dict)
    # dist/tools/get-structured-content.js, case "New York"
    assert result.structured == {"temperature": 33, "conditions": "Cloudy", "humidity": 82}
    (raw_tool,) = [
        t for p in pages_full_caps for t in p["tools"] if t["name"] == "get-structured-content"
    ]
    schema = Tool.from_wire(SERVER_ID, raw_tool).output_schema
    assert schema is not None
    validator_for(schema)(schema).validate(result.structured)


def test_unknown_tool_is_an_is_error_result_not_a_jsonrpc_error(
    everything_full_caps: StdioDriver,
) -> None:
    """conduit-defined (observed server behaviour): 2025-11-25 server/tools "Error Handling"
    lists unknown tools under protocol errors (JSON-RPC error -32602), but server-everything
    2026.8.31 (SDK 1.32.2) answers with a `CallToolResult` whose `isError` is true and whose text
    carries the -32602 message. A client must cope with both; this pins what the server does."""
    response = everything_full_caps.call_tool("no-such-tool", {})
    assert "error" not in response
    result = ToolResult.from_wire(response["result"])
    assert result.is_error is True
    assert result.content == [
        {"type": "text", "text": "MCP error -32602: Tool no-such-tool not found"}
    ]
    assert response["result"] == _load(CAPTURED_RESULTS / "unknown-tool.json")


def test_echo_with_a_number_argument_matches_the_captured_validation_error(
    everything_full_caps: StdioDriver,
) -> None:
    """Spec-mandated (2025-11-25 server/tools "Error Handling": input validation errors are tool
    execution errors, reported in the result with `isError: true`)."""
    raw = _result(everything_full_caps.call_tool("echo", {"message": 42}))
    result = ToolResult.from_wire(raw)
    assert result.is_error is True
    assert raw == _load(CAPTURED_RESULTS / "echo--wrong-arg-type.json")


# -- server -> client requests ----------------------------------------------------------------


def test_roots_list_from_the_server_gets_an_empty_root_list(
    everything_full_caps: StdioDriver,
) -> None:
    """Spec-mandated (2025-11-25 client/roots "Listing Roots": the client answers `roots/list`
    with a `roots` array); the driver sends none, and get-roots-list reports that
    (dist/tools/get-roots-list.js)."""
    raw = _result(everything_full_caps.call_tool("get-roots-list", {}))
    result = ToolResult.from_wire(raw)
    assert result.is_error is False
    assert result.content[0]["text"].startswith(
        "The client supports roots but no roots are currently configured."
    )
    assert "roots/list" in [r["method"] for r in everything_full_caps.server_requests]


def test_a_server_request_the_client_refuses_becomes_an_is_error_result(
    everything_full_caps: StdioDriver,
) -> None:
    """conduit-defined: the driver answers `sampling/createMessage` with JSON-RPC -32601
    ("Method not found", JSON-RPC 2.0 "5.1 Error object"); the server reports that failure
    in-band as an `isError` result."""
    args = {"prompt": "Say hello", "maxTokens": 5}
    raw = _result(everything_full_caps.call_tool("trigger-sampling-request", args))
    result = ToolResult.from_wire(raw)
    assert result.is_error is True
    assert result.content == [{"type": "text", "text": "MCP error -32601: Method not found"}]
    methods = [r["method"] for r in everything_full_caps.server_requests]
    assert "sampling/createMessage" in methods


def test_the_server_writes_only_json_rpc_messages_to_stdout(
    everything_no_caps: StdioDriver, everything_full_caps: StdioDriver
) -> None:
    """Spec-mandated (2025-11-25 basic/transports "stdio": the server MUST NOT write anything to
    its stdout that is not a valid MCP message)."""
    for driver in (everything_no_caps, everything_full_caps):
        assert driver.invalid_lines == []
        assert driver.returncode is None  # still running
