"""The public boundary: each face's private modules are used only where the layering allows.

`conduit_mcp.client`, `conduit_mcp.llm`, `conduit_mcp.pins` and `conduit_mcp.wrap` (and the
coming `conduit_mcp.console` and `conduit_mcp.policy`) export their API from their
`__init__.py`; the `_x.py` modules beside it are private. Inside the package family the core
(`client`) is shared: a face may build on its private modules; nothing else does, and no face
reaches into another's privates (the CLI uses the faces' public names only). Every module of
`conduit_mcp` (the CLI and its helpers, the guard package, the faces, anything added later)
and every script of `bench/` is parsed and its imports resolved, relative ones included; a
test on hand-written sources shows each form the scanner must catch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "conduit_mcp"
CLIENT = "conduit_mcp.client"
#: The faces whose `_x` modules are private, and which other faces may use them.
FACES = (
    "conduit_mcp.client",
    "conduit_mcp.llm",
    "conduit_mcp.pins",
    "conduit_mcp.wrap",
    "conduit_mcp.console",
    "conduit_mcp.policy",
)
_SHARED_CORE = {face: CLIENT for face in FACES if face != CLIENT}
#: The core's helper every part of the package uses (not `bench/`): the one bounded cache
#: (`BoundedCache`) and the one absent-value sentinel (`MISSING`), both from `_cache`. (The
#: line that installs a missing extra and the program's name are no face's: `_program`.)
_PACKAGE_HELPERS = frozenset({"conduit_mcp.client._cache"})


def _module_name(path: Path) -> str:
    """`conduit_mcp.cli` for src/conduit_mcp/cli/__init__.py; `bench.run` for bench/run.py."""
    base = ROOT / "src" if path.is_relative_to(ROOT / "src") else ROOT
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute module of `from <level dots><module> import ...` inside `importer`."""
    if level == 0:
        return module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _face_of(module: str) -> str | None:
    """The face `module` belongs to (`conduit_mcp.llm` for `conduit_mcp.llm._shape`), if any."""
    return next((f for f in FACES if module == f or module.startswith(f + ".")), None)


def _private_of(dotted: str) -> str | None:
    """The face whose private module or name `dotted` reaches into, if it does."""
    face = _face_of(dotted)
    if face is None or dotted == face:
        return None
    step = dotted[len(face) + 1 :].split(".")[0]
    if step.startswith("_") and not (step.startswith("__") and step.endswith("__")):
        return face
    return None


def _private_client(dotted: str, importer: str = "") -> bool:
    """Whether `dotted` reaches past a face's public names where `importer` may not."""
    face = _private_of(dotted)
    if face is None:
        return False
    if importer.startswith("conduit_mcp.") and any(
        dotted == helper or dotted.startswith(helper + ".") for helper in _PACKAGE_HELPERS
    ):
        return False
    own = _face_of(importer)
    return not (own == face or _SHARED_CORE.get(own or "") == face)


def violations(source: str, importer: str, is_package: bool = False) -> list[str]:
    """Each use of a private module or name of `conduit_mcp.client` in `source`, by line."""
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the module it is bound to
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private_client(alias.name, importer):
                    found.append(f"{node.lineno}: import {alias.name}")
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, importer, is_package)
            if _private_client(module, importer):
                found.append(f"{node.lineno}: from {module} import ...")
                continue
            for alias in node.names:
                target = f"{module}.{alias.name}"
                if _private_client(target, importer):
                    found.append(f"{node.lineno}: from {module} import {alias.name}")
                aliases[alias.asname or alias.name] = target
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _private_client(
                node.value, importer
            ):  # importlib.import_module("conduit_mcp.client._x")
                found.append(f"{node.lineno}: string {node.value!r}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node, aliases)
            # Reported once, at the step that crosses the boundary (not at every longer chain).
            if dotted is not None and _private_client(dotted, importer):
                if not _private_client(dotted.rsplit(".", 1)[0], importer):
                    found.append(f"{node.lineno}: attribute {dotted}")
    return found


def _dotted(node: ast.Attribute, aliases: dict[str, str]) -> str | None:
    """`a.b.c` with `a` replaced by the module it is bound to, or `None` if not a name chain."""
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name) or value.id not in aliases:
        return None
    return ".".join([aliases[value.id], *reversed(parts)])


#: Profilers that time the core's private steps one at a time (what bounds a bench row):
#: reading private names is their job, so they are not held to the boundary.
PROFILERS = frozenset({"profile_client.py"})


def scanned_files() -> list[Path]:
    """Every module of `conduit_mcp`, and every script of `bench/` but its `PROFILERS`."""
    bench = [p for p in (ROOT / "bench").rglob("*.py") if p.name not in PROFILERS]
    return sorted([*PACKAGE.rglob("*.py"), *bench])


