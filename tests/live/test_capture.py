"""Live: `conduit-mcp capture` against the real `@modelcontextprotocol/server-everything`
2026.8.31 over stdio, run as an operator runs it (the console script in a subprocess).

Expected values come from the corpus capture of the same server version
(tests/fixtures/corpus/tools/server-everything) and from the version the server serves
(`conftest.PROTOCOL_VERSION`), never from what the command printed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.forkserver import CONDUIT

from .conftest import PROTOCOL_VERSION

# One worker runs the module (make test: --dist loadgroup): its module fixtures (a capture of
# server-everything, its HTTP mode) are then made once, not once per xdist worker.
pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live-capture")]

CAPTURED = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "corpus"
    / "tools"
    / "server-everything"
    / "tools-list--none-client-caps.json"
)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return forkserver.run([str(CONDUIT), *args], text=True, timeout=180, cwd=cwd)


@pytest.fixture(scope="module")
def capture_file(
    server_everything_argv: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    home = tmp_path_factory.mktemp("home")
    out = home / "everything.json"
    done = _cli(
        *["capture", "--output", str(out), "--timeout", "120"],
        # the corpus capture's environment (SOURCES.md "server-everything"), HOME a temp dir
        *["--env", f"HOME={home}", "--env", "GZIP_ALLOWED_DOMAINS=example.invalid"],
        *["--env", "GZIP_MAX_FETCH_TIME_MILLIS=1000", "--env", "NODE_NO_WARNINGS=1"],
        "--",
        *server_everything_argv,
        cwd=home,
    )
    assert done.returncode == 0, done.stderr
    assert "captured 1 page(s), 13 tool(s)" in done.stderr
    return out


def test_capture_records_the_negotiated_version_the_transport_and_the_raw_page(
    capture_file: Path, server_everything_argv: list[str]
) -> None:
    """Spec-mandated (2025-11-25 basic/lifecycle "Version Negotiation"): the SDK asks for its
    newest handshake version, which server-everything 2026.8.31 serves, so the server answers
    with it; the page is, as JSON, the corpus capture of the same server without client
    capabilities (the SDK's ClientSession declares none without callbacks)."""
    document: dict[str, Any] = json.loads(capture_file.read_text(encoding="utf-8"))
    assert document["format"] == "conduit-mcp/capture" and document["version"] == 1
    assert (document["protocol_version"], document["transport"]) == (PROTOCOL_VERSION, "stdio")
    assert document["server"] == {"command": server_everything_argv}
    # dist/server/index.js: new McpServer({name: "mcp-servers/everything", ...})
    assert document["server_info"]["name"] == "mcp-servers/everything"
    assert document["pages"] == [json.loads(CAPTURED.read_text(encoding="utf-8"))]


def test_inspect_and_pins_read_the_version_and_transport_from_the_capture(
    capture_file: Path, tmp_path: Path
) -> None:
    """conduit-defined (the capture's purpose): without options, inspect reads the page at the
    recorded version over stdio, and pins approve records that version with each pin."""
    done = _cli("inspect", "--json", str(capture_file), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert (report["protocol_version"], report["transport"]) == (PROTOCOL_VERSION, "stdio")
    expected = json.loads(CAPTURED.read_text(encoding="utf-8"))["tools"]
    assert [t["name"] for t in report["tools"]] == [t["name"] for t in expected]
    store = str(tmp_path / "pins.db")
    done = _cli(
        *["pins", "approve", str(capture_file), "--store", store, "--server-id", "everything"],
        *["--approver", "alice@example.com"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    done = _cli("pins", "list", "--store", store, "--json", cwd=tmp_path)
    pins = json.loads(done.stdout)
    assert len(pins) == len(expected)
    assert {p["protocol_version"] for p in pins} == {PROTOCOL_VERSION}
    done = _cli(
        *["pins", "check", str(capture_file), "--store", store, "--server-id", "everything"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def everything_http(
    server_everything_argv: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """server-everything's Streamable HTTP mode (`index.js streamableHttp`, dist/transports/
    streamableHttp.js: `app.post("/mcp")` on `PORT`); yields the endpoint URL."""
    home = tmp_path_factory.mktemp("home")
    port = _free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PORT": str(port)}
    argv = [*server_everything_argv[:-1], "streamableHttp"]
    with subprocess.Popen(
        argv, cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            assert server.stderr is not None
            # Its stderr says "MCP Streamable HTTP Server listening on port N" once it listens
            # ("Failed to start: ..." and exit otherwise: the loop then ends at EOF).
            said = []
            for line in server.stderr:
                said.append(line)
                if "listening on port" in line or "Failed" in line:
                    break
            assert "listening on port" in "".join(said), said
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_capture_over_streamable_http_records_that_transport(
    everything_http: str, tmp_path: Path
) -> None:
    """Spec-mandated (2025-11-25 basic/transports "Streamable HTTP"; lifecycle "Version
    Negotiation"): the same server over HTTP negotiates the same version, lists the same
    tools, and the capture says `streamable-http`, which inspect then reads it under."""
    out = tmp_path / "http.json"
    done = _cli(
        "capture", "--url", everything_http, "-o", str(out), "--timeout", "60", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert (document["protocol_version"], document["transport"]) == (
        PROTOCOL_VERSION,
        "streamable-http",
    )
    assert document["server"] == {"url": everything_http, "headers": []}
    assert document["pages"] == [json.loads(CAPTURED.read_text(encoding="utf-8"))]
    done = _cli("inspect", "--json", str(out), cwd=tmp_path)
    (report,) = json.loads(done.stdout)
    assert report["transport"] == "streamable-http"
