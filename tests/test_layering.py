"""The package's layering: rooms that import one way, no import circle anywhere, a light core.

One graph of the whole `src/conduit_mcp` tree: every `import` statement resolved (relative ones,
and imports inside functions, included: a deferred import is still a dependency; the CLI's
table of commands, which its root imports by name, counts as the root's imports). The graph
has no circle, each room imports only the rooms `ROOMS` allows it, and inside the proxy its
three rooms point one way (`PROXY_ROOMS`). A new room or top-level module is placed in the
table before its code can land.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = SRC / "conduit_mcp"

#: One worker runs the module (make test: --dist loadgroup), so the graph is built once a run.
pytestmark = pytest.mark.xdist_group("layering")


#: Each room of the package (`conduit_mcp.<room>`) and the rooms it may import besides itself:
#: the core imports nothing of ours; `llm` and `pins` build on the core; the guard on those
#: three; the proxy on the guard and below, and on the tool policy it applies per caller
#: (issue 32); the config rewriting writes the proxy's command lines as strings and builds on
#: the core alone; the CLI on everything. `console` and `policy` each use the core and the pins
#: (a face may; nothing else crosses).
ROOMS: dict[str, frozenset[str]] = {
    "client": frozenset(),
    "llm": frozenset({"client"}),
    "pins": frozenset({"client"}),
    "guard": frozenset({"client", "llm", "pins"}),
    "proxy": frozenset({"client", "llm", "pins", "guard", "policy"}),
    "wrap": frozenset({"client"}),
    "console": frozenset({"client", "pins"}),
    "policy": frozenset({"client", "pins"}),
    "cli": frozenset({"client", "llm", "pins", "guard", "proxy", "wrap", "console", "policy"}),
}
#: Top-level modules every room may import: leaves that import nothing of ours.
SHARED = frozenset({"conduit_mcp._program"})

#: The proxy's rooms and those each may import (all may use the proxy's shared modules beside
#: them, `_seam`, `_settings`, `_message`, `_pump`, ...): the HTTP listener serves a session
#: with a child process (`stdio`) or an HTTP server (`upstream`); the stdio proxy reaches an
#: HTTP server through `upstream`; `upstream` needs neither.
PROXY_ROOMS: dict[str, frozenset[str]] = {
    "listen": frozenset({"stdio", "upstream"}),
    "stdio": frozenset({"upstream"}),
    "upstream": frozenset(),
}
#: The proxy's entry points: they start the rooms, and no room imports them.
PROXY_ENTRIES = frozenset({"conduit_mcp.proxy", "conduit_mcp.proxy._launch"})


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


def _cli_table(path: Path) -> list[str]:
    """The group modules `COMMANDS` of `cli/_app.py` names (imported by name, on first use)."""
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and "COMMANDS" in ast.unparse(node)[:20]:
            assert node.value is not None
            table = ast.literal_eval(node.value)
            return sorted({f"conduit_mcp.cli{module}" for module, _ in table.values()})
    raise AssertionError("cli/_app.py defines no COMMANDS")


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The import graph of the tree, built once per worker (about 2 s of CPU: every module of
    src/ parsed) and only read by the tests."""
    modules = _modules()
    known = set(modules)
    graph = {name: _edges(name, path, known) for name, path in modules.items()}
    graph["conduit_mcp.cli._app"].update(_cli_table(modules["conduit_mcp.cli._app"]))
    return graph


def _room(module: str) -> str | None:
    """`pins` for `conduit_mcp.pins._store`; `None` for the package and its top-level modules."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1].startswith("_"):
        return None
    return parts[1]


def test_the_cycle_finder_finds_a_cycle() -> None:
    """conduit-defined: the check can fail (a hand-made graph with one loop)."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_cli_table_is_read() -> None:
    """conduit-defined: the modules the CLI's root imports by name are edges of the graph."""
    assert {"conduit_mcp.cli._pins", "conduit_mcp.cli._proxy"} <= _graph()["conduit_mcp.cli._app"]


def test_no_import_circle_anywhere() -> None:
    """conduit-defined (issue 28): no module of the whole tree reaches itself through its
    imports (it was `proxy/_stdio.py` <-> `proxy/_upstreams.py`)."""
    assert _cycles(_graph()) == []


