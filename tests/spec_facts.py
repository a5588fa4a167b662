"""Per-version facts the tests check against, read from each version's official schema.json.

Spec-mandated: every fact here is read from the vendored schema file itself (the spec's own
text, parsed as JSON here, never through the generator or the library), so a test iterates the
registry (`conduit_mcp_wire.VERSIONS`) and a spec bump edits no test.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "schema"


@functools.cache
def definitions(version: str) -> dict[str, Any]:
    """The `$defs` (or draft-07 `definitions`) of one version's schema.json."""
    schema = json.loads((SCHEMA_DIR / version / "schema.json").read_text(encoding="utf-8"))
    defs: dict[str, Any] = schema.get("$defs") or schema["definitions"]
    return defs


def _name(ref: dict[str, Any]) -> str:
    return str(ref["$ref"]).rsplit("/", 1)[1]


def requires_result_type(version: str) -> bool:
    """Whether the version's `CallToolResult` requires `resultType` (basic "Result types",
    2026-07-28 on: servers on the revision MUST include it)."""
    return "resultType" in definitions(version)["CallToolResult"].get("required", [])


def tools_call_answers(version: str) -> tuple[str, ...]:
    """The definitions that answer tools/call: the arms of `CallToolResultResponse.result` where
    the schema has it (2026-07-28 on); otherwise `CallToolResult`, plus `CreateTaskResult` where
    a call may be task-augmented (`CallToolRequestParams.task`, 2025-11-25 server/tools)."""
    defs = definitions(version)
    response = defs.get("CallToolResultResponse")
    if response is not None:
        result = response["properties"]["result"]
        return tuple(_name(arm) for arm in result.get("anyOf", [result]))
    params = defs.get("CallToolRequestParams") or defs["CallToolRequest"]["properties"]["params"]
    tasks = "task" in params.get("properties", {}) and "CreateTaskResult" in defs
    return ("CallToolResult", "CreateTaskResult") if tasks else ("CallToolResult",)


def content_block_types(version: str) -> dict[str, str]:
    """`type` const -> definition of each arm of the union `CallToolResult.content` holds."""
    defs = definitions(version)
    items = defs["CallToolResult"]["properties"]["content"]["items"]
    if "$ref" in items:
        items = defs[_name(items)]
    return {defs[_name(arm)]["properties"]["type"]["const"]: _name(arm) for arm in items["anyOf"]}


def release_key(version: str) -> tuple[bool, str]:
    """Release order (basic/versioning: revisions are `YYYY-MM-DD` dates; "draft", the
    unreleased next one, after all): sort by this key."""
    return (version == "draft", version)
