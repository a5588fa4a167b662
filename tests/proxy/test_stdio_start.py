"""What `conduit-mcp proxy -- SERVER` loads before it relays its first line: the stdio relay to
a child server reads and writes plain JSON-RPC messages, so it starts without the MCP SDK.

`import mcp` loads the SDK's client and server whole (uvicorn, starlette, httpx2: about half a
second of CPU on a quiet machine, more than the rest of the proxy's start); the SDK's streams
are needed only with `--upstream URL` or `--listen`. `import mcp_types` (the SDK's models of
every revision, ~0.3 s of CPU) is needed by the guard's SDK check of a listing or a result,
never by `initialize`. Speed is measured by
bench/proxy_start.py (docs/performance.md); this counts modules, not time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import proxy_argv

#: A server that answers `initialize`, then waits for the end of its input.
SERVER = r"""
import json, sys
line = sys.stdin.readline()
print(json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "serverInfo": {"name": "s", "version": "1"}}}), flush=True)
sys.stdin.read()
"""

#: `conduit-mcp` (argv after the probe) with the relay's `start` wrapped: it prints which SDK
#: modules (`mcp`, and `mcp_types`, its models) and which of typer and pydantic the process
#: holds when the relay starts, just before the first line is relayed.
PROBE = r"""
import sys
from conduit_mcp.proxy.stdio import _relay

started = _relay.Relay.start

def start(self, *args, **kwargs):
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))
    print("SDK modules at the relay's start:", loaded, file=sys.stderr, flush=True)
    parsers = sorted(m for m in sys.modules if m.split(".")[0] in ("typer", "pydantic"))
    print("typer and pydantic at the relay's start:", parsers, file=sys.stderr, flush=True)
    return started(self, *args, **kwargs)

_relay.Relay.start = start
sys.argv = sys.argv[1:]
from conduit_mcp.cli import main
main()
"""


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _started(*options: str) -> list[str]:
    """The probe's stderr lines for a proxy started with `options`; the session answered."""
    argv = [*proxy_argv("start", *options), "--", sys.executable, "-c", SERVER]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "s"
    return done.stderr.splitlines()


def test_the_stdio_relay_to_a_child_server_starts_without_the_sdk() -> None:
    """conduit-defined (issue 33 item 4): up to the relay's start, the proxy process has
    loaded no module of the `mcp` package nor of `mcp_types` (the guard's SDK check imports
    its models on the first check that needs them: ~70 % of the start's CPU before); the
    session then works (initialize answered). The same with an option only typer reads."""
    assert "SDK modules at the relay's start: []" in _started("--quiet")
    assert "SDK modules at the relay's start: []" in _started("--quiet", "--new", "hold")


def test_a_wrapped_server_starts_without_typer_or_pydantic(tmp_path: Path) -> None:
    """conduit-defined (issue 33 item 4): the command line `wrap` writes (`--server-id`,
    `--pins`, `--quiet`, `--`) is read without typer, and nothing up to the relay's start
    imports pydantic (typer built a pydantic adapter per option: about half of the start's
    CPU once the SDK's models were deferred); another option still goes through typer."""
    lines = _started("--pins", str(tmp_path / "pins.db"), "--quiet")
    assert "typer and pydantic at the relay's start: []" in lines
    (typed,) = [line for line in _started("--new", "hold") if line.startswith("typer and")]
    assert "'typer'" in typed
