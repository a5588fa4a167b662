"""The guard engine's structure: decisions without the SDK, one policy table, no private SDK
names (conduit-defined; the developers' guide "Small modules with one job")."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conduit_mcp.guard._policy import _CHOICES, OUTCOMES

GUARD = Path(__file__).resolve().parents[2] / "src" / "conduit_mcp" / "guard"


def test_the_engine_imports_no_sdk_module() -> None:
    """The engine and its state load without `mcp` (the proxy runs them behind a process
    boundary); only the seams (`_streams`, `_fastmcp`) and `Guard`'s SDK helpers import it."""
    code = (
        "import json, sys, conduit_mcp.guard._engine, conduit_mcp.guard._listing\n"
        "import conduit_mcp.guard._calls, conduit_mcp.guard._scope, conduit_mcp.guard._state\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


def test_the_guard_imports_no_private_sdk_name() -> None:
    """No `from mcp... import _name` (or `mcp_types`/`fastmcp`) anywhere in the guard."""
    private = []
    for path in GUARD.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                if node.module.split(".")[0] in ("mcp", "mcp_types", "fastmcp"):
                    private += [f"{path.name}: {a.name}" for a in node.names if a.name[0] == "_"]
    assert private == []


def test_the_later_revision_fields_match_the_sdks_own() -> None:
    """`_sdkcheck._later_fields` (public tables) gives what mcp 2.3.0's private
    `_later_revision_fields` gives, at every version it knows and one it does not."""
    session = pytest.importorskip("mcp.client.session")
    if not hasattr(session, "_later_revision_fields"):
        pytest.skip("this mcp release has no _later_revision_fields (2.0.x drops no fields)")
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    from conduit_mcp.guard._sdkcheck import _later_fields

    for version in [*KNOWN_PROTOCOL_VERSIONS, "2099-01-01"]:
        oracle = frozenset(session._later_revision_fields("tools/call", version))
        assert _later_fields(version) == oracle, version


def test_one_table_holds_every_policy_outcome() -> None:
    """Every `new` and `changed` policy value has exactly one outcome; a held or blocked
    tool is never listed to the model, an ok one always is."""
    keys = {(status, value) for status, value in OUTCOMES if status != "approved"}
    expected = {("new", v) for v in _CHOICES["new"]} | {("changed", v) for v in _CHOICES["changed"]}
    assert keys == expected
    for outcome in OUTCOMES.values():
        assert outcome.listed == (outcome.status == "ok")
