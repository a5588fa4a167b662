"""One distribution, two import packages, from a built wheel as well as the editable install."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("conduit_mcp-*.whl")
    return built


def test_wheel_holds_both_packages_with_py_typed(wheel: Path) -> None:
    """The issue: conduit_mcp (handwritten) and conduit_mcp_wire (generated) in one wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "conduit_mcp/__init__.py",
        "conduit_mcp/py.typed",
        "conduit_mcp/client/__init__.py",
        "conduit_mcp_wire/__init__.py",
        "conduit_mcp_wire/_base.py",
        "conduit_mcp_wire/py.typed",
        "conduit_mcp_wire/v2024_11_05.py",
        "conduit_mcp_wire/v2026_07_28.py",
        "conduit_mcp_wire/draft.py",
        # the official schemas strict conformance validates against (issue 13)
        "conduit_mcp/_schema/2024-11-05/schema.json",
        "conduit_mcp/_schema/2026-07-28/schema.json",
    ):
        assert required in names
    assert not any(n.startswith(("tests/", "src/", "generated/")) for n in names)


def test_wheel_contents_import_and_work(wheel: Path, tmp_path: Path) -> None:
    """Import from the unpacked wheel (ahead of the editable install on sys.path)."""
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import conduit_mcp, conduit_mcp_wire\n"
        "from conduit_mcp.client import Tool\n"
        "assert conduit_mcp.__file__.startswith(sys.argv[1]), conduit_mcp.__file__\n"
        "assert conduit_mcp_wire.__file__.startswith(sys.argv[1]), conduit_mcp_wire.__file__\n"
        "t = Tool.from_wire('s', {'name': 'a', 'inputSchema': {'type': 'object'}})\n"
        "m = conduit_mcp_wire.module_for('2026-07-28')\n"
        "m.Tool.model_validate(t.raw)\n"
        "from conduit_mcp.client import is_conformant\n"
        "assert is_conformant(t.raw, kind='tool', protocol_version='2026-07-28')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
