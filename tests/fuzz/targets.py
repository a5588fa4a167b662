"""Fuzz targets: one function per JSON-bytes entry point, `def target(data: bytes) -> None`.

Each target feeds the bytes to the library the way a client would and asserts the contract:
only `Error` with a known reason (or a documented outcome) comes out. Any other exception, an
assertion included, is a crash. The targets import nothing from atheris, so
`tests/fuzz/test_replay.py` replays the seed corpus and every file in `tests/fuzz/crashes/`
through them in a plain pytest run; `tests/fuzz/run.py` drives them with atheris.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from conduit_mcp_wire import LATEST
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.client import (
    KNOWN_VERSIONS,
    REASONS,
    Error,
    Tool,
    ToolResult,
    canonical_json,
    conformance_violations,
    fingerprint,
    intake_json,
    parse_call_result,
    parse_json,
    validate_structured,
)
from conduit_mcp.client.headers import header_map, mcp_param_headers
from conduit_mcp.llm import (
    ToolNameMap,
    shape_for_llm,
    to_anthropic_tool,
    to_gemini_function,
    to_openai_tool,
)

ROOT: Final = Path(__file__).resolve().parents[2]


def _distinct_versions() -> tuple[str, ...]:
    """Every registered version whose schema differs from each one before it (schema/PINNED.json
    sha256; `draft` is often the latest's copy, and the rules gate by release order, so a copy
    would be fuzzed twice for nothing). A spec bump is covered without an edit here."""
    pins = json.loads((ROOT / "schema" / "PINNED.json").read_text(encoding="utf-8"))
    digests = {pin["version"]: pin["sha256"] for pin in pins["schemas"]}
    seen: set[str] = set()
    found = []
    for version in KNOWN_VERSIONS:
        if digests[version] not in seen:
            seen.add(digests[version])
            found.append(version)
    return tuple(found)


VERSIONS: Final = _distinct_versions()
_PARSE_REASONS: Final = {"invalid_json", "limit_exceeded"}
# A recursive output schema: validation of deep structuredContent has to stop cleanly.
_RECURSIVE_SCHEMA: Final = {
    "$ref": "#/$defs/n",
    "$defs": {
        "n": {
            "type": ["object", "array", "string", "number", "boolean", "null"],
            "additionalProperties": {"$ref": "#/$defs/n"},
            "items": {"$ref": "#/$defs/n"},
        }
    },
}
_RUNNER: Final = CliRunner()


def _known(exc: Error, reasons: set[str] | frozenset[str] = REASONS) -> None:
    assert exc.reason in reasons, exc
    assert exc.kind in ("protocol", "policy"), exc


def _parsed(data: bytes) -> tuple[bool, Any]:
    try:
        return True, parse_json(data)
    except Error as exc:
        _known(exc, _PARSE_REASONS)
        return False, None


def parse_json_target(data: bytes) -> None:
    """`parse_json`: a value that is JSON (canonicalizable), or `invalid_json`/`limit_exceeded`;
    `str` input gives the same outcome as its UTF-8 bytes."""
    ok, value = _parsed(data)
    if ok:
        canonical_json(value)  # anything parse_json returns is a JSON value
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        again = parse_json(text)
    except Error:
        assert not ok
    else:
        assert ok and canonical_json(again) == canonical_json(value)


def intake_json_target(data: bytes) -> None:
    """`intake_json` on both transports, then what a client does with each accepted tool:
    header map and headers, the three adapters, a name map."""
    for transport in ("stdio", "streamable-http"):
        try:
            result = intake_json("fuzz", data, transport=transport, protocol_version=LATEST)  # type: ignore[arg-type]
        except Error as exc:
            _known(exc)
            return
        names = _name_maps()
        for tool in result.tools:
            assert tool.fingerprint == fingerprint(tool.raw)
            _use_tool(tool, names)
        for rejection in result.rejected:
            assert rejection.reason in REASONS


def _name_maps() -> dict[str, ToolNameMap]:
    return {provider: ToolNameMap(provider) for provider in ("openai", "anthropic", "gemini")}


def _use_tool(tool: Tool, names: dict[str, ToolNameMap]) -> None:
    try:
        mapping = header_map(tool)
    except Error as exc:
        _known(exc)
    else:
        try:
            mcp_param_headers(mapping, {key[0]: "v" for key in mapping.values() if key})
        except Error as exc:
            _known(exc)
    for adapt in (
        lambda: to_openai_tool(tool, names["openai"]),
        lambda: to_openai_tool(tool, strict=True),
        lambda: to_anthropic_tool(tool, names["anthropic"]),
        lambda: to_gemini_function(tool, names["gemini"]),
        lambda: to_gemini_function(tool, schema="json_schema"),
    ):
        try:
            adapt()
        except Error as exc:
            _known(exc)


def tool_target(data: bytes) -> None:
    """One tool definition: `Tool.from_wire`, fingerprint, headers, adapters, strict check,
    and `validate_structured` of the tool's own `inputSchema` value against its outputSchema."""
    ok, raw = _parsed(data)
    if not ok:
        return
    try:
        tool = Tool.from_wire("fuzz", raw)
    except Error as exc:
        _known(exc, {"invalid_tool"})
        return
    fingerprint(tool)
    _use_tool(tool, _name_maps())
    conformance_violations(raw, kind="tool", protocol_version=LATEST)
    result = ToolResult.from_wire({"content": [], "structuredContent": tool.input_schema})
    try:
        validate_structured(result, tool, protocol_version=LATEST)
    except Error as exc:
        _known(exc)


def result_target(data: bytes) -> None:
    """A tools/call result: dispatch on every version, shaping, output validation."""
    ok, raw = _parsed(data)
    if not ok:
        return
    if isinstance(raw, dict) and raw.get("jsonrpc") == "2.0" and "result" in raw:
        raw = raw["result"]
    tool = Tool.from_wire(
        "fuzz", {"name": "t", "inputSchema": {}, "outputSchema": _RECURSIVE_SCHEMA}
    )
    for version in VERSIONS:
        try:
            parsed = parse_call_result(raw, protocol_version=version)
        except Error as exc:
            _known(exc)
            continue
        if isinstance(parsed, ToolResult):
            shaped = shape_for_llm(parsed, server_id="fuzz", max_chars=2_000)
            assert sum(len(b.get("text", "")) for b in shaped.content) <= 2_000
            try:
                validate_structured(parsed, tool, protocol_version=version)
            except Error as exc:
                _known(exc)


def conformance_target(data: bytes) -> None:
    """`conformance_violations` for every kind and version: returned, never raised."""
    ok, raw = _parsed(data)
    if not ok:
        return
    for kind in ("tool", "result", "tools_list", "call_result"):
        for version in VERSIONS:
            found = conformance_violations(raw, kind=kind, protocol_version=version)  # type: ignore[arg-type]
            assert all(e.reason == "schema_violation" for e in found)


def cli_target(data: bytes) -> None:
    """The `conduit-mcp` command on stdin: exit 0, 1 or 2, never a traceback."""
    for command in (["inspect", "--json", "-"], ["inspect", "-"], ["fingerprint", "-"]):
        result = _RUNNER.invoke(app, command, input=data)
        assert result.exit_code in (0, 1, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


#: Every target by name (names have no '-': crash files are named `<target>-crash-<sha1>`).
TARGETS: Final[dict[str, Callable[[bytes], None]]] = {
    "parse_json": parse_json_target,
    "intake_json": intake_json_target,
    "tool": tool_target,
    "result": result_target,
    "conformance": conformance_target,
    "cli": cli_target,
}
