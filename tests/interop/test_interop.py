"""Interop: the official MCP SDKs' own test vectors, run against conduit-mcp's public functions.

The vectors are data (`vectors/<sdk>.json`, written by `extract.py` from each SDK's test source
at a recorded commit). Each vector says what that SDK expects, in its own terms; this module
asks conduit-mcp the same question and compares. Where conduit-mcp decides otherwise on
purpose, the vector is pinned in `expected_differences.json` with the kind of difference, a
one-line reason and conduit-mcp's answer: a pinned vector must still disagree in exactly that
way, and any other disagreement fails. Only four kinds of difference are allowed (issue 14).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp.client import (
    Error,
    InputRequired,
    Tool,
    ToolResult,
    check_tool_name,
    parse_call_result,
    validate_structured,
)
from conduit_mcp.client.headers import (
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    header_map,
    mcp_name_header,
    mcp_param_headers,
)

HERE = Path(__file__).resolve().parent
SDKS = ("python-sdk", "typescript-sdk", "go-sdk", "rust-sdk")

#: The only kinds of disagreement conduit-mcp keeps on purpose (issue 14, "Left as they are").
DIFFERENCE_KINDS = frozenset(
    {
        "empty_header_value_sent_plain",
        "non_canonical_base64_decoded",
        "unencodable_param_refuses_call",
        "nested_properties_may_carry_x_mcp_header",
    }
)

#: Protocol version for the structured-output vectors (outputSchema exists since 2025-06-18;
#: the SDK tests use object schemas and object values, valid at every later revision).
STRUCTURED_VERSION = "2025-11-25"


def _load(name: str) -> Any:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def _vectors() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    rows = []
    for sdk in SDKS:
        for group in _load(f"vectors/{sdk}.json")["groups"]:
            for vector in group["vectors"]:
                key = f"{sdk}::{group['area']}::{group['source']['test']}::{vector['id']}"
                rows.append((key, group["area"], group["source"], vector))
    return rows


VECTORS = _vectors()
RUNNABLE = [row for row in VECTORS if "skipped" not in row[3]]
DIFFERENCES: dict[str, dict[str, Any]] = {
    d["vector"]: d for d in _load("expected_differences.json")
}


# -- conduit-mcp's answer, in the SDK's terms ----------------------------------------------------


def _encode(value: Any) -> str | None:
    try:
        return encode_header_value(value)
    except Error:
        return None


def _decode(header: str) -> str | None:
    try:
        return decode_header_value(header)
    except ValueError:
        return None


def _tool(input_schema: Any, output_schema: Any = None) -> Tool:
    raw: dict[str, Any] = {"name": "interop", "inputSchema": input_schema}
    if output_schema is not None:
        raw["outputSchema"] = output_schema
    return Tool.from_wire("interop", raw)


def _header_map(input_schema: Any) -> dict[str, list[Any]]:
    # A schema that is not an object has no annotations (`find_invalid_x_mcp_header`); intake
    # would refuse such a tool, which is a separate question from header extraction.
    if not isinstance(input_schema, dict):
        assert find_invalid_x_mcp_header(input_schema) is None
        return {}
    return {name: list(path) for name, path in header_map(_tool(input_schema)).items()}


def _call_result(raw: Any, version: str) -> str:
    try:
        parsed = parse_call_result(raw, protocol_version=version)
    except Error:
        return "refused"
    if isinstance(parsed, InputRequired):
        return "input_required"
    assert isinstance(parsed, ToolResult)
    return "complete"


def answer(area: str, vector: dict[str, Any]) -> tuple[Any, Any]:
    """(what the SDK expects, what conduit-mcp gives), both in the vector's terms."""
    if area == "encode":
        ours = _encode(vector["value"])
        if vector.get("wrapped"):
            return True, ours is not None and ours.startswith("=?base64?")
        if vector.get("round_trip") and ours is not None:
            assert _decode(ours) == vector["value"]
        return vector["encoded"], ours
    if area == "round_trip" or vector.get("round_trip_only"):
        encoded = _encode(vector["value"])
        return vector["value"], None if encoded is None else _decode(encoded)
    if area == "decode":
        return vector["decoded"], _decode(vector["header"])
    if area == "x_mcp_header":
        return vector["valid"], find_invalid_x_mcp_header(vector["input_schema"]) is None
    if area == "header_map":
        ours = _header_map(vector["input_schema"])
        if "map_by_dotted_path" in vector:
            dotted = {".".join(path): name for name, path in ours.items()}
            return vector["map_by_dotted_path"], dotted
        return vector["map"], ours
    if area == "mcp_name":
        return vector["header"], mcp_name_header(vector["name"])
    if area == "param_headers":
        try:
            if "header_map" in vector:
                mapping = {name: tuple(path) for name, path in vector["header_map"].items()}
                ours = mcp_param_headers(mapping, vector["arguments"])
            else:
                ours = mcp_param_headers(_tool(vector["input_schema"]), vector["arguments"])
        except Error as exc:
            ours = {"refused": exc.reason}
        return vector["headers"], ours
    if area == "tool_name":
        return vector["valid"], check_tool_name(vector["name"]) == ()
    if area == "structured":
        tool = _tool({"type": "object"}, vector["output_schema"])
        result = ToolResult.from_wire(
            {"content": [], "structuredContent": vector["structured_content"]}
        )
        version = vector.get("version", STRUCTURED_VERSION)
        return vector["valid"], validate_structured(result, tool, protocol_version=version).valid
    if area == "call_result":
        return vector["outcome"], _call_result(vector["result"], vector["version"])
    raise AssertionError(f"unknown area {area}")


