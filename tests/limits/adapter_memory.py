"""Run in a subprocess by test_adapter_memory.py: adapt a 1.5 MB page of eight `$ref`-chain
tools for every provider, keep every result, print resident memory and retained sizes as JSON.

Each tool's schema (about 185 KB) is a chain of definitions, each an object whose property
refers to the next and which carries keywords each provider notes (an unknown keyword, a format
Gemini refuses, an array without items), so notes pile up deep inside inlined references.
"""

from __future__ import annotations

import json
import resource
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conduit_mcp.client import Tool, to_anthropic_tool, to_gemini_function, to_openai_tool

LINKS = 880


def chain_schema(seed: int) -> dict[str, Any]:
    """About 185 KB: `LINKS` definitions, each referring to the next (twice)."""
    defs: dict[str, Any] = {}
    for i in range(LINKS):
        nxt = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {
            "type": "object",
            "x-seed": seed,
            "properties": {
                "next": nxt,
                "also": {"allOf": [nxt]},
                "url": {"type": "string", "format": "uri"},
                "tags": {"type": "array"},
            },
        }
    defs[f"d{LINKS}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def main() -> None:
    page = {"tools": [{"name": f"t{k}", "inputSchema": chain_schema(k)} for k in range(8)]}
    size = len(json.dumps(page))
    tools = [Tool.from_wire("s", raw) for raw in page["tools"]]
    trace = "--trace" in sys.argv
    if trace:
        tracemalloc.start()
    kept = []
    for tool in tools:
        for adapt in (
            to_openai_tool,
            lambda t: to_openai_tool(t, strict=True),
            to_anthropic_tool,
            to_gemini_function,
        ):
            kept.append(adapt(tool))
    retained = tracemalloc.get_traced_memory()[0] if trace else -1
    declarations = sum(len(json.dumps(a.declaration)) for a in kept)
    notes = [len(a.notes) for a in kept]
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "page_bytes": size,
                "max_rss_mb": rss_kb / 1024,
                "retained_bytes": retained,
                "declaration_bytes": declarations,
                "max_notes": max(notes),
                "results": len(kept),
            }
        )
    )


if __name__ == "__main__":
    main()
