"""The captured corpus (tests/fixtures/corpus, provenance in its SOURCES.md and index.json).

Loaders shared by every test that runs real server output through the library.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
CASES = Path(__file__).resolve().parent / "fixtures" / "cases"


@dataclass(frozen=True)
class Capture:
    """One corpus file: its index entry and parsed JSON."""

    file: str
    kind: str
    source: str
    protocol_version: str
    data: Any

    @property
    def id(self) -> str:
        """A short test id."""
        return self.file.split("/", 1)[1].removesuffix(".json")


def _version(entry: dict[str, Any]) -> str:
    """The protocol version the capture was made under, best known first."""
    for key in ("protocolVersion_negotiated", "protocolVersion_requested"):
        if entry.get(key):
            return str(entry[key])
    name = Path(entry["file"]).name
    if entry["source"] == "spec-docs":
        return name.split("--", 1)[0]
    if entry["source"] == "spec-examples":
        return "2026-07-28"
    return "2025-11-25"  # proxy snapshots of current servers


@functools.cache
def captures() -> tuple[Capture, ...]:
    """Every corpus file, in index order."""
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    return tuple(
        Capture(
            file=entry["file"],
            kind=entry["kind"],
            source=entry["source"],
            protocol_version=_version(entry),
            data=json.loads((CORPUS / entry["file"]).read_text(encoding="utf-8")),
        )
        for entry in index["files"]
    )


def tools_of(capture: Capture) -> list[Any]:
    """The tool definitions a tools-list capture holds, whatever envelope the file has.

    Most files are a `ListToolsResult`; spec-example files may be a single `Tool`, a
    `ListToolsResultResponse` or `CreateMessageRequestParams` (whose `tools` are Tools too).
    """
    data = capture.data
    if "result" in data:
        data = data["result"]
    if "tools" in data:
        tools: list[Any] = data["tools"]
        return tools
    return [data]


@functools.cache
def all_tools() -> tuple[tuple[Capture, int, Any], ...]:
    """(capture, index in its list, raw tool) for every captured tool definition."""
    return tuple(
        (capture, i, tool)
        for capture in captures()
        if capture.kind == "tools-list-result"
        for i, tool in enumerate(tools_of(capture))
    )


def results() -> tuple[Capture, ...]:
    """Every captured `tools/call` result (including 2026-07-28 InputRequiredResults)."""
    return tuple(c for c in captures() if c.kind == "call-tool-result")


def tool_lists() -> tuple[Capture, ...]:
    """Every capture that is a `ListToolsResult` as a server sent it."""
    return tuple(
        c
        for c in captures()
        if c.kind == "tools-list-result" and isinstance(c.data.get("tools"), list)
    )


@functools.cache
def cases() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(file stem, case) for every case in tests/fixtures/cases."""
    return tuple(
        (path.stem, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(CASES.glob("*.json"))
    )
