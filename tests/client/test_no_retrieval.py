"""No `$ref` is ever retrieved: not over the network, not from a file (issue 13, item 2).

Spec-mandated: 2026-07-28 basic "JSON Schema Usage", "$ref Resolution" (implementations MUST NOT
automatically dereference network references). conduit-defined: files neither.

Three independent witnesses, since the engine is Rust and its own I/O would bypass Python:
- `sys.addaudithook`: no `open` of the target file and no `socket.connect` from Python;
- a listening socket on 127.0.0.1 that every http `$ref` names: nothing connects to it (this
  catches native connections too);
- a real file whose content would change the verdict: the verdict shows it was not read.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp.client import (
    Tool,
    ToolResult,
    intake,
    validate_arguments,
    validate_structured,
)
from conduit_mcp.client._validate import clear_validator_cache

_EVENTS: list[tuple[str, str]] = []
_WATCHING: list[bool] = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING[0] and event in ("open", "socket.connect", "urllib.Request"):
        _EVENTS.append((event, repr(args)[:120]))


sys.addaudithook(_hook)  # audit hooks cannot be removed; this one only records while watching


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def _accepted(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def _refs(port: int, target: Path) -> dict[str, dict[str, Any]]:
    http = f"http://127.0.0.1:{port}/schema.json"
    return {
        "http": {"properties": {"a": {"$ref": http}}},
        "https": {"properties": {"a": {"$ref": f"https://127.0.0.1:{port}/schema.json"}}},
        "http-fragment": {"properties": {"a": {"$ref": f"{http}#/$defs/x"}}},
        "file": {"properties": {"a": {"$ref": target.as_uri()}}},
        "relative-to-http-id": {"$id": http, "properties": {"a": {"$ref": "other.json"}}},
        "relative-to-file-id": {
            "$id": target.with_name("root.json").as_uri(),
            "properties": {"a": {"$ref": target.name}},
        },
        "relative-no-base": {"properties": {"a": {"$ref": "schema.json"}}},
        "urn": {"properties": {"a": {"$ref": "urn:example:schema"}}},
        "meta-of-unknown-draft": {"properties": {"a": {"$ref": f"{http}#"}}},
    }


KINDS = list(_refs(1, Path("/tmp/x.json")))


@pytest.mark.parametrize("kind", KINDS)
def test_no_ref_of_any_kind_opens_a_socket_or_a_file(
    kind: str, listener: socket.socket, tmp_path: Path
) -> None:
    """The three entry points that compile schemas (validate_structured, validate_arguments and
    intake's meta-schema check) leave every `$ref` outside the schema unresolved: the outcome
    is `invalid` with one `$ref` schema issue, and nothing was opened or connected."""
    target = tmp_path / "schema.json"
    target.write_text('{"type": "string"}', encoding="utf-8")  # would make {"a": 1} invalid
    port = listener.getsockname()[1]
    schema = _refs(port, target)[kind]
    clear_validator_cache()
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": schema, "outputSchema": schema})
    result = ToolResult.from_wire({"content": [], "structuredContent": {"a": 1}})
    _EVENTS.clear()
    _WATCHING[0] = True
    try:
        out = validate_structured(result, tool, protocol_version="2026-07-28")
        args = validate_arguments(tool, {"a": 1}, protocol_version="2026-07-28")
        clear_validator_cache()
        page = intake("s", {"tools": [tool.raw]}, transport="stdio", protocol_version="2026-07-28")
    finally:
        _WATCHING[0] = False
    for verdict in (out, args):
        assert verdict.outcome == "invalid"
        assert [(e.keyword, e.kind, e.path) for e in verdict.errors] == [("$ref", "schema", ())]
    assert [w.code for w in page.warnings if w.code.endswith("_invalid")] == [
        "input_schema_invalid",
        "output_schema_invalid",
    ]
    assert [t.name for t in page.tools] == ["t"]
    touched = [e for e in _EVENTS if e[0] != "open" or str(tmp_path) in e[1]]
    assert touched == []
    assert _accepted(listener) == 0


def test_the_audit_hook_sees_what_it_is_meant_to_see(
    listener: socket.socket, tmp_path: Path
) -> None:
    """conduit-defined: the witnesses work (a Python open and connect are recorded, and the
    listener counts a connection), so their silence above means something."""
    target = tmp_path / "schema.json"
    target.write_text("{}", encoding="utf-8")
    _EVENTS.clear()
    _WATCHING[0] = True
    try:
        target.read_text(encoding="utf-8")
        with socket.create_connection(listener.getsockname()):
            pass
    finally:
        _WATCHING[0] = False
    assert {e[0] for e in _EVENTS} == {"open", "socket.connect"}
    assert _accepted(listener) == 1
