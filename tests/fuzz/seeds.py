"""The seed corpus of the fuzz targets, built from the fixtures (no network, no generation).

Every target gets the same documents: each captured corpus file as it is on disk, each handed
case's input, the spec examples of tools and results of every registered version that has
examples (a document whose bytes an earlier one already has is left out, so a new version adds
only the examples that changed), and every regression in `tests/fuzz/crashes/`. The `tool`
target also gets each captured tool definition on its own; the `cli` target only the documents
under 20 kB, and a few pages wrapped as capture files.
"""

from __future__ import annotations

import json
from pathlib import Path

from conduit_mcp_wire import VERSIONS

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CRASHES = Path(__file__).resolve().parent / "crashes"
_EXAMPLE_DEFINITIONS = (
    "Tool",
    "CallToolResult",
    "CallToolResultResponse",
    "InputRequiredResult",
    "ListToolsResult",
    "ListToolsResultResponse",
)


def _dump(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def documents() -> list[tuple[str, bytes]]:
    """(name, bytes) of every whole document: corpus files, case inputs, spec examples."""
    found = [
        (str(path.relative_to(FIXTURES)), path.read_bytes())
        for path in sorted((FIXTURES / "corpus").rglob("*.json"))
        if path.name != "index.json"
    ]
    for path in sorted((FIXTURES / "cases").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        found.append((f"cases/{path.name}", _dump(case["input"])))
        if case["kind"] == "tool":
            found.append((f"cases/{path.name}#page", _dump({"tools": [case["input"]]})))
    for version in VERSIONS:
        for definition in _EXAMPLE_DEFINITIONS:
            folder = ROOT / "schema" / version / "examples" / definition
            for path in sorted(folder.glob("*.json")):
                found.append((str(path.relative_to(ROOT)), path.read_bytes()))
    seen: set[bytes] = set()
    unique = []
    for name, data in found:
        if data not in seen:
            seen.add(data)
            unique.append((name, data))
    return unique


def single_tools() -> list[tuple[str, bytes]]:
    """(name, bytes) of each captured tool definition on its own."""
    from tests.corpus import all_tools

    return [(f"{c.file}#{i}", _dump(tool)) for c, i, tool in all_tools()]


def crashes() -> list[tuple[str, bytes]]:
    """(file name, bytes) of every regression input in `tests/fuzz/crashes/`."""
    return [
        (path.name, path.read_bytes())
        for path in sorted(CRASHES.iterdir())
        if path.is_file() and path.name != "README.md"
    ]


def seeds(target: str) -> list[tuple[str, bytes]]:
    """The seed corpus of one target (the `cli` target: documents under 20 kB only, as it
    checks conformance on six versions per tool and libFuzzer runs every seed first)."""
    found = documents()
    if target == "tool":
        found += single_tools()
    elif target == "cli":
        found = [(name, data) for name, data in found if len(data) < 20_000]
        found += captures(found)
    return found + crashes()


#: How many pages the `cli` target also gets wrapped as `conduit-mcp capture` files.
CAPTURE_SEEDS = 3


def captures(found: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """A few `tools/list` pages of `found` wrapped as capture files (`conduit-mcp capture`'s
    layout, src/conduit_mcp/cli/_capture_file.py), so the fuzzer starts from the capture
    reader too."""
    wrapped = []
    for name, data in found:
        try:
            page = json.loads(data)
        except ValueError:  # a handed case that is not JSON on purpose
            continue
        if isinstance(page, dict) and isinstance(page.get("tools"), list):
            document = {
                "format": "conduit-mcp/capture",
                "version": 1,
                "protocol_version": "2025-11-25",
                "transport": "stdio",
                "server": {"command": ["server"]},
                "server_info": {"name": "server", "version": "1"},
                "captured_at": "2026-12-01T00:00:00Z",
                "pages": [page],
            }
            wrapped.append((f"{name}#capture", _dump(document)))
        if len(wrapped) == CAPTURE_SEEDS:
            break
    return wrapped
