"""The package's layering: three faces over one core, no import cycle, a light core import.

`conduit_mcp.client` is the core; `conduit_mcp.llm` and `conduit_mcp.pins` build on it;
`conduit_mcp.guard` and the CLI build on all three. Every `import` statement in `src/` is
resolved (relative ones, and imports inside functions, included: a deferred import is still a
dependency) and the graph must have no cycle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = SRC / "conduit_mcp"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _edges(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `name` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()

    def add(target: str) -> None:
        # `from .x import y` may name submodule `.x.y`; otherwise the module `.x` itself.
        while target and target not in known:
            target = target.rsplit(".", 1)[0] if "." in target else ""
        if target and target != name:
            found.add(target)

    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                add(full if full in known else module)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _edges(name, path, known) for name, path in modules.items()}


def test_the_cycle_finder_finds_a_cycle() -> None:
    """conduit-defined: the check can fail (a hand-made graph with one loop)."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    "face",
    [
        "conduit_mcp.client",
        "conduit_mcp.llm",
        "conduit_mcp.pins",
        "conduit_mcp.guard",
    ],
)
def test_no_import_cycle(face: str) -> None:
    """conduit-defined: no module of a face reaches itself through its imports."""
    cycles = [c for c in _cycles(_graph()) if any(m.startswith(face) for m in c)]
    assert cycles == []


def test_layers_point_one_way() -> None:
    """conduit-defined: the core imports no face; llm and pins import neither each other."""
    graph = _graph()
    allowed = {
        "conduit_mcp.client": {"conduit_mcp.client"},
        "conduit_mcp.llm": {"conduit_mcp.client", "conduit_mcp.llm"},
        "conduit_mcp.pins": {"conduit_mcp.client", "conduit_mcp.pins"},
    }
    wrong = []
    for module, targets in graph.items():
        face = next((f for f in allowed if module == f or module.startswith(f + ".")), None)
        if face is None:
            continue
        for target in targets:
            target_face = ".".join(target.split(".")[:2])
            if target == "conduit_mcp._program":  # a shared leaf: it imports nothing of ours
                continue
            if target.startswith("conduit_mcp.") and target_face not in allowed[face]:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_importing_the_core_loads_no_store_and_no_adapter() -> None:
    """conduit-defined: `import conduit_mcp.client` pulls neither sqlite3 nor a face."""
    code = (
        "import json, sys, conduit_mcp.client\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'sqlite3' or "
        "m.startswith(('conduit_mcp.llm', 'conduit_mcp.pins', 'conduit_mcp.guard', "
        "'openai', 'anthropic', 'google', 'psycopg')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


def test_importing_the_core_loads_no_engine_no_models_and_no_event_loop() -> None:
    """conduit-defined: the validation engine, pydantic, the generated models, asyncio and
    pathlib load on first use, not with `import conduit_mcp.client` (its import time is a
    bench figure: `bench/run.py`, row 8)."""
    code = (
        "import json, sys, conduit_mcp.client\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jsonschema_rs', 'pydantic', 'conduit_mcp_wire', 'asyncio', 'pathlib', 'sqlite3'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(out.stdout)
    # conduit_mcp_wire's package __init__ (the version list) is light; its models are not.
    assert [m for m in loaded if m != "conduit_mcp_wire"] == []