def test_the_scan_covers_the_cli_and_bench() -> None:
    """conduit-defined: the files the boundary is about are really scanned."""
    names = {_module_name(p) for p in scanned_files()}
    assert {"conduit_mcp", "conduit_mcp.cli", "bench.run", "bench.pins"} <= names
    assert {"conduit_mcp.llm._shape", "conduit_mcp.pins._store", "conduit_mcp.guard"} <= names


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_uses_a_private_name_the_layering_forbids(path: Path) -> None:
    """conduit-defined: only exported names, but for a face's own and the shared core's."""
    source = path.read_text(encoding="utf-8")
    assert violations(source, _module_name(path), path.name == "__init__.py") == []


@pytest.mark.parametrize(
    ("source", "importer", "is_package", "expected"),
    [
        pytest.param(
            "from conduit_mcp.client._validate import x",
            "bench.run",
            False,
            ["1: from conduit_mcp.client._validate import ..."],
            id="absolute-from",
        ),
        pytest.param(
            "import conduit_mcp.client._validate",
            "bench.run",
            False,
            ["1: import conduit_mcp.client._validate"],
            id="absolute-import",
        ),
        pytest.param(
            "from ..client._errors import json_type_name",
            "conduit_mcp.cli._pins",
            False,
            ["1: from conduit_mcp.client._errors import ..."],
            id="relative-from-cli",
        ),
        pytest.param(
            "from ..client._intake import HEADERS_SINCE",
            "conduit_mcp.guard.policy",
            False,
            ["1: from conduit_mcp.client._intake import ..."],
            id="relative-from-guard",
        ),
        pytest.param(
            "from ..client._cache import MISSING, BoundedCache",
            "conduit_mcp.guard._sdkcheck",
            False,
            [],
            id="the-core-cache-helper-inside-the-package",
        ),
        pytest.param(
            "from conduit_mcp.client._cache import BoundedCache",
            "bench.run",
            False,
            ["1: from conduit_mcp.client._cache import ..."],
            id="the-core-cache-helper-outside-the-package",
        ),
        pytest.param(
            "from ..client import _validate",
            "conduit_mcp.guard",
            True,
            ["1: from conduit_mcp.client import _validate"],
            id="private-module-as-name-from-package-init",
        ),
        pytest.param(
            "from conduit_mcp import client\nclient._versions.at_least('a', 'b')",
            "bench.run",
            False,
            ["2: attribute conduit_mcp.client._versions"],
            id="attribute",
        ),
        pytest.param(
            "import importlib\nimportlib.import_module('conduit_mcp.client._json')",
            "bench.run",
            False,
            ["2: string 'conduit_mcp.client._json'"],
            id="import-module-string",
        ),
        pytest.param(
            "from conduit_mcp.client import Tool, intake\nfrom conduit_mcp.client import __all__",
            "bench.run",
            False,
            [],
            id="public-names-are-fine",
        ),
        pytest.param(
            "from ..client._errors import Error\nfrom ._media import sniff",
            "conduit_mcp.llm._shape",
            False,
            [],
            id="a-face-builds-on-the-core",
        ),
        pytest.param(
            "from ..pins._store import PinStore",
            "conduit_mcp.llm._shape",
            False,
            ["1: from conduit_mcp.pins._store import ..."],
            id="no-face-reaches-into-another",
        ),
        pytest.param(
            "from ..pins._store import PinStore\nfrom ..client._json import parse_json",
            "conduit_mcp.console._page",
            False,
            ["1: from conduit_mcp.pins._store import ..."],
            id="a-new-face-uses-the-core-not-another-face",
        ),
        pytest.param(
            "from ..wrap._config import wrap_config",
            "conduit_mcp.cli._wrap",
            False,
            ["1: from conduit_mcp.wrap._config import ..."],
            id="the-cli-uses-public-names-only",
        ),
        pytest.param(
            "from ..llm._shape import shape_for_llm",
            "conduit_mcp.client._intake",
            False,
            ["1: from conduit_mcp.llm._shape import ..."],
            id="the-core-never-reaches-into-a-face",
        ),
        pytest.param(
            "from ._text import visible\nfrom ..client import Error",
            "conduit_mcp.cli._inspect",
            False,
            [],
            id="private-cli-helpers-are-fine",
        ),
    ],
)
def test_the_scanner_catches_every_form_of_private_import(
    source: str, importer: str, is_package: bool, expected: list[str]
) -> None:
    """conduit-defined: the boundary test can fail (each form written by hand)."""
    assert violations(source, importer, is_package) == expected
