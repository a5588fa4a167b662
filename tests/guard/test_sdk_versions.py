"""The guard against whichever SDK release is installed (make test-sdk-matrix runs both ends).

The guard mirrors what the SDK's `ClientSession` does to a `tools/call` result before it
validates it; that step changed between releases (mcp 2.1.0 began dropping a later revision's
keys), so the mirror follows the installed release, from public tables only.
"""

from __future__ import annotations

import ast
import json
from importlib import metadata
from pathlib import Path

import pytest
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from conduit_mcp.guard import _sdkcheck

ROOT = Path(__file__).resolve().parents[2]
GUARD = Path(_sdkcheck.__file__).resolve().parent


def _sdk_release() -> tuple[int, int]:
    major, minor = metadata.version("mcp").split(".")[:2]
    return int(major), int(minor)


@pytest.mark.parametrize("version", KNOWN_PROTOCOL_VERSIONS)
def test_later_revision_keys_match_what_the_installed_sdk_drops(version: str) -> None:
    """Oracle: the SDK's own `_later_revision_fields` where the release has it (2.1.0 on);
    2.0.x drops nothing."""
    try:
        from mcp.client.session import _later_revision_fields
    except ImportError:
        assert _sdk_release() < (2, 1)
        assert _sdkcheck._later_fields(version) == frozenset()
        return
    assert _sdk_release() >= (2, 1)
    assert _sdkcheck._later_fields(version) == _later_revision_fields("tools/call", version)


def test_a_2025_session_drops_the_keys_only_2026_results_declare_on_sdks_that_do() -> None:
    """Worked out from the vendored schemas: the properties of 2026-07-28's `CallToolResult`
    and `InputRequiredResult` that 2025-11-25's `CallToolResult` lacks."""

    def properties(version: str, *names: str) -> set[str]:
        schema = json.loads((ROOT / "schema" / version / "schema.json").read_text("utf-8"))
        defs = schema.get("$defs") or schema["definitions"]
        return set().union(*(defs[name]["properties"] for name in names))

    newer = properties("2026-07-28", "CallToolResult", "InputRequiredResult")
    expected = newer - properties("2025-11-25", "CallToolResult")
    assert expected == {"resultType", "inputRequests", "requestState"}
    dropped = _sdkcheck._later_fields("2025-11-25")
    assert dropped == (frozenset() if _sdk_release() < (2, 1) else expected)
    assert _sdkcheck._later_fields("2026-07-28") == frozenset()


def test_the_guard_imports_no_private_name_of_an_sdk() -> None:
    """Private names change without notice between releases: the guard's modules import only
    public modules and names of mcp, mcp_types and fastmcp."""
    offenders = []
    for path in sorted(GUARD.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                root = node.module.split(".")[0]
                if root not in ("mcp", "mcp_types", "fastmcp"):
                    continue
                parts = [*node.module.split("."), *(a.name for a in node.names)]
                if any(p.startswith("_") for p in parts):
                    offenders.append(f"{path.name}: from {node.module} import ...")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] in ("mcp", "mcp_types", "fastmcp") and any(
                        p.startswith("_") for p in parts
                    ):
                        offenders.append(f"{path.name}: import {alias.name}")
    assert offenders == []