def test_every_module_is_in_a_room_or_shared() -> None:
    """conduit-defined: a module is the package's `__init__`, a shared leaf, or in a room of
    `ROOMS`; a shared leaf imports nothing of ours."""
    graph = _graph()
    homeless = [
        m for m in graph if m != "conduit_mcp" and m not in SHARED and _room(m) not in ROOMS
    ]
    assert homeless == []
    assert {leaf: graph[leaf] for leaf in SHARED} == {leaf: set() for leaf in SHARED}


def _against_the_rooms(graph: dict[str, set[str]]) -> list[str]:
    """The edges of `graph` that `ROOMS` forbids, as `"importer -> imported"`, sorted."""
    wrong = []
    for module, targets in graph.items():
        room = _room(module)
        for target in targets:
            there = _room(target)
            if target in SHARED or there == room:
                continue
            if room is None or there is None or there not in ROOMS[room]:
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_rooms_point_one_way() -> None:
    """conduit-defined: each room imports only itself, the rooms `ROOMS` allows it, and the
    shared leaves (the core nothing of ours; `llm` and `pins` not each other; nothing below
    the CLI imports it)."""
    assert _against_the_rooms(_graph()) == []


def test_the_proxy_rooms_point_one_way() -> None:
    """conduit-defined: `listen` may use `stdio` and `upstream`, `stdio` may use `upstream`;
    the proxy's shared modules use no room, and no room imports the proxy's entry points."""
    wrong = []
    for module, targets in _graph().items():
        if not module.startswith("conduit_mcp.proxy"):
            continue
        room = module.split(".")[2] if module.count(".") >= 2 else None
        room = room if room in PROXY_ROOMS else None
        for target in targets:
            if not target.startswith("conduit_mcp.proxy"):
                continue
            there = target.split(".")[2] if target.count(".") >= 2 else None
            there = there if there in PROXY_ROOMS else None
            if target in PROXY_ENTRIES and module not in PROXY_ENTRIES:
                wrong.append(f"{module} -> {target}")
            elif there is not None and there != room and module not in PROXY_ENTRIES:
                if room is None or there not in PROXY_ROOMS[room]:
                    wrong.append(f"{module} -> {target}")
    assert sorted(wrong) == []


@pytest.mark.parametrize(
    ("edge", "allowed"),
    [
        pytest.param(("conduit_mcp.pins._x", "conduit_mcp.llm._y"), False, id="pins-to-llm"),
        pytest.param(("conduit_mcp.wrap._x", "conduit_mcp.proxy._y"), False, id="wrap-to-proxy"),
        pytest.param(("conduit_mcp.client._x", "conduit_mcp.cli"), False, id="core-to-cli"),
        pytest.param(("conduit_mcp.console._x", "conduit_mcp.guard"), False, id="console-up"),
        pytest.param(("conduit_mcp._program", "conduit_mcp.client"), False, id="leaf-to-core"),
        pytest.param(("conduit_mcp.client._x", "conduit_mcp._program"), True, id="shared-leaf"),
        pytest.param(("conduit_mcp.policy._x", "conduit_mcp.pins"), True, id="policy-to-pins"),
        pytest.param(("conduit_mcp.cli._x", "conduit_mcp.console._y"), True, id="cli-to-all"),
    ],
)
def test_the_room_table_can_fail(edge: tuple[str, str], allowed: bool) -> None:
    """conduit-defined: the one-way rule on hand-made edges (a forbidden one is caught)."""
    importer, imported = edge
    assert (_against_the_rooms({importer: {imported}}) == []) is allowed


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


def test_importing_the_core_loads_no_table_or_codec_its_first_use_needs() -> None:
    """conduit-defined (issue 33: the client's import time): the UTS #39 confusables table
    (6,311 entries) loads with the first `skeleton`, `base64` with the first header value or
    content hash that needs it; neither with `import conduit_mcp.client`. The skeleton is the
    same once loaded (UTS #39 section 4: Cyrillic а's prototype is Latin a)."""
    code = (
        "import json, sys, conduit_mcp.client as c\n"
        "before = sorted(m for m in sys.modules if m in ('base64', "
        "'conduit_mcp.client._confusables_table'))\n"
        "same = c.skeleton('p\\u0430ypal') == c.skeleton('paypal') == 'paypal'\n"
        "print(json.dumps([before, same, 'conduit_mcp.client._confusables_table' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == [[], True, True]
