"""A spec bump, end to end, in a temporary copy of the project (schema/README.md's recipe).

The new version is a renamed copy of 2026-07-28 (a real schema, so every patch still fits): the
test vendors it, pins it, runs the generator as `make generate` does, and then asks the
regenerated package and the client in a fresh interpreter whether they know it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conduit_mcp.client import Error
from conduit_mcp.client._versions import check_version

ROOT = Path(__file__).resolve().parents[2]

#: The version the bump adds: any date after the newest pin.
NEW = "2027-01-26"
TEMPLATE = "2026-07-28"

# Run in the copy: the registry, the generated module, intake and conformance all know NEW.
PROBE = """
import json, sys
from pathlib import Path
copy = Path(sys.argv[1])
new, previous = sys.argv[2], sys.argv[3]

import conduit_mcp_wire
from conduit_mcp.client import conformance_violations, intake
from conduit_mcp.client._versions import KNOWN_VERSIONS, LATEST, at_least

# The copy's packages, not the project's editable install.
assert Path(conduit_mcp_wire.__file__).is_relative_to(copy), conduit_mcp_wire.__file__
import conduit_mcp
assert Path(conduit_mcp.__file__).is_relative_to(copy), conduit_mcp.__file__

module = conduit_mcp_wire.module_for(new)
tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
parsed = module.Tool.model_validate(tool)
page = intake("srv", {"tools": [tool]}, transport="stdio", protocol_version=new)
print(json.dumps({
    "versions": list(conduit_mcp_wire.VERSIONS),
    "latest": conduit_mcp_wire.LATEST,
    "module": module.__name__,
    "tool_round_trip": parsed.model_dump(by_alias=True, exclude_unset=True) == tool,
    "client_versions": list(KNOWN_VERSIONS),
    "client_latest": LATEST,
    "at_least_previous": at_least(new, previous),
    "previous_at_least_new": at_least(previous, new),
    "accepted": [t.name for t in page.tools],
    "conformant": conformance_violations(tool, kind="tool", protocol_version=new) == (),
    "nonconformant": len(conformance_violations(
        {"name": 1}, kind="tool", protocol_version=new)) > 0,
}))
"""


def test_the_new_version_is_unknown_before_the_bump() -> None:
    """Control: without the pin the client refuses NEW, so the bump below proves something."""
    with pytest.raises(Error) as info:
        check_version(NEW)
    assert info.value.reason == "unknown_protocol_version"


@pytest.mark.slow  # regenerates the models for a new spec version
def test_a_spec_bump_reaches_the_generated_package_and_the_client(tmp_path: Path) -> None:
    """The recipe: vendor, pin (before draft), generate; then everything knows the version."""
    copy = tmp_path / "project"
    for part in ("schema", "codegen", "src", "generated"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))

    # 1. Vendor: schema/<version>/schema.json, byte for byte.
    source = copy / "schema" / TEMPLATE / "schema.json"
    (copy / "schema" / NEW).mkdir()
    shutil.copyfile(source, copy / "schema" / NEW / "schema.json")

    # 2. Pin: a PINNED.json entry in release order (draft stays last).
    pin_file = copy / "schema" / "PINNED.json"
    pins = json.loads(pin_file.read_text(encoding="utf-8"))
    data = source.read_bytes()
    template = next(p for p in pins["schemas"] if p["version"] == TEMPLATE)
    entry = {
        **template,
        "version": NEW,
        "source_path": f"schema/{NEW}/schema.json",
        "local_path": f"{NEW}/schema.json",
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    draft_at = [p["version"] for p in pins["schemas"]].index("draft")
    pins["schemas"].insert(draft_at, entry)
    pin_file.write_text(json.dumps(pins, indent=2) + "\n", encoding="utf-8")

    # 3. make generate's first step, run in the copy.
    done = subprocess.run(
        [sys.executable, "codegen/generate.py"],
        cwd=copy,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "pins verified: 7 schemas match their sha256" in done.stdout
    assert f"latest {NEW}" in done.stdout
    module_file = copy / "generated" / "conduit_mcp_wire" / "v2027_01_26.py"
    header = module_file.read_text(encoding="utf-8")[:1500]
    assert f"# Source: schema/{NEW}/schema.json" in header
    # The patches with an open range reached the new version (the content-block discriminator).
    assert "/$defs/ContentBlock/discriminator" in header

    # 4. What to check: the registry, the new module, intake and conformance in the copy.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(copy / "src"), str(copy / "generated")]),
    }
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(copy), NEW, TEMPLATE],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    expected_versions = [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
        NEW,
        "draft",
    ]
    assert seen == {
        "versions": expected_versions,
        "latest": NEW,
        "module": "conduit_mcp_wire.v2027_01_26",
        "tool_round_trip": True,
        "client_versions": expected_versions,
        "client_latest": NEW,
        "at_least_previous": True,
        "previous_at_least_new": False,
        "accepted": ["echo"],
        "conformant": True,
        "nonconformant": True,
    }
