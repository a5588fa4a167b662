"""The five resource-limit scenarios of issue 6, each run through every entry point it reaches.

A `Case` builds its input for a size `n` (outside any measurement) and runs one entry point on
it. `FULL` holds the issue's sizes; `test_limits.py` runs each case at its `CI` size (the full
depth; smaller sizes otherwise) and checks linear growth by operation counts and peak memory at
a `GROWTH` size and 4x; `measure.py` prints time, peak memory and outcome at any scale.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conduit_mcp.cli._shared import BadInput, read_json
from conduit_mcp.client import (
    REASONS,
    Error,
    Tool,
    ToolResult,
    canonical_json,
    check_tool_name,
    conformance_violations,
    fingerprint,
    intake,
    intake_json,
    parse_call_result,
    parse_json,
    validate_structured,
)
from conduit_mcp.client._validate import MAX_SCHEMA_BYTES
from conduit_mcp.client.headers import (
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
)
from conduit_mcp.llm import (
    ToolNameMap,
    shape_for_llm,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)
from conduit_mcp.pins import diff_tools

#: The issue's sizes: nesting levels, characters, tools, characters, properties.
FULL = {
    "deep": 10_000,
    "big_text": 50_000_000,
    "many_tools": 100_000,
    "long_name": 1_000_000,
    "wide_schema": 100_000,
}
#: Sizes `make test` runs: the full depth (RecursionError is about depth, not size); a fifth
#: to a twentieth of the other sizes, whose figures come from `measure.py`.
CI = {
    "deep": 10_000,
    "big_text": 2_000_000,
    "many_tools": 3_000,
    "long_name": 100_000,
    "wide_schema": 10_000,
}
#: Sizes of the linear-growth check (run at n and 4n under a profiler hook). Depth starts above
#: 1,024, so that n and 4n take the same path (parse_json's limit, the C encoders' recursion).
GROWTH = {
    "deep": 1_100,
    "big_text": 20_000,
    "many_tools": 300,
    "long_name": 5_000,
    "wide_schema": 500,
}


@dataclass(frozen=True)
class Case:
    """One entry point under one scenario.

    Attributes:
        scenario: a key of `FULL`.
        entry: the entry point's name (with the variant, e.g. `intake[streamable-http]`).
        build: makes the input for a size.
        run: calls the entry point on the input.
        limit: `None` when the call must succeed; else the `Error.reason` it must raise
            (`limit_exceeded`).
        limit_if: when set, the limit applies only to inputs for which it is true.
        ci_size, growth_size: this case's own sizes, instead of the scenario's `CI` / `GROWTH`.
    """

    scenario: str
    entry: str
    build: Callable[[int], Any]
    run: Callable[[Any], Any]
    limit: str | None = None
    limit_if: Callable[[Any], bool] | None = None
    ci_size: int | None = None
    growth_size: int | None = None

    def expected(self, value: Any) -> str | None:
        """The `Error.reason` this input must raise, or `None` when it must succeed."""
        if self.limit is not None and self.limit_if is not None and not self.limit_if(value):
            return None
        return self.limit


# -- inputs ---------------------------------------------------------------------------------


def nested_objects(n: int, leaf: Any = 1) -> Any:
    """`{"a": {"a": ... leaf}}`, n objects deep."""
    value = leaf
    for _ in range(n):
        value = {"a": value}
    return value


def property_chain(n: int) -> dict[str, Any]:
    """An object schema n `properties` levels deep, an `x-mcp-header` at the bottom."""
    schema: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(n):
        schema = {"type": "object", "properties": {"p": schema}}
    return schema


def deep_arguments(n: int) -> dict[str, Any]:
    """Arguments matching `property_chain(n)`."""
    value: Any = "v"
    for _ in range(n):
        value = {"p": value}
    return value  # type: ignore[no-any-return]


def chain_tool(n: int) -> Tool:
    """A tool whose inputSchema and outputSchema are `property_chain(n)`."""
    schema = property_chain(n)
    return Tool.from_wire("s", {"name": "deep", "inputSchema": schema, "outputSchema": schema})


def deep_tool(n: int) -> dict[str, Any]:
    """A tool definition whose inputSchema nests n levels below a property."""
    return {
        "name": "deep",
        "inputSchema": {"type": "object", "properties": {"p": nested_objects(n)}},
    }


def deep_result(n: int) -> dict[str, Any]:
    """A result whose structuredContent nests n objects deep."""
    return {
        "resultType": "complete",
        "content": [{"type": "text", "text": "x"}],
        "structuredContent": nested_objects(n),
    }


RECURSIVE_SCHEMA = {
    "$ref": "#/$defs/n",
    "$defs": {"n": {"type": ["object", "integer"], "additionalProperties": {"$ref": "#/$defs/n"}}},
}


def text_result(n: int) -> dict[str, Any]:
    """A result with one text block of n characters (a zero-width space every 1,000)."""
    text = ("x" * 999 + "\u200b") * (n // 1000) + "x" * (n % 1000)
    return {"content": [{"type": "text", "text": text}], "structuredContent": {"t": text}}


def described_tool(n: int) -> dict[str, Any]:
    """A tool with an n-character description holding invisible characters."""
    return {"name": "t", "description": ("é" * 999 + "\u200b") * (n // 1000), "inputSchema": {}}


def page(n: int) -> dict[str, Any]:
    """A tools/list page of n small tools, every other one drawing a name warning."""
    return {
        "tools": [
            {
                "name": f"tool {i}" if i % 2 else f"tool_{i}",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            }
            for i in range(n)
        ]
    }


def long_name(n: int) -> str:
    """An n-character tool name: CJK, accents, spaces and zero-width characters."""
    unit = "工é a\u200b"
    return (unit * (n // len(unit) + 1))[:n]


def wide_schema(n: int, headers: bool = False) -> dict[str, Any]:
    """An object schema with n properties (each an annotated header when `headers`)."""
    properties = {
        f"p{i}": {"type": "string", **({"x-mcp-header": f"H{i}"} if headers else {})}
        for i in range(n)
    }
    return {"type": "object", "properties": properties, "required": list(properties)}


def _bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _cli_read(data: bytes) -> Any:
    # The CLI turns an Error into a one-line BadInput; turn it back, to check it like the rest.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.json"
        path.write_bytes(data)
        try:
            return read_json(str(path))
        except BadInput as exc:
            reason = "limit_exceeded" if "/limit_exceeded at " in str(exc) else "invalid_json"
            raise Error(REASONS[reason], reason, str(exc)[:200]) from None  # its implied kind


def _http(value: Any) -> Any:
    return intake("s", value, transport="streamable-http", protocol_version="2026-07-28")


def _validate(pair: tuple[ToolResult, Tool]) -> Any:
    return validate_structured(pair[0], pair[1], protocol_version="2026-07-28")


def _with_schema(schema: Any, structured: Any) -> tuple[ToolResult, Tool]:
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": schema})
    return ToolResult.from_wire({"content": [], "structuredContent": structured}), tool


def _all_warnings(value: Any) -> Any:
    got = intake("s", value, transport="stdio", protocol_version="2026-07-28")
    return [got.warnings_for(i) for i in range(len(value["tools"]))]


def _tools(n: int) -> list[Tool]:
    return list(intake("s", page(n), transport="stdio", protocol_version="2026-07-28").tools)


# -- the cases ------------------------------------------------------------------------------

CASES: tuple[Case, ...] = (
    # 10,000 levels: JSON text stops at parse_json's depth limit (1,024, with the path); Python
    # values of any depth go through every walker without recursion.
    Case(
        "deep",
        "parse_json",
        lambda n: b"[" * n + b"]" * n,
        parse_json,
        "limit_exceeded",
    ),
    Case(
        "deep",
        "parse_json[exact parser]",
        lambda n: b"[12345678901234567890," + b"[" * n + b"]" * n + b"]",
        parse_json,
        "limit_exceeded",
    ),
    Case(
        "deep",
        "intake_json",
        lambda n: b'{"tools":[' + b"[" * n + b"]" * n + b"]}",
        lambda d: intake_json("s", d, transport="stdio", protocol_version="2026-07-28"),
        "limit_exceeded",
    ),
    Case(
        "deep",
        "cli read_json",
        lambda n: b"[" * n + b"]" * n,
        _cli_read,
        "limit_exceeded",
    ),
    Case("deep", "Tool.from_wire", deep_tool, lambda raw: Tool.from_wire("s", raw)),
    Case(
        "deep",
        "intake[streamable-http]",
        lambda n: {"tools": [deep_tool(n), {"name": "c", "inputSchema": property_chain(n)}]},
        _http,
    ),
    Case("deep", "fingerprint", deep_tool, fingerprint),
    Case("deep", "canonical_json", nested_objects, canonical_json),
    Case("deep", "find_invalid_x_mcp_header", property_chain, find_invalid_x_mcp_header),
    Case("deep", "header_map", chain_tool, header_map),
    Case(
        "deep",
        "mcp_param_headers",
        lambda n: (chain_tool(n), deep_arguments(n)),
        lambda pair: mcp_param_headers(*pair),
    ),
    Case("deep", "ToolResult.from_wire", deep_result, ToolResult.from_wire),
    Case(
        "deep",
        "parse_call_result",
        deep_result,
        lambda raw: parse_call_result(raw, protocol_version="2026-07-28"),
    ),
    Case(
        "deep",
        "shape_for_llm",
        lambda n: ToolResult.from_wire(deep_result(n)),
        lambda r: shape_for_llm(r, server_id="s", include_structured="always"),
    ),
    Case(
        "deep",
        "validate_structured[deep instance]",
        lambda n: _with_schema(RECURSIVE_SCHEMA, nested_objects(n)),
        _validate,
        "limit_exceeded",
    ),
    Case(
        "deep",
        "validate_structured[deep schema]",
        lambda n: _with_schema(property_chain(n), {}),
        _validate,
        "limit_exceeded",
    ),
    Case("deep", "to_openai_tool", chain_tool, to_openai_tool),
    Case("deep", "to_gemini_function", chain_tool, to_gemini_function),
    Case(
        "deep",
        "conformance_violations",
        deep_tool,
        lambda raw: conformance_violations(raw, kind="tool", protocol_version="2026-07-28"),
    ),
    # 50 MB text block.
    Case("big_text", "parse_json", lambda n: _bytes(text_result(n)), parse_json),
    Case(
        "big_text",
        "parse_json[exact parser]",
        lambda n: _bytes({**text_result(n), "n": 2**70}),
        parse_json,
    ),
    Case("big_text", "cli read_json", lambda n: _bytes(text_result(n)), _cli_read),
    Case("big_text", "ToolResult.from_wire", text_result, ToolResult.from_wire),
    Case(
        "big_text",
        "shape_for_llm",
        lambda n: ToolResult.from_wire(text_result(n)),
        lambda r: shape_for_llm(r, server_id="s", include_structured="always"),
    ),
    Case(
        "big_text",
        "validate_structured",
        lambda n: _with_schema(
            {"type": "object", "properties": {"t": {"maxLength": 10}}},
            text_result(n)["structuredContent"],
        ),
        _validate,
    ),
    Case(
        "big_text",
        "conformance_violations",
        text_result,
        lambda raw: conformance_violations(raw, kind="result", protocol_version="2026-07-28"),
    ),
    Case("big_text", "fingerprint", described_tool, fingerprint),
    Case("big_text", "intake[streamable-http]", lambda n: {"tools": [described_tool(n)]}, _http),
    Case(
        "big_text",
        "intake_json",
        lambda n: _bytes({"tools": [described_tool(n)]}),
        lambda d: intake_json("s", d, transport="stdio", protocol_version="2026-07-28"),
    ),
    # 100,000 tools in one page.
    Case("many_tools", "intake[streamable-http]", page, _http),
    Case(
        "many_tools",
        "intake_json",
        lambda n: _bytes(page(n)),
        lambda d: intake_json("s", d, transport="streamable-http", protocol_version="2026-07-28"),
    ),
    Case("many_tools", "Intake.warnings_for[every tool]", page, _all_warnings),
    Case(
        "many_tools",
        "conformance_violations",
        page,
        lambda raw: conformance_violations(raw, kind="tools_list", protocol_version="2026-07-28"),
    ),
    Case(
        "many_tools",
        "ToolNameMap.from_tools",
        _tools,
        lambda tools: ToolNameMap.from_tools("openai", tools),
    ),
    Case("many_tools", "diff_tools", _tools, lambda tools: diff_tools(tools, tools[1:])),
    # A 1 MB tool name.
    Case(
        "long_name",
        "intake[streamable-http]",
        lambda n: {"tools": [{"name": long_name(n), "inputSchema": {}}]},
        _http,
    ),
    Case("long_name", "check_tool_name", long_name, check_tool_name),
    Case("long_name", "mcp_name_header", long_name, mcp_name_header),
    Case(
        "long_name",
        "to_openai_tool",
        lambda n: Tool.from_wire("s", {"name": long_name(n), "inputSchema": {}}),
        to_openai_tool,
    ),
    Case(
        "long_name",
        "to_anthropic_tool",
        lambda n: Tool.from_wire("s", {"name": long_name(n), "inputSchema": {}}),
        to_anthropic_tool,
    ),
    Case(
        "long_name",
        "to_gemini_function",
        lambda n: Tool.from_wire("s", {"name": long_name(n), "inputSchema": {}}),
        to_gemini_function,
    ),
    Case(
        "long_name",
        "ToolNameMap.add",
        lambda n: Tool.from_wire("s", {"name": long_name(n), "inputSchema": {}}),
        lambda tool: ToolNameMap("anthropic").add(tool),
    ),
    # inputSchema with 100,000 properties.
    Case(
        "wide_schema",
        "intake[streamable-http]",
        lambda n: {"tools": [{"name": "w", "inputSchema": wide_schema(n, headers=True)}]},
        _http,
    ),
    Case(
        "wide_schema",
        "header_map",
        lambda n: Tool.from_wire("s", {"name": "w", "inputSchema": wide_schema(n, True)}),
        header_map,
    ),
    Case(
        "wide_schema",
        "mcp_param_headers",
        lambda n: (
            header_map(Tool.from_wire("s", {"name": "w", "inputSchema": wide_schema(n, True)})),
            {f"p{i}": f"v{i}" for i in range(n)},
        ),
        lambda pair: mcp_param_headers(*pair),
    ),
    Case(
        "wide_schema",
        "fingerprint",
        lambda n: {"name": "w", "inputSchema": wide_schema(n)},
        fingerprint,
    ),
    Case(
        "wide_schema",
        "to_openai_tool",
        lambda n: Tool.from_wire("s", {"name": "w", "inputSchema": wide_schema(n)}),
        to_openai_tool,
    ),
    Case(
        "wide_schema",
        "to_anthropic_tool",
        lambda n: Tool.from_wire("s", {"name": "w", "inputSchema": wide_schema(n)}),
        to_anthropic_tool,
    ),
    Case(
        "wide_schema",
        "to_gemini_function",
        lambda n: Tool.from_wire("s", {"name": "w", "inputSchema": wide_schema(n)}),
        to_gemini_function,
    ),
    Case(
        "wide_schema",
        "conformance_violations",
        lambda n: {"name": "w", "inputSchema": wide_schema(n)},
        lambda raw: conformance_violations(raw, kind="tool", protocol_version="2026-07-28"),
    ),
    # validate_structured refuses an outputSchema beyond MAX_SCHEMA_BYTES (1 MiB of JSON), so
    # 100,000 properties stop at once; below it, compiling costs ~2 ms per property (jsonschema
    # checks the schema against the 2020-12 meta-schema): linear, checked at small sizes.
    Case(
        "wide_schema",
        "validate_structured",
        lambda n: _with_schema(wide_schema(n), {f"p{i}": "v" for i in range(n)}),
        _validate,
        "limit_exceeded",
        lambda pair: len(canonical_json(pair[1].output_schema)) > MAX_SCHEMA_BYTES,
        ci_size=FULL["wide_schema"],
        growth_size=100,
    ),
)


def count_operations(case: Case, value: Any) -> int:
    """Python and C calls during one run of `case` on `value` (a profile hook counts them).

    Growth is judged on this count, not on wall time (the machines are shared and noisy).
    """
    count = 0

    def hook(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        count += 1

    sys.setprofile(hook)
    try:
        case.run(value)
    except Error:
        pass
    finally:
        sys.setprofile(None)
    return count
