"""Run in a subprocess by test_adapter_memory.py: adapt a 1.5 MB page of eight `$ref`-chain
tools, keep every Gemini declaration, and print resident memory and, for every adapter, what
one call on a deep schema retains beyond its declaration, as JSON.

Each page tool's schema (about 185 KB) is a chain of `$ref`s through deeply nested definitions,
which the Gemini adapter inlines (issue 12: its notes' paths, stored whole, took ~125 MB per
tool). The deep tool puts ~1,000 notes thousands of keys deep without any `$ref`.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conduit_mcp.client import Tool, canonical_json
from conduit_mcp.client._jsoncopy import copy_json
from conduit_mcp.llm import to_anthropic_tool, to_gemini_function, to_openai_tool

LEVELS = 120  # objects nested inside each definition
DEFINITIONS = 32  # chained: each one's deepest object refers to the next
LEAVES = 16  # properties with a format Gemini refuses, at the bottom of each definition


def chain_schema(seed: int) -> dict[str, Any]:
    """About 185 KB: definitions of `LEVELS` nested objects, each ending in a `$ref` to the
    next and `LEAVES` noted keywords. Inlined, a note's path is thousands of keys deep."""
    defs: dict[str, Any] = {}
    for i in range(DEFINITIONS):
        bottom: dict[str, Any] = {"next": {"$ref": f"#/$defs/d{i + 1}"}}
        for leaf in range(LEAVES):
            bottom[f"u{leaf}"] = {"type": "string", "format": "uri"}
        node: dict[str, Any] = {"type": "object", "properties": bottom}
        for _ in range(LEVELS):
            node = {"type": "object", "properties": {"a": node}}
        defs[f"d{i}"] = {**node, "x-seed": seed}
    defs[f"d{DEFINITIONS}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def deep_schema() -> dict[str, Any]:
    """About 185 KB: 2,600 nested objects; below level 1,500 each has a sibling with a draft-04
    boolean bound that every adapter notes, so ~1,000 notes sit 3,000-5,000 keys deep."""
    node: dict[str, Any] = {"type": "string"}
    for level in range(2_600, 0, -1):
        properties: dict[str, Any] = {"a": node}
        if level > 1_500:
            properties["b"] = {"type": "number", "exclusiveMinimum": False}
        node = {"type": "object", "properties": properties}
    return node


def peak_rss_mb() -> float:
    """This process's peak resident memory in MiB. Linux `VmHWM` first: `ru_maxrss` keeps the
    parent's high-water mark across fork and exec, so under pytest it reports pytest's."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


ADAPTERS = (
    ("gemini", to_gemini_function),
    ("openai", to_openai_tool),
    ("openai-strict", lambda tool: to_openai_tool(tool, strict=True)),
    ("anthropic", to_anthropic_tool),
)


def main() -> None:
    page = {"tools": [{"name": f"t{k}", "inputSchema": chain_schema(k)} for k in range(8)]}
    page_bytes = len(json.dumps(page))
    tools = [Tool.from_wire("s", raw) for raw in page["tools"]]
    # The figure: every Gemini declaration of the page kept, resident memory in all.
    kept = [to_gemini_function(tool) for tool in tools]
    rss_mb = peak_rss_mb()
    # What one call retains beyond its declaration (notes, their paths), for each adapter, on a
    # schema whose notes are thousands of keys deep.
    deep = Tool.from_wire("s", {"name": "deep", "inputSchema": deep_schema()})
    extra: dict[str, int] = {}
    notes: dict[str, int] = {}
    for name, adapt in ADAPTERS:
        gc.collect()
        tracemalloc.start()
        adapted = adapt(deep)
        retained = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        gc.collect()
        tracemalloc.start()
        declaration = copy_json(adapted.declaration)  # the declaration alone, same shape
        alone = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del declaration
        notes[name] = len(adapted.notes)
        extra[name] = retained - alone
    report = {
        "page_bytes": page_bytes,
        "deep_bytes": len(canonical_json(deep.raw)),
        "max_rss_mb": rss_mb,
        "kept": len(kept),
        "notes": notes,
        "extra_bytes": extra,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
