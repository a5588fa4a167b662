"""Transparency oracle: the official conformance suite's server scenarios
(`@modelcontextprotocol/conformance` 0.2.0-alpha.12, `server --spec-version 2025-11-25`) run
against server-everything over Streamable HTTP directly (its own `streamableHttp` mode) and
through `conduit-mcp proxy --listen` (server-everything over stdio behind it) give the same
verdict for every check, except the ones listed in `DIFFERENCES`, each with its reason, and
those in `EITHER`, whose verdict through the proxy is one of two the spec allows.

server-everything does not serve 2026-07-28 (its SDK is 1.32.2), so that version is no oracle.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.client.install import InstallError
from tests.conformance.client.runner import install_all
from tests.guard.conftest import free_port, stop, wait_for_port

#: (scenario, check) -> (status directly, status through the proxy), and why they differ.
DIFFERENCES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("server-session-lifecycle", "SessionTerminatedReturns404"): (
        "FAILURE",
        "SUCCESS",
        "the proxy's HTTP side is the Python SDK's transport, which answers 404 for a session "
        "ended by DELETE (spec 2025-11-25 basic/transports 'Session Management'); "
        "server-everything's own HTTP mode answers 400",
    ),
    ("dns-rebinding-protection", "DNSRebindingRejected"): (
        "FAILURE",
        "SUCCESS",
        "the proxy checks Host and Origin before anything starts (spec 'Security Warning'); "
        "server-everything's own HTTP mode accepts any",
    ),
    ("tools-call-simple-text", "ToolsCallSimpleText"): (
        "SUCCESS",
        "FAILURE",
        "the scenario calls test_simple_text, which server-everything does not have: it "
        "answers an isError result, the proxy refuses the unlisted tool with the spec's "
        "unknown-tool protocol error -32602 (server/tools 'Error Handling'); the check accepts "
        "only the first",
    ),
    ("tools-call-error", "ToolsCallError"): (
        "SUCCESS",
        "FAILURE",
        "as tools-call-simple-text: test_error_handling is not a tool of server-everything",
    ),
}

#: (scenario, check) -> the verdicts through the proxy either of which stands, and why.
EITHER: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("server-sse-multiple-streams", "ServerSSEStreamsFunctional"): (
        frozenset({"SUCCESS", "INFO"}),
        "the proxy answers a session's request that nothing precedes with one JSON object "
        "(listen/_lean.py; spec 2025-11-25 basic/transports 'Sending Messages to the Server': "
        "application/json or text/event-stream, the client MUST support both): the check "
        "reports INFO, 'SSE streaming is optional', when all three concurrent tools/list are "
        "answered so, and checks the streams (SUCCESS) when one of server-everything's "
        "periodic notifications came first and made that answer an event stream",
    ),
}


def _verdicts(node: Path, suite: Path, url: str, out: Path) -> dict[tuple[str, str], str]:
    done = subprocess.run(
        [
            str(node),
            str(suite),
            "server",
            "--url",
            url,
            "--spec-version",
            "2025-11-25",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    verdicts: dict[tuple[str, str], str] = {}
    for found in out.glob("server-*/checks.json"):
        # <scenario>-<ISO timestamp with dashes>, e.g. server-ping-2026-12-01T11-12-18-643Z
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T.*$", "", found.parent.name.removeprefix("server-"))
        checks: list[dict[str, Any]] = json.loads(found.read_text(encoding="utf-8"))
        for check in checks:
            verdicts[(scenario, str(check["name"]))] = str(check["status"])
    assert verdicts, done.stdout + done.stderr
    return verdicts


@pytest.mark.conformance
@pytest.mark.live
def test_server_scenarios_give_the_same_verdicts_through_the_proxy(
    server_everything_argv: list[str], listening_proxy: Any, tmp_path: Path
) -> None:
    try:
        node, suite = install_all()
    except InstallError as exc:
        pytest.fail(f"conformance suite unavailable: {exc}", pytrace=False)
    port = free_port()
    direct_server = subprocess.Popen(
        [server_everything_argv[0], server_everything_argv[1], "streamableHttp"],
        env={**os.environ, "PORT": str(port)},  # server-everything's HTTP port setting
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, direct_server)
        url = listening_proxy("everything", "--quiet", "--", *server_everything_argv)
        with ThreadPoolExecutor(max_workers=2) as pool:  # both runs at once: half the wait
            direct_run = pool.submit(
                _verdicts, node.path, suite.path, f"http://127.0.0.1:{port}/mcp", tmp_path / "d"
            )
            proxied_run = pool.submit(_verdicts, node.path, suite.path, url, tmp_path / "p")
            direct, proxied = direct_run.result(), proxied_run.result()
    finally:
        stop(direct_server)
    assert set(proxied) == set(direct)
    differing = {key: (direct[key], proxied[key]) for key in direct if direct[key] != proxied[key]}
    for key, (allowed, _) in EITHER.items():
        assert proxied.get(key) in allowed, (key, proxied.get(key))
        differing.pop(key, None)
    assert differing == {key: value[:2] for key, value in DIFFERENCES.items()}
