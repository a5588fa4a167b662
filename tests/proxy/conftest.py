"""Fixtures for the proxy tests: the official TypeScript SDK client (npm, pinned, installed under
`.cache/npm` once), the proxy's command line, and the guard tests' hostile server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.client.install import InstallError, install_npm_packages
from tests.forkserver import launched, spawn
from tests.guard.conftest import HOSTILE, Hostile, Process
from tests.guard.conftest import server_everything_argv as server_everything_argv
from tests.live.conftest import NPM_CACHE, require_node

HERE = Path(__file__).resolve().parent
TS_CLIENT = HERE / "ts_client.mjs"
#: The console script of the conduit-mcp under test (installed in this interpreter's venv).
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
#: The TypeScript SDK the client runs on: the version server-everything's pin uses
#: (tests/live/conftest.py PINS), so one npm download serves both.
TS_SDK_PINS = {"@modelcontextprotocol/sdk": "1.32.2"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def ts_sdk() -> tuple[str, Path]:
    """(node, the install prefix holding node_modules/@modelcontextprotocol/sdk)."""
    node, npm = require_node()

    def entry(prefix: Path) -> Path:
        return prefix / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"

    try:
        done = install_npm_packages(npm, NPM_CACHE, "ts-sdk-1.32.2", TS_SDK_PINS, entry)
    except InstallError as exc:
        pytest.fail(str(exc), pytrace=False)
    return node, done.path.parents[3]


def proxy_argv(server_id: str, *options: str) -> list[str]:
    """The proxy's command line up to `--` (run with this interpreter's conduit_mcp)."""
    return [str(CONDUIT), "proxy", "--server-id", server_id, *options]


def run_ts_client(
    ts_sdk: tuple[str, Path],
    plan: dict[str, Any],
    timeout: float = 60.0,
    env: dict[str, str] | None = None,
    stderr: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Run the TypeScript client on `plan`; its JSON lines, parsed (fails on a non-zero exit).

    `env` is added to the client's environment (the stdio servers it starts inherit it); the
    client's stderr (with theirs) is appended to `stderr` when given."""
    node, prefix = ts_sdk
    env = {**os.environ, **(env or {}), "CONDUIT_TS_SDK": str(prefix)}
    done = subprocess.run(
        [node, str(TS_CLIENT), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if stderr is not None:
        stderr.append(done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture
def hostile(tmp_path: Path) -> Callable[..., Hostile]:
    def make(scenario: str, *extra: str) -> Hostile:
        return Hostile(scenario, tmp_path / f"{scenario}.jsonl", extra)

    return make


def hostile_argv(server: Hostile) -> list[str]:
    return [
        sys.executable,
        str(HOSTILE),
        "--scenario",
        server.scenario,
        "--log",
        str(server.log),
        "--discover",  # the listener asks a server process server/discover first
        *server.extra,
    ]


@pytest.fixture
def sdk_http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """tests/proxy/http_server.py (the Python SDK over Streamable HTTP) on a free loopback port:
    (its URL, the log of the headers it received)."""
    from tests.guard.conftest import free_port, start_http, stop

    port = free_port()
    log = tmp_path / "http-server.jsonl"
    argv = [sys.executable, str(HERE / "http_server.py"), "--port", str(port), "--log", str(log)]
    process = start_http(argv, port)
    yield f"http://127.0.0.1:{port}/mcp", log
    stop(process)


def header_log(log: Path) -> list[dict[str, Any]]:
    """The requests `http_server.py` received: method, path, headers."""
    return [json.loads(line) for line in log.read_text().splitlines() if line]


@pytest.fixture
def listening_proxy(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start `conduit-mcp proxy --listen 127.0.0.1:PORT ...` (arguments after the server id);
    returns its MCP URL. The proxy's log (JSON lines) is tmp_path/proxy-PORT.jsonl."""
    from tests.guard.conftest import free_port, wait_for_port

    started: list[Process] = []

    def start(server_id: str, *args: str) -> str:
        port = free_port()
        log = tmp_path / f"proxy-{port}.jsonl"
        if "--" in args:  # the server each session starts: forked too (tests/forklaunch.py)
            cut = args.index("--") + 1
            args = (*args[:cut], *launched(list(args[cut:])))
        argv = [*proxy_argv(server_id, "--log", str(log), "--listen", f"127.0.0.1:{port}"), *args]
        # Forked from a warm interpreter (tests/forkserver.py): the SDK's import is ~2 s of CPU.
        process = spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(process)
        wait_for_port(port, process)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
