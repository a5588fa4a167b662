"""Fixtures for the guard tests: the hostile server (stdio and Streamable HTTP), its log of
received messages, and server-everything (installed by tests/live/conftest.py's helpers)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

from tests.forkserver import Forked, spawn

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "hostile_server.py"
SDK_SERVER = HERE / "sdk_server.py"
#: A server or proxy process the tests start: a real one or a child of tests/forkserver.py.
Process = subprocess.Popen[bytes] | Forked


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Hostile:
    """One hostile-server scenario: how to start it and what it received."""

    def __init__(self, scenario: str, log: Path, extra: tuple[str, ...] = ()) -> None:
        self.scenario = scenario
        self.log = log
        self.extra = extra  # more command-line arguments (e.g. --id-style lead)

    def stdio(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=[str(HOSTILE), "--scenario", self.scenario, "--log", str(self.log), *self.extra],
        )

    def received(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def calls(self) -> list[tuple[str, Any]]:
        """(name, arguments) of every tools/call the server received."""
        return [
            (m["params"]["name"], m["params"].get("arguments"))
            for m in self.received()
            if m.get("method") == "tools/call"
        ]


@pytest.fixture
def hostile(tmp_path: Path) -> Callable[[str], Hostile]:
    def make(scenario: str, *extra: str) -> Hostile:
        return Hostile(scenario, tmp_path / f"{scenario}.jsonl", extra)

    return make


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: Process, timeout: float = 300.0) -> None:
    """Return once `port` accepts a connection; raise when `process` exits first. `timeout`
    only bounds a server that neither listens nor exits (a hang): it is no verdict, and 20 s
    was one, a server importing the SDK under a CPU load of 8 took longer to listen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {port} after {timeout} s")


def start_http(argv: list[str], port: int) -> Process:
    """Start an HTTP server process (`sys.executable SCRIPT ...`, forked from the warm
    interpreter of tests/forkserver.py) and return once `port` accepts a connection."""
    process = spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
    except BaseException:
        stop(process)
        raise
    return process


def stop(process: Process) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def hostile_http(tmp_path: Path) -> Iterator[Callable[[str], tuple[str, Hostile]]]:
    """Start the hostile server over HTTP on a free loopback port: returns (url, Hostile)."""
    started: list[subprocess.Popen[bytes]] = []

    def make(scenario: str) -> tuple[str, Hostile]:
        server = Hostile(scenario, tmp_path / f"{scenario}-http.jsonl")
        port = free_port()
        argv = [sys.executable, str(HOSTILE), "--scenario", scenario, "--log", str(server.log)]
        started.append(start_http([*argv, "--http", str(port)], port))
        return f"http://127.0.0.1:{port}/mcp", server

    yield make
    for process in started:
        stop(process)


@pytest.fixture
def sdk_server_http(tmp_path: Path) -> Iterator[str]:
    """The small SDK-written server over Streamable HTTP on a free loopback port: its URL."""
    port = free_port()
    process = start_http([sys.executable, str(SDK_SERVER), "--http", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(process)


@pytest.fixture(scope="session")
def server_everything_argv() -> list[str]:
    from tests.live.conftest import install_server_everything, require_node

    node, npm = require_node()
    entry, _, _ = install_server_everything(npm)
    return [node, str(entry), "stdio"]


def changed_keys(changes: tuple[object, ...]) -> set[str]:
    """The top-level tool keys a `tool_changed` event's `changes` name, whichever form they
    take: key names (the guard's own diff) or field changes with an RFC 6901 `path` (from a
    `PinStore.changes` that has them, issue 11)."""
    keys: set[str] = set()
    for change in changes:
        if isinstance(change, str):
            keys.add(change)
        else:
            path = str(getattr(change, "path", ""))
            keys.add(path.split("/")[1] if path.startswith("/") else path)
    return keys
