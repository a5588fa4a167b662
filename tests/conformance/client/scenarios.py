"""What the conformance client does in each scenario of `@modelcontextprotocol/conformance`.

Each handler gets a connected `McpHttpSession` and the scenario context (the JSON object in
`MCP_CONFORMANCE_CONTEXT`, `{}` when unset) and raises on anything unexpected. The expectations
below come from the suite's scenario sources (dist/index.js of 0.2.0-alpha.12) and the spec, not
from what this client printed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from conduit_mcp.client import InputRequired, Intake, Tool, ToolResult
from conduit_mcp.llm import to_anthropic_tool, to_gemini_function, to_openai_tool

from .http_session import McpHttpSession

Handler = Callable[[McpHttpSession, Mapping[str, Any]], None]

#: Example values for required parameters, by declared JSON Schema `type`.
EXAMPLE_VALUES: Final[Mapping[str, Any]] = {
    "string": "example",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
}


class ScenarioFailure(Exception):
    """The server's answers were not what the scenario (or the spec) says they are."""


def require_tool(taken: Intake, name: str) -> Tool:
    """The accepted tool called `name`, or raise `ScenarioFailure`."""
    tool = taken.tool(name)
    if tool is None:
        names = [t.name for t in taken.tools]
        raise ScenarioFailure(f"tool {name!r} is not among the accepted tools {names}")
    return tool


def require_complete(result: ToolResult | InputRequired, name: str) -> ToolResult:
    """The `ToolResult` of a call that completed without a tool error, or raise."""
    if not isinstance(result, ToolResult):
        raise ScenarioFailure(f"tools/call {name!r}: the server asked for input (input_required)")
    if result.is_error:
        raise ScenarioFailure(f"tools/call {name!r}: the tool reported an error: {result.content}")
    return result


def texts(result: ToolResult) -> list[str]:
    """The `text` of every text content block, in order."""
    return [
        block["text"]
        for block in result.content
        if isinstance(block, dict) and block.get("type") == "text" and "text" in block
    ]


def example_arguments(tool: Tool) -> dict[str, Any]:
    """Arguments with an example value for each required root property of a known type."""
    schema = tool.input_schema
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list):
        return {}
    arguments: dict[str, Any] = {}
    for name in required:
        spec = properties.get(name) if isinstance(name, str) else None
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, str) and kind in EXAMPLE_VALUES:
            arguments[name] = EXAMPLE_VALUES[kind]
    return arguments


def adapt_all(tools: tuple[Tool, ...]) -> None:
    """Put every tool through the three provider adapters, as a client does before a model call.

    The adapters read `inputSchema` (Gemini's subset conversion inlines local `$ref`s); the
    scenarios check that this neither fetches a network `$ref` nor changes the schema.
    """
    for tool in tools:
        to_openai_tool(tool)
        to_anthropic_tool(tool)
        to_gemini_function(tool)


def call_and_check(session: McpHttpSession, tool: Tool, arguments: Mapping[str, Any]) -> ToolResult:
    """Call `tool` and require a completed, error-free result."""
    return require_complete(session.call_tool(tool, arguments), tool.name)


def list_all(session: McpHttpSession, method: str, key: str) -> list[dict[str, Any]]:
    """Every item of a paginated list method (`resources/list`, `prompts/list`)."""
    items: list[dict[str, Any]] = []
    cursor: Any = None
    seen: set[str] = set()
    while True:
        page = session.request(method, {} if cursor is None else {"cursor": cursor})
        page_items = page.get(key)
        if not isinstance(page_items, list):
            raise ScenarioFailure(f"{method}: the result has no {key} array")
        items.extend(item for item in page_items if isinstance(item, dict))
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or cursor in seen:
            return items
        seen.add(cursor)


# -- scenarios ---------------------------------------------------------------------------------