# -- the suite -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "area", "source", "vector"), RUNNABLE, ids=[r[0] for r in RUNNABLE]
)
def test_conduit_agrees_with_the_sdk_vector(
    key: str, area: str, source: dict[str, Any], vector: dict[str, Any]
) -> None:
    """SDK-defined (the official SDK's own test, named by `source`): conduit-mcp gives the
    answer the SDK's test expects, or, for a pinned vector, disagrees exactly as documented."""
    expected, ours = answer(area, vector)
    pinned = DIFFERENCES.get(key)
    if pinned is None:
        assert ours == expected, f"{key} ({source['file']} @ {source['commit'][:12]})"
    else:
        assert ours != expected, f"{key} now agrees: drop its pin"
        assert ours == pinned["ours"]


def test_every_pin_names_a_vector_one_of_the_four_kinds_and_a_reason() -> None:
    """conduit-defined (issue 14): the only disagreements are the four documented kinds."""
    keys = {row[0] for row in RUNNABLE}
    for key, pin in DIFFERENCES.items():
        assert key in keys, f"pin for a vector that is gone: {key}"
        assert pin["kind"] in DIFFERENCE_KINDS
        assert pin["reason"].strip() and "\n" not in pin["reason"]


def test_every_vector_has_its_own_key() -> None:
    """conduit-defined: a pin names exactly one vector."""
    keys = Counter(row[0] for row in VECTORS)
    assert [key for key, count in keys.items() if count > 1] == []


def test_every_skipped_vector_says_why() -> None:
    """conduit-defined: a vector left out (not expressible as JSON) carries its reason."""
    for key, _, _, vector in VECTORS:
        if "skipped" in vector:
            assert vector["skipped"].strip(), key


def test_every_group_names_its_source_file_test_and_commit() -> None:
    """conduit-defined (issue 14): each group of vectors names where it came from."""
    for sdk in SDKS:
        data = _load(f"vectors/{sdk}.json")
        assert len(data["commit"]) == 40
        for group in data["groups"]:
            source = group["source"]
            assert source["repo"] == f"github.com/modelcontextprotocol/{sdk}"
            assert source["commit"] == data["commit"]
            assert source["file"] and source["test"]


def test_the_suite_covers_every_area_for_the_functions_it_names() -> None:
    """conduit-defined: the vectors exercise every function the issue lists."""
    areas = Counter(area for _, area, _, _ in RUNNABLE)
    assert set(areas) == {
        "encode",
        "decode",
        "round_trip",
        "x_mcp_header",
        "header_map",
        "mcp_name",
        "param_headers",
        "tool_name",
        "structured",
        "call_result",
    }


@pytest.mark.skipif(
    not os.environ.get("INTEROP_MIRROR"), reason="set INTEROP_MIRROR to the SDK snapshots' root"
)
def test_the_vectors_are_what_the_extractor_reads_from_the_snapshots() -> None:
    """conduit-defined: the committed data is exactly what `extract.py` reads at those commits."""
    mirror = os.environ["INTEROP_MIRROR"]
    done = subprocess.run(
        [sys.executable, str(HERE / "extract.py"), mirror, "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
