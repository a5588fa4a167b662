"""The guard without the `mcp` extra: one line naming the extra, never a raw ModuleNotFoundError.

conduit-defined, as the other faces word it (the `conduit-mcp` command without the `cli`
extra, a `postgresql://` PinStore without psycopg): what is missing and the command that
installs the extra (`conduit_mcp._program.install_command`). The extra is hidden in a
subprocess (`sys.modules[name] = None` makes `import name` raise `ModuleNotFoundError`, as
an environment without the package does).
"""

from __future__ import annotations

import json
import subprocess
import sys

from conduit_mcp._program import install_command

_PROBE = """
import json, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # as if the mcp extra were not installed
try:
    {action}
except ImportError as exc:
    print(json.dumps({{"type": type(exc).__name__, "name": exc.name, "message": str(exc),
                      "caught_as_import_error": True}}))
else:
    print(json.dumps({{"type": None}}))
"""


def _probe(hidden: str, action: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(action=action), hidden],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_importing_the_guard_without_the_mcp_extra_names_the_extra() -> None:
    """Without the extra (no mcp, mcp_types, anyio): `import conduit_mcp.guard` raises a
    `ModuleNotFoundError` (an `ImportError`, as before) whose one line names the missing
    module and the install command of the `mcp` extra. On main it said only "No module named
    'anyio'"."""
    found = _probe("mcp,mcp_types,anyio", "import conduit_mcp.guard")
    assert found["type"] == "ModuleNotFoundError"
    assert found["name"] == "anyio"
    message = str(found["message"])
    assert "\\n" not in message and "\n" not in message
    assert message == (
        "conduit_mcp.guard needs the mcp extra (anyio is not installed): " + install_command("mcp")
    )


def test_wrapping_streams_without_the_sdk_names_the_extra() -> None:
    """anyio present but no mcp (the engine imports; the SDK seam cannot work): wrapping an
    SDK stream pair says which extra to install, in one line."""
    found = _probe(
        "mcp,mcp_types",
        "from conduit_mcp.guard import Guard; Guard('s').wrap_streams(None, None)",
    )
    assert found["type"] == "ModuleNotFoundError"
    assert found["name"] == "mcp"
    assert found["message"] == (
        "conduit_mcp.guard needs the mcp extra (mcp is not installed): " + install_command("mcp")
    )


def test_the_guard_imports_with_the_extra() -> None:
    """With the extra installed nothing changes: the import loads no SDK module either."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, conduit_mcp.guard; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('mcp', 'mcp_types')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"
