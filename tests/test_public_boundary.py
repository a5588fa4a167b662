"""The public boundary: outside `conduit_mcp/client/`, nothing uses its private modules or names.

`conduit_mcp.client` exports its API from `client/__init__.py`; the `_x.py` modules beside it
are private (issue 15 item 3). Every module of `conduit_mcp` outside `client/` (the CLI and its
helpers, the guard package, anything added later) and every script of `bench/` is parsed and
its imports resolved, relative ones included; a test on hand-written sources shows each form
the scanner must catch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "conduit_mcp"
CLIENT = "conduit_mcp.client"


def _module_name(path: Path) -> str:
    """`conduit_mcp.cli` for src/conduit_mcp/cli.py; `bench.run` for bench/run.py."""
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


def _private_client(dotted: str) -> bool:
    """Whether a dotted name reaches into `conduit_mcp.client` past its public face."""
    if not dotted.startswith(CLIENT + "."):
        return False
    step = dotted[len(CLIENT) + 1 :].split(".")[0]
    return step.startswith("_") and not (step.startswith("__") and step.endswith("__"))


def violations(source: str, importer: str, is_package: bool = False) -> list[str]:
    """Each use of a private module or name of `conduit_mcp.client` in `source`, by line."""
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the module it is bound to
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private_client(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, importer, is_package)
            if _private_client(module):
                found.append(f"{node.lineno}: from {module} import ...")
                continue
            for alias in node.names:
                target = f"{module}.{alias.name}"
                if _private_client(target):
                    found.append(f"{node.lineno}: from {module} import {alias.name}")
                aliases[alias.asname or alias.name] = target
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _private_client(node.value):  # importlib.import_module("conduit_mcp.client._x")
                found.append(f"{node.lineno}: string {node.value!r}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node, aliases)
            # Reported once, at the step that crosses the boundary (not at every longer chain).
            if dotted is not None and _private_client(dotted):
                if not _private_client(dotted.rsplit(".", 1)[0]):
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


def scanned_files() -> list[Path]:
    """Every module of `conduit_mcp` outside `client/`, and every script of `bench/`."""
    package = [p for p in PACKAGE.rglob("*.py") if not p.is_relative_to(PACKAGE / "client")]
    return sorted([*package, *(ROOT / "bench").rglob("*.py")])


def test_the_scan_covers_the_cli_and_bench() -> None:
    """conduit-defined: the files the boundary is about are really scanned."""
    names = {_module_name(p) for p in scanned_files()}
    assert {"conduit_mcp", "conduit_mcp.cli", "bench.run", "bench.pins"} <= names
    assert not any(name.startswith(CLIENT) for name in names)


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_outside_the_client_package_uses_its_private_names(path: Path) -> None:
    """conduit-defined (issue 15 item 3): only names exported by `conduit_mcp.client`."""
    source = path.read_text(encoding="utf-8")
    assert violations(source, _module_name(path), path.name == "__init__.py") == []


@pytest.mark.parametrize(
    ("source", "importer", "is_package", "expected"),
    [
        pytest.param(
            "from conduit_mcp.client._pins import x",
            "bench.run",
            False,
            ["1: from conduit_mcp.client._pins import ..."],
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
            "from .client._errors import json_type_name",
            "conduit_mcp.cli",
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
            "from ..client import _pins",
            "conduit_mcp.guard",
            True,
            ["1: from conduit_mcp.client import _pins"],
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
            "from ._cli_text import visible\nfrom .client import Error",
            "conduit_mcp.cli",
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
