"""Fixtures for the live-server tests: install `@modelcontextprotocol/server-everything` from npm
into the repo's `.cache/npm` (once, pinned) and run it over stdio with `StdioDriver`.

Node.js and npm are required: when they are missing the tests FAIL (they never skip), because CI
has them and a silently skipped live test hides a broken setup.

The install is the conformance run's installer (tests/conformance/client/install.py,
`install_npm_packages`): idempotent and safe when several processes run it at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.client.install import InstallError, install_npm_packages

from .stdio_driver import StdioDriver

REPO_ROOT = Path(__file__).resolve().parents[2]
NPM_CACHE = REPO_ROOT / ".cache" / "npm"

PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"

#: Exact versions installed. server-everything pins nothing itself (`^` ranges, no lockfile), so
#: the two dependencies that shape its wire output are pinned here to the versions the corpus
#: capture ran with: SDK 1.32.2 (tests/fixtures/corpus/SOURCES.md "server-everything") and zod
#: 4.6.7 (the zod release current at capture time; it reproduces the captured tools/list).
PINS = {
    PACKAGE: VERSION,
    "@modelcontextprotocol/sdk": "1.32.2",
    "zod": "4.6.7",
}

#: The protocol version the driver asks for (the newest one server-everything 2026.8.31 serves).
PROTOCOL_VERSION = "2025-11-25"

#: Client capabilities of the corpus capture's "full" sessions: every capability the server
#: checks before registering a conditional tool (src/everything/tools/index.js
#: `registerConditionalTools`). Shapes per the 2025-11-25 schema `ClientCapabilities`.
FULL_CLIENT_CAPABILITIES: dict[str, Any] = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}},
}

_MIN_NODE_MAJOR = 18  # the MCP TypeScript SDK's `engines.node`

# Filled by the install fixture; shown in the terminal summary.
_install_report: dict[str, Any] = {}


def _install_name() -> str:
    digest = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:10]
    return f"server-everything-{VERSION}-{digest}"


def _entry_point(prefix: Path) -> Path:
    return prefix / "node_modules" / PACKAGE / "dist" / "index.js"


def require_node() -> tuple[str, str]:
    """Return the paths of `node` and `npm`, or fail the test with a clear message."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, p in (("node", node), ("npm", npm)) if p is None)
        pytest.fail(
            f"live tests need Node.js >= {_MIN_NODE_MAJOR} and npm on PATH; {missing} not found. "
            "Install Node.js (CI has it) or deselect these tests with -m 'not live'.",
            pytrace=False,
        )
    out = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    match = re.match(r"v(\d+)\.", out.strip())
    if match is None or int(match.group(1)) < _MIN_NODE_MAJOR:
        pytest.fail(
            f"live tests need Node.js >= {_MIN_NODE_MAJOR}; `node --version` said {out.strip()!r}",
            pytrace=False,
        )
    return node, npm


def install_server_everything(npm: str) -> tuple[Path, float, str]:
    """Install the pinned server-everything under `.cache/npm` unless already there.

    Returns:
        (path of `dist/index.js`, seconds taken, what happened: "warm cache hit", "cold install"
        or "installed by another process" when this one waited on the lock).
    """
    try:
        done = install_npm_packages(npm, NPM_CACHE, _install_name(), PINS, _entry_point)
    except InstallError as exc:
        pytest.fail(str(exc), pytrace=False)
    return done.path, done.seconds, done.how


@pytest.fixture(scope="session")
def server_everything_argv() -> list[str]:
    """The command line that runs the pinned server over stdio (installing it first if needed)."""
    node, npm = require_node()
    entry, seconds, how = install_server_everything(npm)
    _install_report.update(seconds=seconds, how=how, path=str(entry.parents[4]))
    return [node, str(entry), "stdio"]


def _server_env(home: Path) -> dict[str, str]:
    # The capture's minimal environment (SOURCES.md "server-everything"), with a temp HOME.
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NODE_NO_WARNINGS": "1",
        "GZIP_ALLOWED_DOMAINS": "example.invalid",
        "GZIP_MAX_FETCH_TIME_MILLIS": "1000",
    }


def _start(argv: list[str], home: Path, capabilities: dict[str, Any]) -> Iterator[StdioDriver]:
    with StdioDriver(argv, env=_server_env(home), cwd=str(home)) as driver:
        driver.initialize(capabilities, protocol_version=PROTOCOL_VERSION)
        yield driver


@pytest.fixture(scope="module")
def everything_no_caps(
    server_everything_argv: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StdioDriver]:
    """A running, initialized server-everything whose client declared no capabilities."""
    yield from _start(server_everything_argv, tmp_path_factory.mktemp("home"), {})


@pytest.fixture(scope="module")
def everything_full_caps(
    server_everything_argv: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StdioDriver]:
    """A running, initialized server-everything whose client declared `FULL_CLIENT_CAPABILITIES`."""
    yield from _start(
        server_everything_argv, tmp_path_factory.mktemp("home"), FULL_CLIENT_CAPABILITIES
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Report how long the npm install took (cold) or the cache check took (warm)."""
    if _install_report:
        report = _install_report
        terminalreporter.write_line(
            f"live: {PACKAGE}@{VERSION} {report['how']} in {report['seconds']:.2f} s "
            f"({report['path']})"
        )