def tools_call(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`tools_call`: list tools, call `add_numbers` with two numbers, read the sum back.

    Suite: the mock server lists `add_numbers` (`a`, `b`: number) and answers
    "The sum of {a} and {b} is {a + b}"; the check wants a `tools/call` with numeric `a`, `b`.
    """
    tool = require_tool(session.list_tools(), "add_numbers")
    result = call_and_check(session, tool, {"a": 5, "b": 3})
    if "The sum of 5 and 3 is 8" not in texts(result):
        raise ScenarioFailure(f"add_numbers: unexpected text content {texts(result)}")


def http_standard_headers(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`http-standard-headers`: send `Mcp-Method` on every POST and `Mcp-Name` where required.

    Calls every accepted tool, reads every resource and gets every prompt the server lists (when
    it declares those capabilities), so that `Mcp-Name` is exercised with tool names, a name
    with a hyphen and resource URIs.
    """
    taken = session.list_tools()
    if not taken.tools:
        raise ScenarioFailure("tools/list: no tools accepted")
    for tool in taken.tools:
        call_and_check(session, tool, example_arguments(tool))
    if "resources" in session.server_capabilities:
        for resource in list_all(session, "resources/list", "resources"):
            if isinstance(resource.get("uri"), str):
                session.request("resources/read", {"uri": resource["uri"]})
    if "prompts" in session.server_capabilities:
        for prompt in list_all(session, "prompts/list", "prompts"):
            if isinstance(prompt.get("name"), str):
                session.request("prompts/get", {"name": prompt["name"]})


def http_custom_headers(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`http-custom-headers`: make the calls the context names; headers come from the library.

    Context: `{"toolCalls": [{"name": ..., "arguments": {...}}, ...]}`.
    """
    calls = context.get("toolCalls")
    if not isinstance(calls, list) or not calls:
        raise ScenarioFailure("MCP_CONFORMANCE_CONTEXT has no toolCalls")
    taken = session.list_tools()
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
            raise ScenarioFailure(f"malformed toolCalls entry {call!r}")
        call_and_check(session, require_tool(taken, str(call.get("name"))), call["arguments"])


def http_invalid_tool_headers(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`http-invalid-tool-headers`: call every tool intake accepted (it drops the invalid ones)."""
    taken = session.list_tools()
    if not taken.tools:
        raise ScenarioFailure("tools/list: no tools accepted")
    for tool in taken.tools:
        call_and_check(session, tool, example_arguments(tool))


def json_schema_ref_no_deref(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`json-schema-ref-no-deref`: list tools and process their schemas without fetching `$ref`s.

    The server's tool has `properties.profile.$ref` pointing at a canary URL on the server; the
    suite fails the run if that URL is requested.
    """
    taken = session.list_tools()
    if not taken.tools:
        raise ScenarioFailure("tools/list: no tools accepted")
    adapt_all(taken.tools)


FOCAL_TOOL: Final = "json_schema_2020_12_tool"
ECHO_TOOL: Final = "json_schema_echo"


def json_schema_2020_12_preservation(session: McpHttpSession, context: Mapping[str, Any]) -> None:
    """`json-schema-2020-12-preservation`: echo the focal tool's `inputSchema` back verbatim.

    The schema is taken from the library's `Tool` after intake and after the provider adapters
    have read it, and must still equal the wire value; the suite then checks `$schema`, `$defs`,
    `additionalProperties`, `allOf`/`anyOf`, `if`/`then`/`else` and `$anchor` survived.
    """
    taken = session.list_tools()
    focal = require_tool(taken, FOCAL_TOOL)
    adapt_all(taken.tools)
    wire = [t for t in session.wire_tools if isinstance(t, dict) and t.get("name") == FOCAL_TOOL]
    if not wire or focal.input_schema != wire[0].get("inputSchema"):
        raise ScenarioFailure(f"{FOCAL_TOOL}: inputSchema differs from the wire value")
    call_and_check(session, require_tool(taken, ECHO_TOOL), {"schema": focal.input_schema})


#: Scenario name -> handler.
SCENARIOS: Final[Mapping[str, Handler]] = {
    "tools_call": tools_call,
    "http-standard-headers": http_standard_headers,
    "http-custom-headers": http_custom_headers,
    "http-invalid-tool-headers": http_invalid_tool_headers,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "json-schema-2020-12-preservation": json_schema_2020_12_preservation,
}
