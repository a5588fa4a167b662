"""mcp 1.x clients (langchain-mcp-adapters 0.3.2 pins mcp >= 1.24, < 2) cannot import the guard,
which is built on mcp 2.x; they get it through `conduit-mcp proxy` in their stdio server config.
The client runs in its own venv under .cache/mcp1/ (built on first use from the registry), the
proxy and the hostile server in this one; no model, no network beyond the install.

Builds a venv: runs only when selected (`pytest -m mcp1`, or CONDUIT_TEST_MCP1=1), and only in a
build that has `conduit-mcp proxy`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.filelocks import locked

from ..guard.conftest import HOSTILE, Hostile

pytestmark = pytest.mark.mcp1

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).resolve().parent / "mcp1_client.py"
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
#: the floor langchain-mcp-adapters and mcp-use declare, and the last 1.x release.
MCP1_VERSIONS = ("1.24.0", "1.30.0")
ADAPTERS = "langchain-mcp-adapters==0.3.2"


@pytest.fixture
def selected(request: pytest.FixtureRequest) -> None:
    if "mcp1" not in request.config.getoption("markexpr") and not os.environ.get(
        "CONDUIT_TEST_MCP1"
    ):
        pytest.skip("builds its own venv: run with -m mcp1 (or CONDUIT_TEST_MCP1=1)")
    probe = subprocess.run([str(CONDUIT), "proxy", "--help"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("this build has no conduit-mcp proxy")


def mcp1_python(version: str) -> Path:
    """The python of a venv with mcp `version` and langchain-mcp-adapters (built once)."""
    venv = ROOT / ".cache" / "mcp1" / version
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with locked(venv.parent / f"{version}.lock", timeout=900):
        if not stamp.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            subprocess.run([*pip, f"mcp=={version}", ADAPTERS], check=True)
            stamp.touch()
    return python


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_langchain_mcp_adapters_on_mcp1_through_the_proxy(
    selected: None, version: str, hostile: Callable[[str], Hostile]
) -> None:
    """The server entry's command is `conduit-mcp proxy --server-id hostile -- <server>`:
    invalid arguments are refused unsent, and after the server changes echo's description the
    second listing drops echo and the tool the client already holds is refused (-32602 with
    the guard's reason, raised by langchain-mcp-adapters as the SDK's `McpError`)."""
    server = hostile("rugpull")
    command = [str(CONDUIT), "proxy", "--server-id", "hostile", "--", sys.executable]
    command += [str(HOSTILE), "--scenario", "rugpull", "--log", str(server.log)]
    ran = subprocess.run(
        [str(mcp1_python(version)), str(CLIENT), *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["mcp"] == version
    assert report["first"] == ["add", "echo"]
    assert report["second"] == ["add"]
    invalid, added, blocked = report["calls"]
    assert (invalid["error"], invalid["data"]["reason"]) == (-32602, "invalid_arguments")
    assert "'text': '3'" in added["ok"]
    assert (blocked["error"], blocked["data"]["reason"]) == (-32602, "tool_blocked")
    assert server.calls() == [("add", {"a": 1, "b": 2})]
